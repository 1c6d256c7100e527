/* SPDX-License-Identifier: GPL-2.0-only */
/* An interactive SVG flame graph (root at the bottom), viewable in any
 * browser without a server: a <title> tooltip per frame, click to zoom,
 * "Search" to highlight frames by a regular expression and report their
 * share, "Reset zoom". Frames narrower than a tenth of a pixel are left
 * out. Our own layout and script. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cct_format.h"
#include "named_tree.h"

#define SVG_WIDTH 1200
#define FRAME_HEIGHT 16
#define TOP_MARGIN 52
#define BOTTOM_MARGIN 28
#define MIN_FRAME_PX 0.1

/* Fill colours by frame kind (named_tree.h), as the page uses them. */
static const char *const kind_colour[KIND_COUNT] = {
	"#d9d9d9", /* root */
	"#7dc97d", /* interpreted */
	"#f2b544", /* compiled */
	"#5cc3c9", /* inlined */
	"#d6725a", /* native */
	"#e8833a", /* kernel */
	"#8fa6c9", /* jvm */
	"#c8c8c8", /* pseudo */
};

static const char svg_script[] =
	"<script type=\"text/ecmascript\"><![CDATA[\n"
	"'use strict';\n"
	"const W = %d, PAD = 10;\n"
	"let frames = [], zoomed = null;\n"
	"function info(g) { return {x: +g.dataset.x, w: +g.dataset.w, d: +g.dataset.d}; }\n"
	"function label(g, px) {\n"
	"  const t = g.querySelector('text'), name = g.dataset.n;\n"
	"  const fit = Math.floor((px - 6) / 7);\n"
	"  t.textContent = fit < 3 ? '' : (name.length <= fit ? name : name.slice(0, fit - 2) + '..');\n"
	"}\n"
	"function place(g, x, w, dim) {\n"
	"  const r = g.querySelector('rect'), px = w * (W - 2 * PAD);\n"
	"  g.style.display = px < 0.1 ? 'none' : '';\n"
	"  r.setAttribute('x', PAD + x * (W - 2 * PAD)); r.setAttribute('width', px);\n"
	"  g.querySelector('text').setAttribute('x', PAD + x * (W - 2 * PAD) + 3);\n"
	"  g.style.opacity = dim ? 0.5 : 1; label(g, px);\n"
	"}\n"
	"function zoom(g) {\n"
	"  zoomed = g; const z = info(g);\n"
	"  for (const f of frames) {\n"
	"    const i = info(f);\n"
	"    if (i.d >= z.d && i.x >= z.x - 1e-12 && i.x + i.w <= z.x + z.w + 1e-12)\n"
	"      place(f, (i.x - z.x) / z.w, i.w / z.w, false);\n"
	"    else if (i.d < z.d && i.x <= z.x + 1e-12 && i.x + i.w >= z.x + z.w - 1e-12) place(f, 0, 1, true);\n"
	"    else f.style.display = 'none';\n"
	"  }\n"
	"  document.getElementById('reset').style.opacity = 1;\n"
	"}\n"
	"function reset() {\n"
	"  zoomed = null;\n"
	"  for (const f of frames) { const i = info(f); place(f, i.x, i.w, false); }\n"
	"  document.getElementById('reset').style.opacity = 0.3;\n"
	"}\n"
	"function search(term) {\n"
	"  let re = null;\n"
	"  if (term) { try { re = new RegExp(term); } catch (e) { re = null; } }\n"
	"  const hits = [];\n"
	"  for (const f of frames) {\n"
	"    const hit = re && re.test(f.dataset.n);\n"
	"    f.querySelector('rect').setAttribute('fill', hit ? '#e040e0' : f.dataset.c);\n"
	"    if (hit) { const i = info(f); hits.push([i.x, i.x + i.w]); }\n"
	"  }\n"
	"  hits.sort((a, b) => a[0] - b[0]);\n"
	"  let share = 0, end = -1;\n"
	"  for (const [a, b] of hits) { if (a >= end) { share += b - a; end = b; } else if (b > end) { share += b - end; end = b; } }\n"
	"  document.getElementById('matched').textContent = re ? 'Matched: ' + (100 * share).toFixed(2) + '%%' : '';\n"
	"}\n"
	"window.addEventListener('load', () => {\n"
	"  frames = Array.from(document.querySelectorAll('g.f'));\n"
	"  for (const f of frames) f.addEventListener('click', () => zoom(f));\n"
	"  document.getElementById('reset').addEventListener('click', reset);\n"
	"  document.getElementById('search').addEventListener('click', () => search(prompt('Search for (regular expression):', '')));\n"
	"  window.addEventListener('keydown', e => { if (e.key === 'Escape') reset();\n"
	"    if (e.key === 'f' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); search(prompt('Search for (regular expression):', '')); } });\n"
	"  reset();\n"
	"});\n"
	"]]></script>\n";

