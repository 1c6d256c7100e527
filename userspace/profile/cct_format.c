/* SPDX-License-Identifier: GPL-2.0-only */
#include "cct_format.h"
#include "kernel_symbols.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "userspace/common/fd_io.h"
#include "cct_view.h"
#include "json.h"

/* Streaming: past this much text, a render writes out what it has. */
#define SPILL_BYTES (256u << 10)

int cct_spill(struct wbuf *out, int fd, bool all)
{
	if (fd < 0 || (!all && out->len < SPILL_BYTES))
		return 0;
	if (out->oom || (out->len && sock_send_all(fd, out->data, out->len) != 0))
		return -1;
	wbuf_reset(out);
	return 0;
}

static const char *const pseudo_names[PSEUDO_COUNT] = {
	[0] = "[root]",
	[PSEUDO_TRUNCATED] = "[truncated]",
	[PSEUDO_GC] = "[GC]",
	[PSEUDO_JIT] = "[JIT compiler]",
	[PSEUDO_VM] = "[VM]",
	[PSEUDO_OTHER_THREAD] = "[JVM thread]",
	[PSEUDO_OVERFLOW] = "[other]",
	[PSEUDO_NATIVE] = "[native, no Java frames]",
	[PSEUDO_AGENT] = "[jsampled agent]",
	[PSEUDO_VTHREAD_FROZEN] = "[virtual thread: older frames unmounted]",
	[PSEUDO_VTHREAD] = "[virtual thread]",
	[PSEUDO_OFFCPU] = "[off-CPU]",
	[PSEUDO_BLOCKED] = "[blocked]",
	[PSEUDO_RUNNABLE] = "[runnable]",
	[PSEUDO_BLOCKED_NATIVE] = "[blocked: in native]",
	[PSEUDO_BLOCKED_VM] = "[blocked: in the VM]",
	[PSEUDO_BLOCKED_MONITOR] = "[blocked: on a monitor]",
	[PSEUDO_BLOCKED_PARKED] = "[blocked: parked]",
	[PSEUDO_BLOCKED_WAITING] = "[blocked: in Object.wait]",
	[PSEUDO_BLOCKED_SLEEPING] = "[blocked: sleeping]",
};

const char *pseudo_frame_name(uint32_t id)
{
	return id < PSEUDO_COUNT && pseudo_names[id] ? pseudo_names[id] : "[unknown]";
}

/* The suffixes async-profiler and FlameGraph's Java palette understand. */
const char *frame_type_suffix(uint8_t type)
{
	switch (type) {
	case FRAME_COMPILED:
		return "_[j]";
	case FRAME_INLINED:
		return "_[i]";
	case FRAME_INTERPRETED:
		return "_[0]";
	case FRAME_NATIVE:
		return "_[n]";
	case FRAME_KERNEL:
		return "_[k]";
	default:
		return "";
	}
}

static const char *frame_type_name(uint8_t type)
{
	static const char *const names[FRAME_TYPE_COUNT] = {
		[FRAME_INTERPRETED] = "interpreted", [FRAME_COMPILED] = "compiled", [FRAME_INLINED] = "inlined",
		[FRAME_NATIVE] = "native", [FRAME_PSEUDO] = "pseudo", [FRAME_KERNEL] = "kernel", [FRAME_C] = "c",
		[FRAME_JAVA] = "java", [FRAME_CLASS] = "class", [FRAME_THREAD] = "thread",
	};
	return type < FRAME_TYPE_COUNT ? names[type] : "unknown";
}

void cct_frame_name(const struct method_table *methods, uint32_t method_id, uint8_t type,
		    char *out, size_t outlen)
{
	size_t n;

	if (type == FRAME_PSEUDO) {
		snprintf(out, outlen, "%s", pseudo_frame_name(method_id));
		return;
	}
	if (type == FRAME_THREAD) {
		snprintf(out, outlen, "[thread: %s]", kernel_symbols_name(method_id));
		return;
	}
	if (frame_named_by_symbol(type))
		snprintf(out, outlen, "%s", kernel_symbols_name(method_id));
	else
		method_table_name(methods, method_id, out, outlen);
	n = strlen(out);
	snprintf(out + n, outlen - n, "%s", frame_type_suffix(type));
}

static const char *const format_names[CCT_FORMAT_COUNT] = {"tree", "collapsed", "json", "pprof",
							    "html", "svg", "page", "text"};

int cct_format_parse(const char *s)
{
	for (int f = 0; f < CCT_FORMAT_COUNT; f++)
		if (strcmp(s, format_names[f]) == 0)
			return f;
	return -1;
}

const char *cct_format_name(enum cct_format f)
{
	return f < CCT_FORMAT_COUNT ? format_names[f] : "?";
}

/* Children of every node in compressed form, heaviest first. */
struct shape {
	uint64_t *total;
	uint32_t *start; /* children of i: kids[start[i] .. start[i+1]) */
	uint32_t *kids;
};

static const uint64_t *sort_totals;

