/* SPDX-License-Identifier: GPL-2.0-only */
/* Names of the x86-64 system calls threads wait in: an off-CPU sample's
 * innermost frame (bpf/sampler.h, struct js_wait). */
#ifndef JSAMPLED_SYSCALL_NAMES_H
#define JSAMPLED_SYSCALL_NAMES_H

#include <stddef.h>
#include <stdint.h>

/* "futex", "epoll_wait", ...; NULL for a number not in the table. */
const char *syscall_name(uint32_t nr);

/* The frame name of system call nr: "sys_futex", or "sys_<nr>". */
void syscall_frame_name(uint32_t nr, char *out, size_t len);

#endif
