/* SPDX-License-Identifier: GPL-2.0-only */
/* What `jsamplectl serve` answers a request with, decided from its URL and
 * query arguments alone (no socket, no HTTP library: the fuzzer drives it):
 * which page, or which request line it sends jsampled for the browser.
 * Only pids of digits and windows that parse reach a request line, so no
 * URL can put another request, or a second line, on jsampled's socket. */
#ifndef JSAMPLECTL_SERVE_ROUTES_H
#define JSAMPLECTL_SERVE_ROUTES_H

#include <stddef.h>
#include <time.h>

#include "userspace/profile/thread_pools.h"

/* The request's URL path and the query arguments that matter (NULL:
 * absent). */
struct serve_query {
	const char *url;
	const char *since, *from, *until; /* the time window */
	const char *base, *target;        /* a diff's sides: PID[@FROM..UNTIL] */
	const char *type;                 /* the profile type: cpu, offcpu, wall */
	const char *thread;               /* the thread pools shown (thread_pools.h) */
	time_t now;
};

enum serve_route_kind {
	SERVE_INDEX,       /* the list page */
	SERVE_FLAME_PAGE,  /* the flame-graph page of pid (from "cct PID page" + window) */
	SERVE_PROXY,       /* request to jsampled, its answer as type (a download if filename) */
	SERVE_BAD_REQUEST, /* why in error */
	SERVE_NOT_FOUND,
};

struct serve_route {
	enum serve_route_kind kind;
	char request[720];
	const char *type;
	char filename[64];
	char pid[16];
	char window[96]; /* " FROM..UNTIL" or "" */
	char ptype[16];  /* the profile type: " offcpu", " wall" or "" (cpu) */
	char pthread[THREAD_SELECTOR_WORD_MAX]; /* " thread=SELECTOR" or "" */
	const char *error;
};

/* Fills r for q. */
void serve_route(const struct serve_query *q, struct serve_route *r);

#endif
