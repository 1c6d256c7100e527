/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The query socket: one request line per connection, answered with "OK"
 * or "ERROR <reason>" on the first line and the body after it.
 *
 *   list [json]                        profiled processes and sample counts
 *   cct <pid> [<format>] [<window>] [<view>]
 *                                      the process's calling-context tree
 *   diff <base> <target> [html|text|page]
 *                                      two profiles compared
 *   profiles <window> [<view>]         every visible process's pprof of the window
 *   stats [<pid>] [json]               counters, failure reasons
 *   sampling on|off                    (root) pause or resume all sampling
 *
 * Formats: tree, collapsed, json, pprof, html, svg, page (cct_format.h).
 * Views: java, mixed, carrier, mixed,carrier (cct_view.h).
 * A window is FROM..UNTIL in wall-clock seconds since the epoch, either end
 * may be left out ("1732380000.." is since then); without one, the whole
 * profile. A diff side is <pid> or <pid>@<window>.
 *
 * "profiles" answers, after "OK", one "<pid> <length>" line and that many
 * bytes of pprof for each process with samples in the window, then "end":
 * the exporter's one query (one render) per interval for all processes.
 *
 * A client sees only processes of its own uid unless it is root or its
 * primary group is --readers-group (checked with SO_PEERCRED); requests
 * longer than a line are refused.
 */
#ifndef JSAMPLED_QUERY_SERVER_H
#define JSAMPLED_QUERY_SERVER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "userspace/common/wire.h"

#define QUERY_MAX_REQUEST 1024

struct daemon;

/* One profile of a request: a process, and a time window or all of it. */
struct render_side {
	pid_t pid;
	bool windowed;
	int64_t from_s, until_s;
};

/* Who asks: the peer's uid, and whether its group may read every process
 * (--readers-group; it still may not control sampling). */
struct viewer {
	uid_t uid;
	bool reads_all;
	int conn_fd; /* the client's socket: its peer's credentials (-1: none) */
};

/* A CCT, a diff or every profile of a window, to render away from the
 * event loop. */
/* The longest thread selector of a cct request ("thread=GLOB"). */
#define QUERY_THREADS_MAX 128

struct render_request {
	bool diff;
	int format; /* enum cct_format */
	struct render_side side[2]; /* cct: side[0]; diff: base, target; profiles: side[0]'s window */
	bool every;                 /* profiles: each process who may see, as pprof */
	int view;                   /* cct_view.h VIEW_* frame flags; -1 each process's default */
	unsigned type;              /* the profile type's VIEW_* flag: 0 cpu, VIEW_OFFCPU, VIEW_WALL */
	bool by_thread;             /* VIEW_THREADS: paths start at their thread pool */
	char threads[QUERY_THREADS_MAX]; /* the thread pools shown (thread_pools.h); "": all */
	struct viewer who;
};

struct query_conn {
	int fd;
	uid_t uid;
	gid_t gid;
	uint64_t opened_ns;
	char in[QUERY_MAX_REQUEST + 1];
	size_t in_len;
	struct wbuf out;
	size_t out_off;
	bool answered;
	bool render_waiting; /* a cct request, waiting for a render slot */
	struct render_request render;
};

struct query_conn *query_conn_new(int fd, uint64_t now_ns);
void query_conn_free(struct query_conn *q);
/* Reads the request and, once whole, prepares the answer. -1: close now. */
int query_conn_on_readable(struct query_conn *q, struct daemon *d);
/* Writes the answer; 1 when all is sent (close), 0 to wait, -1 on error. */
int query_conn_flush(struct query_conn *q);

enum { QUERY_ANSWERED, QUERY_DEFERRED };

/* Answers one request line as client v into out (no I/O; testable).
 * With defer, a cct request that is valid is not rendered but described in
 * *defer (QUERY_DEFERRED). */
int query_dispatch(struct daemon *d, const struct viewer *v, const char *line, struct wbuf *out, struct render_request *defer);
void query_answer(struct daemon *d, const struct viewer *v, const char *line, struct wbuf *out);
/* Renders a request's answer ("OK" and the body, or an ERROR line) into
 * out, written to fd as it grows when fd >= 0. -1 on an error after "OK". */
int query_render(struct daemon *d, const struct render_request *r, struct wbuf *out, int fd);

#endif