static void xml_text(struct wbuf *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<':
			wbuf_printf(out, "&lt;");
			break;
		case '>':
			wbuf_printf(out, "&gt;");
			break;
		case '&':
			wbuf_printf(out, "&amp;");
			break;
		case '"':
			wbuf_printf(out, "&quot;");
			break;
		default:
			wbuf_u8(out, (uint8_t)*s);
		}
	}
}

/* The name cut to what fits in px (about 7 px a character); the script
 * does the same after a zoom. */
static void label(struct wbuf *out, const char *name, double px)
{
	int fit = (int)((px - 6) / 7);
	size_t len = strlen(name);
	char cut[1024];

	if (fit < 3)
		return;
	if (len <= (size_t)fit) {
		xml_text(out, name);
		return;
	}
	snprintf(cut, sizeof(cut), "%.*s..", fit - 2, name);
	xml_text(out, cut);
}

struct svg_frame {
	uint32_t node;
	double x; /* fraction of the root's width */
	uint32_t depth;
};

int cct_render_svg(const struct profile_source *src, const struct cct *view, struct wbuf *out, int fd)
{
	struct named_tree t;
	uint32_t *start = NULL, *kids = NULL, max_depth = 0;
	struct svg_frame *stack = NULL;
	int rc = -1;

	if (named_tree_init(&t) != 0 || named_tree_add_view(&t, view, src->methods, false) != 0)
		goto cleanup;
	named_tree_totals(&t);
	if (named_tree_children(&t, &start, &kids) != 0)
		goto cleanup;
	stack = malloc((t.nodes.n + 1) * sizeof(*stack));
	if (!stack)
		goto cleanup;

	double root_total = t.nodes.v[0].total ? (double)t.nodes.v[0].total : 1.0;
	double min_w = MIN_FRAME_PX / (SVG_WIDTH - 20);
	/* The height: the deepest frame drawn. */
	size_t sp = 0;
	stack[sp++] = (struct svg_frame){0, 0, 0};
	while (sp) {
		struct svg_frame f = stack[--sp];
		if (f.depth > max_depth)
			max_depth = f.depth;
		for (uint32_t i = start[f.node]; i < start[f.node + 1]; i++)
			if ((double)t.nodes.v[kids[i]].total / root_total >= min_w)
				stack[sp++] = (struct svg_frame){kids[i], 0, f.depth + 1};
	}
	int height = TOP_MARGIN + (int)(max_depth + 1) * FRAME_HEIGHT + BOTTOM_MARGIN;
	char subtitle[256];

	snprintf(subtitle, sizeof(subtitle), "%" PRIu64 " samples%s", t.nodes.v[0].total,
		 src->window ? " in the window asked for" : "");
	wbuf_printf(out,
		    "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		    "<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		    "xmlns=\"http://www.w3.org/2000/svg\">\n"
		    "<style>text { font-family: monospace; font-size: 12px; fill: #222; } "
		    "g.f { cursor: pointer; } g.f:hover rect { stroke: #333; stroke-width: 0.5; } "
		    ".button { cursor: pointer; fill: #2060a0; } #title { font-size: 16px; }</style>\n",
		    SVG_WIDTH, height, SVG_WIDTH, height);
	wbuf_printf(out, svg_script, SVG_WIDTH);
	wbuf_printf(out, "<rect width=\"100%%\" height=\"100%%\" fill=\"#fafafa\"/>\n<text id=\"title\" x=\"%d\" y=\"20\" "
			 "text-anchor=\"middle\">", SVG_WIDTH / 2);
	xml_text(out, src->title ? src->title : "jsampled profile");
	wbuf_printf(out, "</text>\n<text x=\"%d\" y=\"38\" text-anchor=\"middle\">", SVG_WIDTH / 2);
	xml_text(out, subtitle);
	wbuf_printf(out, "</text>\n<text id=\"reset\" class=\"button\" x=\"10\" y=\"20\">Reset zoom</text>\n"
			 "<text id=\"search\" class=\"button\" x=\"%d\" y=\"20\" text-anchor=\"end\">Search</text>\n"
			 "<text id=\"matched\" x=\"%d\" y=\"%d\" text-anchor=\"end\"></text>\n<g id=\"frames\">\n",
		    SVG_WIDTH - 10, SVG_WIDTH - 10, height - 8);

	/* Frames, depth first; x from the heavier siblings before. */
	sp = 0;
	stack[sp++] = (struct svg_frame){0, 0, 0};
	while (sp) {
		struct svg_frame f = stack[--sp];
		const struct named_node *n = &t.nodes.v[f.node];
		double w = (double)n->total / root_total;
		const char *name = t.names.v[n->name];
		int y = height - BOTTOM_MARGIN - (int)(f.depth + 1) * FRAME_HEIGHT;

		wbuf_printf(out, "<g class=\"f\" data-x=\"%.9f\" data-w=\"%.9f\" data-d=\"%u\" data-c=\"%s\" data-n=\"",
			    f.x, w, f.depth, kind_colour[n->kind < KIND_COUNT ? n->kind : KIND_PSEUDO]);
		xml_text(out, name);
		wbuf_printf(out, "\"><title>");
		xml_text(out, name);
		wbuf_printf(out, " (%s, %" PRIu64 " samples, %.2f%%; self %" PRIu64 ")</title>",
			    frame_kind_name((enum frame_kind)n->kind), n->total, 100.0 * w, n->self);
		wbuf_printf(out, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" rx=\"2\" fill=\"%s\"/>"
				 "<text x=\"%.2f\" y=\"%d\">",
			    10 + f.x * (SVG_WIDTH - 20), y, w * (SVG_WIDTH - 20), FRAME_HEIGHT - 1,
			    kind_colour[n->kind < KIND_COUNT ? n->kind : KIND_PSEUDO], 13 + f.x * (SVG_WIDTH - 20),
			    y + FRAME_HEIGHT - 4);
		label(out, name, w * (SVG_WIDTH - 20));
		wbuf_printf(out, "</text></g>\n");
		/* Children left to right, heaviest first: pushed in reverse. */
		double x = f.x;
		size_t first = sp;
		for (uint32_t i = start[f.node]; i < start[f.node + 1]; i++) {
			const struct named_node *c = &t.nodes.v[kids[i]];
			double cw = (double)c->total / root_total;
			if (cw >= min_w)
				stack[sp++] = (struct svg_frame){kids[i], x, f.depth + 1};
			x += cw;
		}
		for (size_t a = first, b = sp; b > a + 1; a++, b--) {
			struct svg_frame tmp = stack[a];
			stack[a] = stack[b - 1];
			stack[b - 1] = tmp;
		}
		if (cct_spill(out, fd, false))
			goto cleanup;
	}
	wbuf_printf(out, "</g>\n</svg>\n");
	rc = out->oom ? -1 : 0;
cleanup:
	free(start);
	free(kids);
	free(stack);
	named_tree_free(&t);
	return rc;
}