static int by_total_desc(const void *a, const void *b)
{
	uint64_t x = sort_totals[*(const uint32_t *)a], y = sort_totals[*(const uint32_t *)b];
	return (x < y) - (x > y);
}

static int shape_build(const struct cct *c, struct shape *s)
{
	size_t n = c->nodes.n;
	uint32_t *fill;

	s->total = calloc(n, sizeof(*s->total));
	s->start = calloc(n + 1, sizeof(*s->start));
	s->kids = calloc(n ? n : 1, sizeof(*s->kids));
	fill = calloc(n + 1, sizeof(*fill));
	if (!s->total || !s->start || !s->kids || !fill) {
		free(fill);
		return -1;
	}
	for (size_t i = n; i-- > 0;) {
		s->total[i] += c->self.v[i];
		if (i)
			s->total[c->nodes.v[i].parent] += s->total[i];
	}
	for (size_t i = 1; i < n; i++)
		s->start[c->nodes.v[i].parent + 1]++;
	for (size_t i = 0; i < n; i++)
		s->start[i + 1] += s->start[i];
	memcpy(fill, s->start, (n + 1) * sizeof(*fill));
	for (size_t i = 1; i < n; i++)
		s->kids[fill[c->nodes.v[i].parent]++] = (uint32_t)i;
	sort_totals = s->total; /* rendering is single-threaded */
	for (size_t i = 0; i < n; i++)
		qsort(s->kids + s->start[i], s->start[i + 1] - s->start[i], sizeof(uint32_t), by_total_desc);
	free(fill);
	return 0;
}

static void shape_free(struct shape *s)
{
	free(s->total);
	free(s->start);
	free(s->kids);
}

static void render_collapsed(const struct cct *c, const struct method_table *m, struct wbuf *out, int fd)
{
	uint32_t *path = malloc(sizeof(uint32_t) * (TRACE_MAX_FRAMES + 2));
	char name[1024];

	if (!path)
		return;
	for (size_t i = 1; i < c->nodes.n; i++) {
		uint32_t depth = 0;

		if (!c->self.v[i])
			continue;
		for (uint32_t k = (uint32_t)i; k && depth < TRACE_MAX_FRAMES + 2; k = c->nodes.v[k].parent)
			path[depth++] = k;
		while (depth-- > 0) {
			const struct cct_node *n = &c->nodes.v[path[depth]];
			cct_frame_name(m, n->method_id, n->type, name, sizeof(name));
			/* ';' and ' ' separate frames and the count: keep them out of names. */
			for (char *p = name; *p; p++)
				if (*p == ';' || *p == ' ')
					*p = '_';
			wbuf_printf(out, "%s%s", name, depth ? ";" : "");
		}
		wbuf_printf(out, " %llu\n", (unsigned long long)c->self.v[i]);
		if (cct_spill(out, fd, false))
			break;
	}
	free(path);
}

/* Depth-first, iteratively (paths can be thousands of frames deep). */
struct cursor {
	uint32_t node;
	uint32_t next_kid;
};

static void render_tree(const struct cct *c, const struct method_table *m, const struct shape *s,
			struct wbuf *out, int fd)
{
	struct cursor *stack = malloc(sizeof(*stack) * (TRACE_MAX_FRAMES + 4));
	uint32_t depth = 0;
	uint64_t all = s->total[0] ? s->total[0] : 1;
	char name[1024];

	if (!stack)
		return;
	wbuf_printf(out, "%10s %7s %10s  %s\n", "total", "%", "self", "frame");
	stack[0] = (struct cursor){0, 0};
	wbuf_printf(out, "%10llu %6.2f%% %10llu  %s\n", (unsigned long long)s->total[0], 100.0,
		    (unsigned long long)c->self.v[0], "[root]");
	depth = 1;
	while (depth > 0) {
		struct cursor *cur = &stack[depth - 1];
		uint32_t kid_at = s->start[cur->node] + cur->next_kid;

		if (kid_at >= s->start[cur->node + 1] || depth >= TRACE_MAX_FRAMES + 3) {
			depth--;
			continue;
		}
		cur->next_kid++;
		uint32_t k = s->kids[kid_at];
		const struct cct_node *n = &c->nodes.v[k];
		cct_frame_name(m, n->method_id, n->type, name, sizeof(name));
		wbuf_printf(out, "%10llu %6.2f%% %10llu  %*s%s\n", (unsigned long long)s->total[k],
			    100.0 * (double)s->total[k] / (double)all, (unsigned long long)c->self.v[k],
			    (int)(2 * depth), "", name);
		stack[depth++] = (struct cursor){k, 0};
		if (cct_spill(out, fd, false))
			break;
	}
	free(stack);
}

