/* SPDX-License-Identifier: GPL-2.0-only */
/* jsamplectl serve: a local web view of jsampled's profiles (libmicrohttpd).
 * It reaches jsampled only through the query socket, so it sees what the
 * user running it may see; it listens on loopback unless told otherwise,
 * and a random token in the first URL (then a cookie) keeps other local
 * users out. */
#ifndef JSAMPLECTL_SERVE_H
#define JSAMPLECTL_SERVE_H

/* Serves until SIGINT/SIGTERM. listen: "ADDR:PORT" (IPv4). Exit status as
 * jsamplectl's. */
int serve_run(const char *socket_path, const char *listen);

#endif
