/* SPDX-License-Identifier: GPL-2.0-only */
#include "safe_read.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

/* process_vm_readv can be blocked by a seccomp filter (containers); then
 * fall back to write(2) into a pipe, which also reports EFAULT. */
static atomic_int vm_readv_broken;

static int pipe_read(uint64_t addr, void *out, size_t n)
{
	static _Thread_local int fds[2] = {-1, -1};
	uint8_t *dst = out;

	if (fds[0] < 0 && pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0)
		return -1;
	while (n > 0) {
		size_t chunk = n > 4096 ? 4096 : n;
		ssize_t w = write(fds[1], (const void *)(uintptr_t)addr, chunk);
		if (w <= 0)
			return -1;
		if (read(fds[0], dst, (size_t)w) != w)
			return -1;
		dst += w;
		addr += (uint64_t)w;
		n -= (size_t)w;
	}
	return 0;
}

int safe_read(uint64_t addr, void *out, size_t n)
{
	if (n == 0)
		return 0;
	if (addr < 4096 || addr + n < addr)
		return -1;
	if (!atomic_load_explicit(&vm_readv_broken, memory_order_relaxed)) {
		struct iovec local = {.iov_base = out, .iov_len = n};
		struct iovec remote = {.iov_base = (void *)(uintptr_t)addr, .iov_len = n};
		ssize_t r = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);

		if (r == (ssize_t)n)
			return 0;
		if (r >= 0 || errno == EFAULT)
			return -1;
		atomic_store(&vm_readv_broken, 1); /* ENOSYS, EPERM: use the pipe */
	}
	return pipe_read(addr, out, n);
}

int safe_read_u64(uint64_t addr, uint64_t *out)
{
	return safe_read(addr, out, sizeof(*out));
}
