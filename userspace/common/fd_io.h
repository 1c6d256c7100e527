/* SPDX-License-Identifier: GPL-2.0-only */
/* Blocking whole-buffer I/O on file descriptors, retried across EINTR and
 * short transfers: shared by the daemon (/proc, the state file, HotSpot's
 * attach socket) and the agent (its link to the daemon). */
#ifndef JSAMPLED_FD_IO_H
#define JSAMPLED_FD_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Reads until n bytes or end of file. Returns the bytes read, or -1 when
 * an error came before any byte. */
ssize_t fd_read_upto(int fd, void *buf, size_t n);

/* Reads exactly n bytes at offset off (retried across EINTR and short
 * reads). true, or false if fewer are there or an error came. */
bool fd_pread_all(int fd, void *buf, size_t n, uint64_t off);

/* Sends all n bytes on a socket, without SIGPIPE when the peer has gone.
 * Returns 0, or -1 on an error. */
int sock_send_all(int fd, const void *buf, size_t n);

#endif
