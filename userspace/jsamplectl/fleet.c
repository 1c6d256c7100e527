/* SPDX-License-Identifier: GPL-2.0-only */
#include "fleet.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "userspace/profile/cct_format.h"
#include "userspace/profile/kernel_symbols.h"
#include "userspace/common/u64_map.h"
#include "clickhouse_rows.h"

#define FLEET_MAX_FRAMES 4096
#define FLEET_MAX_NODES (1u << 24)

/* A string literal of ClickHouse SQL: quotes and backslashes escaped. */
static void sql_quote(struct wbuf *w, const char *s)
{
	wbuf_put(w, "'", 1);
	for (; *s; s++) {
		if (*s == '\'' || *s == '\\')
			wbuf_put(w, "\\", 1);
		wbuf_put(w, s, 1);
	}
	wbuf_put(w, "'", 1);
}

/* The rows of one service (and host) in [from, until): a retried or
 * refetched batch wrote its rows twice until ClickHouse merges them, so
 * each (host, time, pid, stack) counts once - any() of its copies. The
 * date condition lets ClickHouse skip other days' partitions. */
static void samples_where(struct wbuf *w, const struct fleet_query *q, int64_t from, int64_t until)
{
	wbuf_printf(w, "FROM %s.samples WHERE service = ", q->database);
	sql_quote(w, q->service);
	if (q->host) {
		wbuf_printf(w, " AND host = ");
		sql_quote(w, q->host);
	}
	wbuf_printf(w,
		    " AND date >= toDate(toDateTime(%" PRId64 ")) - 1 AND date <= toDate(toDateTime(%" PRId64
		    ")) + 1 AND time >= toDateTime(%" PRId64 ") AND time < toDateTime(%" PRId64 ")",
		    from, until, from, until);
	/* CPU rows have no type (''), the others theirs. */
	wbuf_printf(w, " AND profile_type = ");
	sql_quote(w, q->profile_type && strcmp(q->profile_type, "cpu") != 0 ? q->profile_type : "");
}

static void distinct_rows(struct wbuf *w, const struct fleet_query *q, int64_t from, int64_t until,
			  const char *extra_key)
{
	wbuf_printf(w, "SELECT host, time, pid, stack_hash%s, any(count) AS c ", extra_key);
	samples_where(w, q, from, until);
	wbuf_printf(w, " GROUP BY host, time, pid, stack_hash%s", extra_key);
}

/* Per stack: its frames and kinds, and the samples of each window (one
 * window for cct; base and target for diff). */
static void stacks_sql(struct wbuf *w, const struct fleet_query *q)
{
	int diff = q->command == FLEET_DIFF;
	int64_t lo = diff && q->base_from < q->from ? q->base_from : q->from;
	int64_t hi = diff && q->base_until > q->until ? q->base_until : q->until;

	wbuf_printf(w, "SELECT toString(stack_hash) AS h, frames, kinds, toString(a) AS a, toString(b) AS b FROM (");
	if (diff) {
		wbuf_printf(w,
			    "SELECT stack_hash, sumIf(c, time >= toDateTime(%" PRId64 ") AND time < toDateTime(%" PRId64
			    ")) AS a, sumIf(c, time >= toDateTime(%" PRId64 ") AND time < toDateTime(%" PRId64
			    ")) AS b FROM (",
			    q->base_from, q->base_until, q->from, q->until);
		distinct_rows(w, q, lo, hi, "");
	} else {
		wbuf_printf(w, "SELECT stack_hash, sum(c) AS a, toUInt64(0) AS b FROM (");
		distinct_rows(w, q, q->from, q->until, "");
	}
	/* LEFT: a sample whose stack row has not arrived still counts. */
	wbuf_printf(w, ") GROUP BY stack_hash) ANY LEFT JOIN (SELECT stack_hash, any(frames) AS frames, "
		       "any(kinds) AS kinds FROM %s.stacks WHERE date >= toDate(toDateTime(%" PRId64
		       ")) - 1 AND date <= toDate(toDateTime(%" PRId64 ")) + 1 GROUP BY stack_hash) USING stack_hash "
		       "FORMAT JSONEachRow",
		    q->database, lo, hi);
}

