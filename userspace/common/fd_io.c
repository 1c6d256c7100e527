/* SPDX-License-Identifier: GPL-2.0-only */
#include "fd_io.h"

#include <errno.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

bool fd_pread_all(int fd, void *buf, size_t n, uint64_t off)
{
	uint8_t *b = buf;
	size_t got = 0;

	if (off > (uint64_t)INT64_MAX - n)
		return false;
	while (got < n) {
		ssize_t r = pread(fd, b + got, n - got, (off_t)(off + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		got += (size_t)r;
	}
	return true;
}

ssize_t fd_read_upto(int fd, void *buf, size_t n)
{
	uint8_t *b = buf;
	size_t got = 0;

	while (got < n) {
		ssize_t r = read(fd, b + got, n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return got ? (ssize_t)got : -1;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

int sock_send_all(int fd, const void *buf, size_t n)
{
	const uint8_t *b = buf;

	while (n > 0) {
		ssize_t w = send(fd, b, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		b += w;
		n -= (size_t)w;
	}
	return 0;
}
