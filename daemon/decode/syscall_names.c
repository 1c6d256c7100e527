/* SPDX-License-Identifier: GPL-2.0-only */
#include "syscall_names.h"

#include <stdio.h>

/* arch/x86/entry/syscalls/syscall_64.tbl: the calls a thread blocks in,
 * and the common ones it may be preempted in. */
static const char *const names[] = {
	[0] = "read",
	[1] = "write",
	[3] = "close",
	[7] = "poll",
	[9] = "mmap",
	[10] = "mprotect",
	[11] = "munmap",
	[16] = "ioctl",
	[17] = "pread64",
	[18] = "pwrite64",
	[19] = "readv",
	[20] = "writev",
	[23] = "select",
	[24] = "sched_yield",
	[26] = "msync",
	[28] = "madvise",
	[34] = "pause",
	[35] = "nanosleep",
	[40] = "sendfile",
	[42] = "connect",
	[43] = "accept",
	[44] = "sendto",
	[45] = "recvfrom",
	[46] = "sendmsg",
	[47] = "recvmsg",
	[56] = "clone",
	[57] = "fork",
	[59] = "execve",
	[61] = "wait4",
	[72] = "fcntl",
	[73] = "flock",
	[74] = "fsync",
	[75] = "fdatasync",
	[82] = "rename",
	[87] = "unlink",
	[130] = "rt_sigsuspend",
	[128] = "rt_sigtimedwait",
	[202] = "futex",
	[230] = "clock_nanosleep",
	[232] = "epoll_wait",
	[247] = "waitid",
	[257] = "openat",
	[270] = "pselect6",
	[271] = "ppoll",
	[281] = "epoll_pwait",
	[288] = "accept4",
	[299] = "recvmmsg",
	[307] = "sendmmsg",
	[426] = "io_uring_enter",
	[435] = "clone3",
	[441] = "epoll_pwait2",
	[449] = "futex_waitv",
};

const char *syscall_name(uint32_t nr)
{
	return nr < sizeof(names) / sizeof(names[0]) ? names[nr] : NULL;
}

void syscall_frame_name(uint32_t nr, char *out, size_t len)
{
	const char *n = syscall_name(nr);

	if (n)
		snprintf(out, len, "sys_%s", n);
	else
		snprintf(out, len, "sys_%u", nr);
}