static void hosts_sql(struct wbuf *w, const struct fleet_query *q)
{
	wbuf_printf(w, "SELECT host, toString(sum(c)) AS samples, toString(uniqExact(pid)) AS processes FROM (");
	distinct_rows(w, q, q->from, q->until, "");
	wbuf_printf(w, ") GROUP BY host ORDER BY host FORMAT JSONEachRow");
}

/* --- rows into a CCT --- */

struct fleet_tree {
	struct cct cct;
	struct method_table methods;
	struct u64_map method_of; /* name hash -> method id */
	uint32_t next_id;
	int oom;
};

static uint64_t name_hash(const char *s)
{
	const char *kind = "";
	return ch_stack_hash(&s, &kind, 1);
}

static uint8_t frame_type_of(const char *kind)
{
	if (strcmp(kind, "interpreted") == 0)
		return FRAME_INTERPRETED;
	if (strcmp(kind, "compiled") == 0)
		return FRAME_COMPILED;
	if (strcmp(kind, "inlined") == 0)
		return FRAME_INLINED;
	if (strcmp(kind, "pseudo") == 0)
		return FRAME_PSEUDO;
	if (strcmp(kind, "kernel") == 0)
		return FRAME_KERNEL;
	if (strcmp(kind, "java") == 0)
		return FRAME_JAVA;
	if (strcmp(kind, "class") == 0)
		return FRAME_CLASS;
	if (strcmp(kind, "thread") == 0)
		return FRAME_THREAD;
	return FRAME_NATIVE; /* native, and kinds this build does not know */
}

/* A method id for a frame name ("pkg.Class.method"), made up on first use. */
static uint32_t method_for(struct fleet_tree *t, const char *name)
{
	uint64_t h = name_hash(name), *hit = u64_map_get(&t->method_of, h);
	const char *dot = strrchr(name, '.');
	char cls[1024];
	uint32_t id;

	if (hit)
		return (uint32_t)*hit;
	id = ++t->next_id;
	snprintf(cls, sizeof(cls), "%.*s", dot ? (int)(dot - name) : 0, name);
	/* the class id is the method id: one class entry per name is enough */
	if (method_table_put_restored(&t->methods, id, id, cls, dot ? dot + 1 : name) != 0 ||
	    u64_map_put(&t->method_of, h, id) != 0) {
		t->oom = 1;
		return 0;
	}
	return id;
}

/* jsampled's pseudo frame of that name ([GC], [VM], ...), or 0. */
static uint32_t pseudo_for(const char *name)
{
	for (uint32_t i = 1; i < PSEUDO_COUNT; i++)
		if (strcmp(pseudo_frame_name(i), name) == 0)
			return i;
	return 0;
}

/* A stack the samples name but the store has no row for (yet: a shard
 * still forwarding it): counted, under this name, not dropped. */
#define MISSING_STACK "[stack not in the store]"

static int add_stack(struct fleet_tree *t, json_t *frames, json_t *kinds, uint64_t count)
{
	static struct trace_frame f[FLEET_MAX_FRAMES];
	size_t n = json_array_size(frames);

	if (count == 0)
		return 0;
	if (n == 0 || n != json_array_size(kinds)) {
		f[0] = (struct trace_frame){.method_id = method_for(t, MISSING_STACK), .type = FRAME_NATIVE, .bci = -1};
		return t->oom || cct_add(&t->cct, f, 1, count) != 0 ? -1 : 0;
	}
	if (n > FLEET_MAX_FRAMES)
		n = FLEET_MAX_FRAMES;
	for (size_t i = 0; i < n; i++) {
		const char *name = json_string_value(json_array_get(frames, i));
		const char *kind = json_string_value(json_array_get(kinds, i));
		uint32_t pseudo = 0;

		name = name ? name : "[unknown]";
		kind = kind ? kind : "";
		/* The JVM's own threads' frames ([GC], [JIT compiler]) are in
		 * jsampled's "JVM" kind; pseudo ones in "pseudo". */
		if (strcmp(kind, "pseudo") == 0 || strcmp(kind, "jvm") == 0)
			pseudo = pseudo_for(name);
		f[i].flags = 0;
		f[i].bci = -1;
		if (pseudo) {
			f[i].type = FRAME_PSEUDO;
			f[i].method_id = pseudo;
		} else if (frame_named_by_symbol(f[i].type = frame_type_of(kind))) {
			f[i].method_id = kernel_symbols_intern(name);
		} else {
			if (f[i].type == FRAME_PSEUDO)
				f[i].type = FRAME_NATIVE;
			f[i].method_id = method_for(t, name);
		}
	}
	return t->oom || cct_add(&t->cct, f, (uint32_t)n, count) != 0 ? -1 : 0;
}

