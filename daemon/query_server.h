/*
 * The query socket: one request line per connection, answered with "OK"
 * or "ERROR <reason>" on the first line and the body after it.
 *
 *   list                               profiled processes and sample counts
 *   cct <pid> [tree|collapsed|json]    the process's calling-context tree
 *   stats [<pid>] [json]               counters, failure reasons
 *
 * A client sees only processes of its own uid unless it is root (checked
 * with SO_PEERCRED); requests longer than a line are refused.
 */
#ifndef JSAMPLED_QUERY_SERVER_H
#define JSAMPLED_QUERY_SERVER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../userspace/common/wire.h"

#define QUERY_MAX_REQUEST 1024

struct daemon;

/* A CCT to render away from the event loop. */
struct render_request {
	pid_t pid;
	int format; /* enum cct_format */
};

struct query_conn {
	int fd;
	uid_t uid;
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

/* Answers one request line as client uid into out (no I/O; testable).
 * With defer, a cct request that is valid is not rendered but described in
 * *defer (QUERY_DEFERRED). */
int query_dispatch(struct daemon *d, uid_t uid, const char *line, struct wbuf *out, struct render_request *defer);
void query_answer(struct daemon *d, uid_t uid, const char *line, struct wbuf *out);

#endif
