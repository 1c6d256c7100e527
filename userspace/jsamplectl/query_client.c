/* SPDX-License-Identifier: GPL-2.0-only */
#include "query_client.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* A sink for the body: a file or a growing buffer. */
struct sink {
	FILE *file;
	char *buf;
	size_t len, cap;
	int oom;
};

static void sink_put(struct sink *s, const char *p, size_t n)
{
	if (s->file) {
		fwrite(p, 1, n, s->file);
		return;
	}
	if (s->len + n + 1 > s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 65536;
		while (cap < s->len + n + 1)
			cap *= 2;
		char *b = realloc(s->buf, cap);
		if (!b) {
			s->oom = 1;
			return;
		}
		s->buf = b;
		s->cap = cap;
	}
	memcpy(s->buf + s->len, p, n);
	s->len += n;
	s->buf[s->len] = 0;
}

static int query(const char *socket_path, const char *request, struct sink *sink, char *err, size_t errlen)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	char buf[65536], line[1100];
	size_t got = 0;
	int fd, status = -1;

	if (strlen(socket_path) >= sizeof(addr.sun_path)) {
		snprintf(err, errlen, "socket path too long");
		return QUERY_UNREACHABLE;
	}
	strcpy(addr.sun_path, socket_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
		snprintf(err, errlen, "cannot reach jsampled at %s: %s", socket_path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return QUERY_UNREACHABLE;
	}
	snprintf(line, sizeof(line), "%s\n", request);
	if (send(fd, line, strlen(line), MSG_NOSIGNAL) != (ssize_t)strlen(line)) {
		snprintf(err, errlen, "cannot send the request: %s", strerror(errno));
		close(fd);
		return QUERY_UNREACHABLE;
	}
	/* The first line is the status; the rest is the body. */
	for (;;) {
		ssize_t n = read(fd, buf + got, sizeof(buf) - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
		if (status < 0) {
			char *nl = memchr(buf, '\n', got);
			if (!nl && got < sizeof(buf))
				continue;
			if (!nl) {
				snprintf(err, errlen, "malformed answer");
				close(fd);
				return QUERY_UNREACHABLE;
			}
			*nl = 0;
			if (strcmp(buf, "OK") == 0) {
				status = QUERY_OK;
			} else {
				snprintf(err, errlen, "%s", strncmp(buf, "ERROR ", 6) == 0 ? buf + 6 : buf);
				status = QUERY_ERROR;
			}
			size_t rest = got - (size_t)(nl + 1 - buf);
			memmove(buf, nl + 1, rest);
			got = rest;
		}
		if (status == QUERY_OK && got) {
			sink_put(sink, buf, got);
			got = 0;
		} else if (status == QUERY_ERROR) {
			got = 0;
		}
	}
	close(fd);
	if (status < 0) {
		snprintf(err, errlen, "jsampled closed the connection without an answer");
		return QUERY_UNREACHABLE;
	}
	if (sink->oom) {
		snprintf(err, errlen, "out of memory reading the answer");
		return QUERY_UNREACHABLE;
	}
	return status;
}

int query_to_file(const char *socket_path, const char *request, FILE *out, char *err, size_t errlen)
{
	struct sink s = {.file = out};

	return query(socket_path, request, &s, err, errlen);
}

int query_to_memory(const char *socket_path, const char *request, char **body, size_t *len, char *err,
		    size_t errlen)
{
	struct sink s = {0};
	int rc = query(socket_path, request, &s, err, errlen);

	if (rc != QUERY_OK) {
		free(s.buf);
		return rc;
	}
	if (!s.buf)
		s.buf = calloc(1, 1);
	*body = s.buf;
	*len = s.len;
	return s.buf ? QUERY_OK : QUERY_UNREACHABLE;
}
