/* Blocking whole-buffer I/O on file descriptors, retried across EINTR and
 * short transfers: shared by the daemon (/proc, the state file, HotSpot's
 * attach socket) and the agent (its link to the daemon). */
#ifndef JSAMPLED_FD_IO_H
#define JSAMPLED_FD_IO_H

#include <stddef.h>
#include <sys/types.h>

/* Reads until n bytes or end of file. Returns the bytes read, or -1 when
 * an error came before any byte. */
ssize_t fd_read_upto(int fd, void *buf, size_t n);

/* Sends all n bytes on a socket, without SIGPIPE when the peer has gone.
 * Returns 0, or -1 on an error. */
int sock_send_all(int fd, const void *buf, size_t n);

#endif
