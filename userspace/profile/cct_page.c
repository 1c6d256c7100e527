/* SPDX-License-Identifier: GPL-2.0-only */
/* The flame-graph page: its data (userspace/common/web/FORMAT.md) from a
 * profile or from two (a diff), the page itself (the embedded template with
 * the data in it), and a diff's table of the frames whose share changed
 * most. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cct_format.h"
#include "cct_view.h"
#include "json.h"
#include "named_tree.h"

/* userspace/common/web/flamegraph.html, embedded at build time. */
extern const char jsampled_flamegraph_page[];
#define PAGE_MARKER "/*JSAMPLED_DATA*/null"

/* A page leaves out frames under this share of the profile: too narrow to
 * see even zoomed in a hundredfold, and they would make big trees heavy. */
#define PAGE_RESOLUTION 200000

/* How many frames a diff's table lists. */
#define DIFF_TABLE_ROWS 30

static void utc(int64_t t, char *out, size_t outlen)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (!gmtime_r(&tt, &tm) || !strftime(out, outlen, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(out, outlen, "%" PRId64, t);
}

/* "12345 samples at 999 Hz, 18:00:00 .. 18:05:00 UTC" */
static void describe(const struct profile_source *src, uint64_t samples, char *out, size_t outlen)
{
	const char *type = src->profile_type ? src->profile_type : cct_profile_type_name(src->view);
	/* What the samples are of: CPU time, off-CPU time, wall time. */
	const char *of = strcmp(type, "offcpu") == 0 ? " of off-CPU time" : strcmp(type, "wall") == 0 ? " of wall time" : "";
	int n;

	if (src->values == VALUES_ALLOC)
		n = snprintf(out, outlen, "%" PRIu64 " bytes allocated (estimated from sampled allocations)", samples);
	else if (src->values == VALUES_LOCK)
		n = snprintf(out, outlen, "%" PRIu64 " ns waiting for locks (estimated from sampled waits)", samples);
	else
		n = snprintf(out, outlen, "%" PRIu64 " samples%s", samples, of);
	if (src->values == VALUES_SAMPLED && src->frequency_hz && n > 0 && (size_t)n < outlen)
		n += snprintf(out + n, outlen - (size_t)n, " at %u Hz per CPU", src->frequency_hz);
	if (src->window && n > 0 && (size_t)n < outlen) {
		char a[32], b[32];
		if (src->window->covered_until) {
			utc(src->window->covered_from, a, sizeof(a));
			utc(src->window->covered_until, b, sizeof(b));
			snprintf(out + n, outlen - (size_t)n, ", %s .. %s UTC", a, b);
		} else {
			snprintf(out + n, outlen - (size_t)n, ", no samples in the window");
		}
	}
}

struct page_opts {
	const char *title, *subtitle;
	const char *profile_type; /* cpu, offcpu, wall, alloc, lock */
	const char *unit;         /* of the counts: samples, bytes, nanoseconds */
	const char *base_title; /* a diff: the base side */
};

/* Opens a node: [name, kind, total, self, [children... */
static void node_open(const struct named_tree *t, uint32_t k, struct wbuf *out)
{
	const struct named_node *n = &t->nodes.v[k];

	wbuf_printf(out, "[%u,%u,%" PRIu64 ",%" PRIu64 ",[", n->name, n->kind, n->total, n->self);
}

/* The page's data: nested arrays, heaviest child first, frames under the
 * resolution left out. */
static int write_page_data(const struct named_tree *t, const struct page_opts *o, struct wbuf *out, int fd)
{
	const struct named_node *root = &t->nodes.v[0];
	uint64_t min = root->total / PAGE_RESOLUTION, base_min = root->base_total / PAGE_RESOLUTION;
	bool diff = o->base_title != NULL;
	uint32_t *start, *kids, *stack = NULL, *next = NULL, *emitted = NULL;
	size_t depth = 0;

	if (named_tree_children(t, &start, &kids) != 0)
		return -1;
	stack = malloc(t->nodes.n * sizeof(*stack));
	next = malloc(t->nodes.n * sizeof(*next));
	emitted = malloc(t->nodes.n * sizeof(*emitted));
	if (!stack || !next || !emitted)
		goto out;
	wbuf_printf(out, "{\"title\":");
	json_quote_html(out, o->title ? o->title : "");
	wbuf_printf(out, ",\"subtitle\":");
	json_quote_html(out, o->subtitle ? o->subtitle : "");
	wbuf_printf(out, ",\"profile_type\":\"%s\",\"unit\":\"%s\",\"kinds\":[",
		    o->profile_type ? o->profile_type : "cpu", o->unit ? o->unit : "samples");
	for (int k = 0; k < KIND_COUNT; k++)
		wbuf_printf(out, "%s\"%s\"", k ? "," : "", frame_kind_name((enum frame_kind)k));
	wbuf_printf(out, "],\"names\":[");
	for (size_t i = 0; i < t->names.n; i++) {
		if (i)
			wbuf_u8(out, ',');
		json_quote_html(out, t->names.v[i]);
		if (cct_spill(out, fd, false))
			goto out;
	}
	wbuf_printf(out, "],\"root\":");
	/* Depth first, iteratively: paths may be thousands of frames deep. */
	node_open(t, 0, out);
	stack[0] = 0;
	next[0] = emitted[0] = 0;
	depth = 1;
	while (depth > 0) {
		uint32_t node = stack[depth - 1];
		uint32_t at = start[node] + next[depth - 1];

		if (at >= start[node + 1]) {
			const struct named_node *n = &t->nodes.v[node];
			if (diff)
				wbuf_printf(out, "],%" PRIu64 ",%" PRIu64 "]", n->base_total, n->base_self);
			else
				wbuf_printf(out, "]]");
			depth--;
			continue;
		}
		next[depth - 1]++;
		uint32_t k = kids[at];
		const struct named_node *c = &t->nodes.v[k];
		if ((c->total < min || !c->total) && (!diff || c->base_total < base_min || !c->base_total))
			continue;
		if (emitted[depth - 1]++)
			wbuf_u8(out, ',');
		node_open(t, k, out);
		stack[depth] = k;
		next[depth] = emitted[depth] = 0;
		depth++;
		if (cct_spill(out, fd, false))
			goto out;
	}
	if (diff) {
		wbuf_printf(out, ",\"diff\":{\"base_title\":");
		json_quote_html(out, o->base_title);
		wbuf_printf(out, ",\"base_total\":%" PRIu64 ",\"target_total\":%" PRIu64 "}", root->base_total,
			    root->total);
	} else {
		wbuf_printf(out, ",\"diff\":null");
	}
	wbuf_printf(out, ",\"live\":null}");
out:
	free(start);
	free(kids);
	free(stack);
	free(next);
	free(emitted);
	return !emitted || out->oom ? -1 : 0;
}

/* The page: the template with the data where its marker is. */
static int write_page(const struct named_tree *t, const struct page_opts *o, bool html, struct wbuf *out, int fd)
{
	const char *marker = strstr(jsampled_flamegraph_page, PAGE_MARKER);

	if (!html)
		return write_page_data(t, o, out, fd);
	if (!marker)
		return -1;
	wbuf_put(out, jsampled_flamegraph_page, (size_t)(marker - jsampled_flamegraph_page));
	if (write_page_data(t, o, out, fd) != 0)
		return -1;
	wbuf_printf(out, "%s", marker + strlen(PAGE_MARKER));
	return out->oom ? -1 : 0;
}

int cct_render_page(const struct profile_source *src, const struct cct *view, bool html, struct wbuf *out, int fd)
{
	struct named_tree t;
	char subtitle[256];
	struct page_opts o = {.title = src->title,
			      .subtitle = subtitle,
			      .profile_type = src->profile_type ? src->profile_type : cct_profile_type_name(src->view),
			      .unit = src->values == VALUES_ALLOC ? "bytes" : src->values == VALUES_LOCK ? "nanoseconds" : "samples"};
	int rc = -1;

	if (named_tree_init(&t) != 0 || named_tree_add_view(&t, view, src->methods, false) != 0)
		goto cleanup;
	named_tree_totals(&t);
	describe(src, t.nodes.v[0].total, subtitle, sizeof(subtitle));
	rc = write_page(&t, &o, html, out, fd);
cleanup:
	named_tree_free(&t);
	return rc;
}

/* Per frame name: its samples, each counted once per path even where the
 * name recurs in it (the outermost occurrence holds them all). */
struct name_share {
	uint32_t name;
	uint64_t target, base;
	double delta; /* share points: target share - base share */
};

static int by_change(const void *a, const void *b)
{
	double x = fabs(((const struct name_share *)a)->delta), y = fabs(((const struct name_share *)b)->delta);
	return (x < y) - (x > y);
}

static int write_diff_table(const struct named_tree *t, const struct page_opts *o, struct wbuf *out)
{
	struct name_share *shares = calloc(t->names.n ? t->names.n : 1, sizeof(*shares));
	uint32_t *on_path = calloc(t->names.n ? t->names.n : 1, sizeof(*on_path)); /* name -> occurrences above */
	uint32_t *stack = malloc((t->nodes.n + 1) * sizeof(*stack)), *next = malloc((t->nodes.n + 1) * sizeof(*next));
	uint32_t *start = NULL, *kids = NULL;
	const struct named_node *root = &t->nodes.v[0];
	double tt = root->total ? (double)root->total : 1.0, bt = root->base_total ? (double)root->base_total : 1.0;
	size_t depth = 1;
	int rc = -1;

	if (!shares || !on_path || !stack || !next || named_tree_children(t, &start, &kids) != 0)
		goto cleanup;
	for (size_t i = 0; i < t->names.n; i++)
		shares[i].name = (uint32_t)i;
	/* Depth first, with the names on the path counted: an occurrence
	 * below another of the same name (recursion) adds nothing. */
	stack[0] = 0;
	next[0] = 0;
	while (depth > 0) {
		uint32_t node = stack[depth - 1], at = start[node] + next[depth - 1];

		if (at >= start[node + 1]) {
			if (node)
				on_path[t->nodes.v[node].name]--;
			depth--;
			continue;
		}
		next[depth - 1]++;
		const struct named_node *n = &t->nodes.v[kids[at]];
		if (!on_path[n->name]++) {
			shares[n->name].target += n->total;
			shares[n->name].base += n->base_total;
		}
		stack[depth] = kids[at];
		next[depth++] = 0;
	}
	for (size_t i = 0; i < t->names.n; i++)
		shares[i].delta = 100.0 * ((double)shares[i].target / tt - (double)shares[i].base / bt);
	qsort(shares, t->names.n, sizeof(*shares), by_change);
	wbuf_printf(out, "base:   %s (%" PRIu64 " samples)\ntarget: %s (%" PRIu64 " samples)\n\n", o->base_title,
		    root->base_total, o->title ? o->title : "", root->total);
	wbuf_printf(out, "%10s %8s %8s  %s\n", "change", "base", "target", "frame (share of all samples, with its callees)");
	for (size_t i = 0, rows = 0; i < t->names.n && rows < DIFF_TABLE_ROWS; i++) {
		const struct name_share *s = &shares[i];
		if (s->name == 0 || (!s->target && !s->base))
			continue;
		wbuf_printf(out, "%+8.2fpp %7.2f%% %7.2f%%  %s\n", s->delta, 100.0 * (double)s->base / bt,
			    100.0 * (double)s->target / tt, t->names.v[s->name]);
		rows++;
	}
	rc = out->oom ? -1 : 0;
cleanup:
	free(shares);
	free(on_path);
	free(stack);
	free(next);
	free(start);
	free(kids);
	return rc;
}

int cct_diff_stream(const struct profile_source *base, const struct profile_source *target, enum cct_format f,
		    struct wbuf *out, int fd)
{
	struct cct bview, tview;
	struct named_tree t;
	char subtitle[512], bdesc[200], tdesc[200];
	struct page_opts o = {.title = target->title ? target->title : "target", .subtitle = subtitle,
			      .base_title = base->title ? base->title : "base"};
	int rc = -1;
	bool views = false;

	memset(&bview, 0, sizeof(bview));
	memset(&tview, 0, sizeof(tview));
	if (named_tree_init(&t) != 0)
		goto cleanup;
	views = true;
	if (cct_view_build_threads(base->cct, VIEW_MERGE_BCI, base->view, base->window, base->threads, &bview) != 0 ||
	    cct_view_build_threads(target->cct, VIEW_MERGE_BCI, target->view, target->window, target->threads,
				   &tview) != 0 ||
	    named_tree_add_view(&t, &tview, target->methods, false) != 0 ||
	    named_tree_add_view(&t, &bview, base->methods, true) != 0)
		goto cleanup;
	named_tree_totals(&t);
	describe(base, t.nodes.v[0].base_total, bdesc, sizeof(bdesc));
	describe(target, t.nodes.v[0].total, tdesc, sizeof(tdesc));
	snprintf(subtitle, sizeof(subtitle), "base: %s; target: %s; widths: target, colours: change of share",
		 bdesc, tdesc);
	if (f == CCT_FORMAT_TEXT)
		rc = write_diff_table(&t, &o, out);
	else if (f == CCT_FORMAT_HTML || f == CCT_FORMAT_PAGE)
		rc = write_page(&t, &o, f == CCT_FORMAT_HTML, out, fd);
cleanup:
	if (views) {
		cct_free(&bview);
		cct_free(&tview);
	}
	named_tree_free(&t);
	if (rc == 0 && (out->oom || cct_spill(out, fd, true)))
		rc = -1;
	return rc;
}
