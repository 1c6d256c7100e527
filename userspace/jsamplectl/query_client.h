/* SPDX-License-Identifier: GPL-2.0-only */
/* Talking to jsampled's query socket: one request line, an "OK" or
 * "ERROR <reason>" line, then the body. */
#ifndef JSAMPLECTL_QUERY_CLIENT_H
#define JSAMPLECTL_QUERY_CLIENT_H

#include <stddef.h>
#include <stdio.h>

#define DEFAULT_SOCKET "/run/jsampled/jsampled.sock"

enum query_status {
	QUERY_OK = 0,
	QUERY_ERROR = 1,       /* jsampled answered ERROR; the reason is in err */
	QUERY_UNREACHABLE = 3, /* no connection, or no answer */
};

/* Sends request (without its newline) and copies the body to out.
 * Returns enum query_status; err holds the reason otherwise. */
int query_to_file(const char *socket_path, const char *request, FILE *out, char *err, size_t errlen);

/* The same into memory: *body (malloc'd, NUL-terminated) and *len. */
int query_to_memory(const char *socket_path, const char *request, char **body, size_t *len, char *err,
		    size_t errlen);

#endif