static void json_node_open(const struct cct *c, const struct method_table *m, const struct shape *s,
			   uint32_t k, struct wbuf *out)
{
	const struct cct_node *n = &c->nodes.v[k];
	char name[1024];

	if (k == 0)
		snprintf(name, sizeof(name), "[root]");
	else if (n->type == FRAME_PSEUDO)
		snprintf(name, sizeof(name), "%s", pseudo_frame_name(n->method_id));
	else
		method_table_name(m, n->method_id, name, sizeof(name));
	wbuf_printf(out, "{\"name\":");
	json_quote(out, name);
	wbuf_printf(out, ",\"type\":\"%s\",\"self\":%llu,\"total\":%llu,\"children\":[",
		    k == 0 ? "root" : frame_type_name(n->type), (unsigned long long)c->self.v[k],
		    (unsigned long long)s->total[k]);
}

static void render_json(const struct cct *c, const struct method_table *m, const struct shape *s,
			struct wbuf *out, int fd)
{
	struct cursor *stack = malloc(sizeof(*stack) * (TRACE_MAX_FRAMES + 4));
	uint32_t depth;

	if (!stack)
		return;
	wbuf_printf(out, "{\"samples\":%llu,\"overflow_samples\":%llu,\"nodes\":%zu,\"root\":",
		    (unsigned long long)c->samples, (unsigned long long)c->overflow_samples,
		    c->nodes.n);
	json_node_open(c, m, s, 0, out);
	stack[0] = (struct cursor){0, 0};
	depth = 1;
	while (depth > 0) {
		struct cursor *cur = &stack[depth - 1];
		uint32_t kid_at = s->start[cur->node] + cur->next_kid;

		if (kid_at >= s->start[cur->node + 1] || depth >= TRACE_MAX_FRAMES + 3) {
			wbuf_printf(out, "]}");
			depth--;
			continue;
		}
		if (cur->next_kid++)
			wbuf_u8(out, ',');
		json_node_open(c, m, s, s->kids[kid_at], out);
		stack[depth++] = (struct cursor){s->kids[kid_at], 0};
		if (cct_spill(out, fd, false))
			break;
	}
	wbuf_printf(out, "}\n");
	free(stack);
}

/* The second tree's values on the nodes of view (the first tree's view):
 * each of its view's nodes found, or made, by path. The two trees take
 * the same paths, but each prunes by its own counts. NULL if out of
 * memory. */
static uint64_t *second_values(const struct profile_source *src, struct cct *view)
{
	struct cct v2;
	uint32_t *to = NULL;
	uint64_t *second = NULL;

	if (cct_view_build_threads(src->cct2, VIEW_KEEP_BCI, src->view, src->window, src->threads, &v2) != 0)
		return NULL;
	to = calloc(v2.nodes.n ? v2.nodes.n : 1, sizeof(*to));
	for (size_t i = 1; to && i < v2.nodes.n; i++) {
		const struct cct_node *n = &v2.nodes.v[i];

		to[i] = cct_child(view, to[n->parent], n->method_id, n->type, n->bci, 1);
		if (!to[i])
			goto cleanup;
	}
	second = to ? calloc(view->nodes.n ? view->nodes.n : 1, sizeof(*second)) : NULL;
	for (size_t i = 0; second && i < v2.nodes.n; i++)
		second[to[i]] += v2.self.v[i];
cleanup:
	free(to);
	cct_free(&v2);
	return second;
}

int cct_render_stream(const struct profile_source *src, enum cct_format f, struct wbuf *out, int fd)
{
	struct cct view;
	struct shape s = {0};
	int rc = -1;

	/* pprof tells frames apart by bci (a line each); the rest merge them. */
	if (cct_view_build_threads(src->cct, f == CCT_FORMAT_PPROF ? VIEW_KEEP_BCI : VIEW_MERGE_BCI, src->view,
				   src->window, src->threads, &view) != 0)
		goto cleanup;
	switch (f) {
	case CCT_FORMAT_COLLAPSED:
		render_collapsed(&view, src->methods, out, fd);
		rc = 0;
		break;
	case CCT_FORMAT_TREE:
	case CCT_FORMAT_JSON:
		if (shape_build(&view, &s) != 0)
			break;
		if (f == CCT_FORMAT_TREE)
			render_tree(&view, src->methods, &s, out, fd);
		else
			render_json(&view, src->methods, &s, out, fd);
		rc = 0;
		break;
	case CCT_FORMAT_PPROF:
		if (src->cct2) {
			uint64_t *second = second_values(src, &view);
			rc = second ? cct_render_pprof(src, &view, second, out) : -1;
			free(second);
		} else {
			rc = cct_render_pprof(src, &view, NULL, out);
		}
		break;
	case CCT_FORMAT_HTML:
	case CCT_FORMAT_PAGE:
		rc = cct_render_page(src, &view, f == CCT_FORMAT_HTML, out, fd);
		break;
	case CCT_FORMAT_SVG:
		rc = cct_render_svg(src, &view, out, fd);
		break;
	default:
		break;
	}
cleanup:
	shape_free(&s);
	cct_free(&view);
	if (rc == 0 && (out->oom || cct_spill(out, fd, true)))
		rc = -1;
	return rc;
}

int cct_render(const struct cct *c, const struct method_table *methods, enum cct_format f, struct wbuf *out)
{
	struct profile_source src = {.cct = c, .methods = methods};

	return cct_render_stream(&src, f, out, -1);
}