static uint64_t u64_of(json_t *v)
{
	/* ClickHouse quotes 64-bit integers in JSON by default. */
	if (json_is_string(v))
		return strtoull(json_string_value(v), NULL, 10);
	return json_is_integer(v) ? (uint64_t)json_integer_value(v) : 0;
}

static int tree_init(struct fleet_tree *t)
{
	memset(t, 0, sizeof(*t));
	method_table_init(&t->methods);
	u64_map_init(&t->method_of);
	return cct_init(&t->cct, FLEET_MAX_NODES);
}

static void tree_free(struct fleet_tree *t)
{
	cct_free(&t->cct);
	method_table_free(&t->methods);
	u64_map_free(&t->method_of);
}

/* The next JSONEachRow line of [*p, end) parsed (NULL: it does not
 * parse); *p moves past it. Empty lines are skipped; false at the end. */
static bool next_row(const char **p, const char *end, json_t **row)
{
	while (*p < end) {
		const char *nl = memchr(*p, '\n', (size_t)(end - *p));
		size_t len = nl ? (size_t)(nl - *p) : (size_t)(end - *p);
		const char *line = *p;

		*p += len + 1;
		if (len) {
			*row = json_loadb(line, len, 0, NULL);
			return true;
		}
	}
	return false;
}

/* Each JSONEachRow line into the tree(s): a = the first window's samples,
 * b = the second's (diff). Counts the samples read. */
static int rows_to_trees(const struct wbuf *rows, struct fleet_tree *a, struct fleet_tree *b, uint64_t *total)
{
	const char *p = (const char *)rows->data, *end = p + rows->len;
	json_t *row;

	while (next_row(&p, end, &row)) {
		if (!row)
			return -1;
		if (add_stack(a, json_object_get(row, "frames"), json_object_get(row, "kinds"),
			      u64_of(json_object_get(row, "a"))) != 0 ||
		    (b && add_stack(b, json_object_get(row, "frames"), json_object_get(row, "kinds"),
				    u64_of(json_object_get(row, "b"))) != 0)) {
			json_decref(row);
			return -1;
		}
		*total += u64_of(json_object_get(row, "a")) + (b ? u64_of(json_object_get(row, "b")) : 0);
		json_decref(row);
	}
	return 0;
}

static int print_hosts(const struct wbuf *rows, FILE *out)
{
	const char *p = (const char *)rows->data, *end = p + rows->len;
	json_t *row;

	fprintf(out, "%-32s %12s %9s\n", "host", "samples", "processes");
	while (next_row(&p, end, &row)) {
		if (!row)
			continue;
		const char *host = json_string_value(json_object_get(row, "host"));

		fprintf(out, "%-32s %12" PRIu64 " %9" PRIu64 "\n", host ? host : "?",
			u64_of(json_object_get(row, "samples")), u64_of(json_object_get(row, "processes")));
		json_decref(row);
	}
	return 0;
}

