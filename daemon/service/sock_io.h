/* SPDX-License-Identifier: GPL-2.0-only */
/* Non-blocking socket output shared by the agent links and query
 * connections. */
#ifndef JSAMPLED_SOCK_IO_H
#define JSAMPLED_SOCK_IO_H

#include <errno.h>
#include <stddef.h>
#include <sys/socket.h>

#include "userspace/common/wire.h"

/* Sends w's bytes from *off on. Returns 1 when all are sent, 0 when the
 * socket is full (wait for EPOLLOUT), -1 on an error. */
static inline int send_pending(int fd, const struct wbuf *w, size_t *off)
{
	while (*off < w->len) {
		ssize_t n = send(fd, w->data + *off, w->len - *off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n < 0)
			return -1;
		*off += (size_t)n;
	}
	return 1;
}

#endif
