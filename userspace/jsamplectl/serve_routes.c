/* SPDX-License-Identifier: GPL-2.0-only */
#include "serve_routes.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "time_spec.h"
#include "userspace/common/pid_text.h"
#include "userspace/profile/view_names.h"

/* The window of the query, " FROM..UNTIL" (or "" for none). 0, or -1. */
static int window_of(const struct serve_query *q, char *out, size_t outlen)
{
	const char *since = q->since && *q->since ? q->since : NULL;
	char spec[160];

	out[0] = 0;
	if ((!q->from || !*q->from) && (!q->until || !*q->until) && !since)
		return 0;
	snprintf(spec, sizeof(spec), "%s..%s", since ? since : q->from ? q->from : "", q->until ? q->until : "");
	out[0] = ' ';
	return window_spec_parse(spec, q->now, out + 1, outlen - 1);
}

/* A diff side, PID[@FROM..UNTIL], in the query's form. 0, or -1. */
static int diff_side(const char *v, time_t now, char *out, size_t outlen)
{
	const char *at;
	char window[80];
	size_t len;

	if (!v)
		return -1;
	at = strchr(v, '@');
	len = at ? (size_t)(at - v) : strlen(v);
	if (!pid_from_text_n(v, len) || len + 1 >= outlen)
		return -1;
	snprintf(out, outlen, "%.*s", (int)len, v);
	if (!at || !at[1])
		return 0;
	if (window_spec_parse(at + 1, now, window, sizeof(window)) != 0)
		return -1;
	snprintf(out + len, outlen - len, "@%s", window);
	return 0;
}

void serve_route(const struct serve_query *q, struct serve_route *r)
{
	static const struct {
		const char *ext, *format, *type;
	} downloads[] = {
		{".pb.gz", "pprof", "application/octet-stream"},
		{".html", "html", "text/html; charset=utf-8"},
		{".svg", "svg", "image/svg+xml"},
		{".collapsed", "collapsed", "text/plain; charset=utf-8"},
	};
	const char *url = q->url ? q->url : "";
	char b[128], t[128];

	memset(r, 0, sizeof(*r));
	r->kind = SERVE_NOT_FOUND;
	if (window_of(q, r->window, sizeof(r->window)) != 0) {
		r->kind = SERVE_BAD_REQUEST;
		r->error = "cannot read the time window";
		return;
	}
	/* Only the type's own names reach a request line. */
	if (q->type && *q->type) {
		int t = cct_profile_type_parse(q->type);

		if (t < 0) {
			r->kind = SERVE_BAD_REQUEST;
			r->error = "type must be cpu, offcpu or wall";
			return;
		}
		if (t)
			snprintf(r->ptype, sizeof(r->ptype), " %s", cct_profile_type_name((unsigned)t));
	}
	/* The selector escaped into one word of the request line. */
	if (q->thread && *q->thread && thread_selector_word(q->thread, r->pthread, sizeof(r->pthread)) != 0) {
		r->kind = SERVE_BAD_REQUEST;
		r->error = "thread must be a thread name or glob of at most 127 bytes";
		return;
	}
	if (strcmp(url, "/") == 0) {
		r->kind = SERVE_INDEX;
	} else if (strcmp(url, "/api/list") == 0) {
		r->kind = SERVE_PROXY;
		snprintf(r->request, sizeof(r->request), "list json");
		r->type = "application/json";
	} else if (strncmp(url, "/p/", 3) == 0 && pid_from_text_n(url + 3, strlen(url + 3))) {
		r->kind = SERVE_FLAME_PAGE;
		snprintf(r->pid, sizeof(r->pid), "%s", url + 3);
		snprintf(r->request, sizeof(r->request), "cct %s page%s%s%s", r->pid, r->window, r->ptype, r->pthread);
	} else if (strncmp(url, "/api/page/", 10) == 0 && pid_from_text_n(url + 10, strlen(url + 10))) {
		r->kind = SERVE_PROXY;
		snprintf(r->request, sizeof(r->request), "cct %s page%s%s%s", url + 10, r->window, r->ptype,
			 r->pthread);
		r->type = "application/json";
	} else if (strcmp(url, "/diff") == 0 || strcmp(url, "/api/diff") == 0) {
		bool text = url[1] == 'a';

		if (diff_side(q->base, q->now, b, sizeof(b)) != 0 || diff_side(q->target, q->now, t, sizeof(t)) != 0) {
			r->kind = SERVE_BAD_REQUEST;
			r->error = "diff needs base= and target=, each PID or PID@FROM..UNTIL";
			return;
		}
		r->kind = SERVE_PROXY;
		snprintf(r->request, sizeof(r->request), "diff %s %s %s", b, t, text ? "text" : "html");
		r->type = text ? "text/plain; charset=utf-8" : "text/html; charset=utf-8";
	} else if (strncmp(url, "/download/", 10) == 0) {
		/* /download/PID.pb.gz, .html, .svg, .collapsed */
		const char *pid = url + 10, *dot = strchr(pid, '.');
		size_t n = dot ? (size_t)(dot - pid) : 0;

		for (size_t k = 0; dot && pid_from_text_n(pid, n) && k < sizeof(downloads) / sizeof(downloads[0]); k++) {
			if (strcmp(dot, downloads[k].ext) != 0)
				continue;
			r->kind = SERVE_PROXY;
			snprintf(r->request, sizeof(r->request), "cct %.*s %s%s%s%s", (int)n, pid, downloads[k].format,
				 r->window, r->ptype, r->pthread);
			snprintf(r->filename, sizeof(r->filename), "jsampled-%.*s%s", (int)n, pid, downloads[k].ext);
			r->type = downloads[k].type;
			break;
		}
	}
}
