/* SPDX-License-Identifier: GPL-2.0-only */
/* The daemon's two listening sockets and the descriptor budget for their
 * connections. */
#ifndef JSAMPLED_LISTEN_SOCKETS_H
#define JSAMPLED_LISTEN_SOCKETS_H

#include <stdbool.h>
#include <sys/types.h>

/* A non-blocking listening Unix socket at path (its directory made if
 * missing, a stale socket replaced), created with the given mode. */
int listen_unix(const char *path, mode_t mode);
/* The query socket: handed over by systemd (jsampled.socket, which sets
 * its owner and mode; *activated is then true), or made here as
 * root:<group> 0660. */
int open_query_socket(const char *path, const char *group, bool *activated);
/* Raises the soft descriptor limit to at most `limit`. */
void raise_fd_limit(unsigned long limit);

#endif