static int render(const struct fleet_query *q, struct fleet_tree *a, struct fleet_tree *b, FILE *out)
{
	char title[300], base_title[320];
	/* Kernel frames are in the store only if the exporter sent them. The
	 * tree holds one type's samples only: all counted, named by it. */
	const char *type = q->profile_type ? q->profile_type : "cpu";
	int t = cct_profile_type_parse(type);
	/* the store keeps one value of an event type: bytes, nanoseconds */
	enum profile_values values = t == VIEW_ALLOC ? VALUES_ALLOC : t == VIEW_LOCK ? VALUES_LOCK : VALUES_SAMPLED;
	/* Thread frames (the exporter's threads = on) are shown or selected
	 * as in a local profile. */
	unsigned view = VIEW_MIXED | VIEW_WALL | (q->by_thread ? VIEW_THREADS : 0);
	struct profile_source src = {.cct = &a->cct, .methods = &a->methods, .title = title, .view = view,
				     .profile_type = type, .values = values, .threads = q->thread};
	struct wbuf w;
	int f = cct_format_parse(q->format), rc;

	snprintf(title, sizeof(title), "%s%s%s (fleet)", q->service, q->host ? " on " : "", q->host ? q->host : "");
	wbuf_init(&w);
	/* Rendered whole, then written (the streaming spill sends to sockets). */
	if (q->command == FLEET_DIFF) {
		struct profile_source base = {.cct = &a->cct, .methods = &a->methods, .title = base_title,
					      .view = view, .profile_type = type, .values = values, .threads = q->thread};

		snprintf(base_title, sizeof(base_title), "%s (base)", title);
		src.cct = &b->cct;
		src.methods = &b->methods;
		rc = cct_diff_stream(&base, &src, (enum cct_format)f, &w, -1);
	} else {
		rc = cct_render_stream(&src, (enum cct_format)f, &w, -1);
	}
	if (rc == 0 && w.len && fwrite(w.data, 1, w.len, out) != w.len)
		rc = -1;
	wbuf_free(&w);
	return rc;
}

int fleet_run(const struct fleet_query *q, FILE *out)
{
	struct fleet_tree a, b;
	struct wbuf sql, rows;
	char err[600];
	uint64_t total = 0;
	int rc = 1, f = cct_format_parse(q->format);

	if (q->command == FLEET_DIFF ? f != CCT_FORMAT_HTML && f != CCT_FORMAT_TEXT && f != CCT_FORMAT_PAGE
				     : f < 0 || f == CCT_FORMAT_TEXT) {
		fprintf(stderr, "jsamplectl fleet: format %s is not one for %s\n", q->format,
			q->command == FLEET_DIFF ? "diff (html, text)" : "cct (tree, collapsed, json, pprof, html, svg)");
		return 2;
	}
	wbuf_init(&sql);
	wbuf_init(&rows);
	if (q->command == FLEET_HOSTS)
		hosts_sql(&sql, q);
	else
		stacks_sql(&sql, q);
	wbuf_put(&sql, "", 1);
	if (sql.oom || clickhouse_run(&q->server, (const char *)sql.data, &rows, err, sizeof(err)) != 0) {
		fprintf(stderr, "jsamplectl fleet: %s\n", sql.oom ? "out of memory" : err);
		goto out;
	}
	if (q->command == FLEET_HOSTS) {
		rc = print_hosts(&rows, out);
		goto out;
	}
	if ((tree_init(&a) | tree_init(&b)) != 0)
		fprintf(stderr, "jsamplectl fleet: out of memory\n");
	else if (rows_to_trees(&rows, &a, q->command == FLEET_DIFF ? &b : NULL, &total) != 0)
		fprintf(stderr, "jsamplectl fleet: ClickHouse's answer does not parse, or out of memory\n");
	else if (total == 0)
		fprintf(stderr, "jsamplectl fleet: no samples of service %s%s%s in the window\n", q->service,
			q->host ? " on " : "", q->host ? q->host : "");
	else if (render(q, &a, &b, out) != 0)
		fprintf(stderr, "jsamplectl fleet: cannot write the profile\n");
	else
		rc = 0;
	tree_free(&a);
	tree_free(&b);
out:
	wbuf_free(&sql);
	wbuf_free(&rows);
	return rc;
}
