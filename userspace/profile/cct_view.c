/* SPDX-License-Identifier: GPL-2.0-only */
#include "cct_view.h"

#include <stdlib.h>

#include "kernel_symbols.h"
#include "thread_pools.h"
#include "trace.h"

uint64_t *cct_totals(const struct cct *c)
{
	uint64_t *total = calloc(c->nodes.n ? c->nodes.n : 1, sizeof(*total));

	if (!total)
		return NULL;
	/* Nodes come after their parents: one reverse scan sums subtrees. */
	for (size_t i = c->nodes.n; i-- > 0;) {
		total[i] += c->self.v[i];
		if (i)
			total[c->nodes.v[i].parent] += total[i];
	}
	return total;
}

/* A virtual thread's root below its carrier's frames (process_samples.c),
 * moved to the tree's root unless the view shows the carrier. */
static bool moves_to_root(const struct cct_node *node, unsigned frames)
{
	return !(frames & VIEW_CARRIER) && node->parent != 0 && node->type == FRAME_PSEUDO &&
	       node->method_id == PSEUDO_VTHREAD;
}

/* The root of the off-CPU samples' paths (process_samples.c). */
static bool off_cpu_root(const struct cct_node *node)
{
	return node->parent == 0 && node->type == FRAME_PSEUDO && node->method_id == PSEUDO_OFFCPU;
}

/* Whether the view's profile type counts a node's own samples: off is
 * whether the node is the [off-CPU] node or below it. */
static bool counted(unsigned frames, bool off)
{
	if (frames & VIEW_WALL)
		return true;
	return (frames & VIEW_OFFCPU) ? off : !off;
}

int cct_view_build(const struct cct *c, enum cct_view_bci bci, unsigned frames,
		   struct slice_window *window, struct cct *out)
{
	return cct_view_build_threads(c, bci, frames, window, NULL, out);
}

int cct_view_build_threads(const struct cct *c, enum cct_view_bci bci, unsigned frames,
			   struct slice_window *window, const char *threads, struct cct *out)
{
	size_t n = c->nodes.n;
	uint64_t *self = calloc(n ? n : 1, sizeof(*self)), *total = calloc(n ? n : 1, sizeof(*total));
	uint32_t *to = calloc(n ? n : 1, sizeof(*to));
	bool *in_other = calloc(n ? n : 1, sizeof(*in_other)); /* an [other] node or below one (a pruned method) */
	/* bit 0: the [off-CPU] node or below it; bit 1: of an unselected thread pool */
	uint8_t *off = calloc(n ? n : 1, sizeof(*off));
	int rc = -1;

	if (cct_init(out, UINT32_MAX - 2) != 0 || !self || !total || !to || !in_other || !off)
		goto cleanup;
	if (window)
		cct_slices_window(&c->slices, self, n, window);
	else
		for (size_t i = 0; i < n; i++)
			self[i] = c->self.v[i];
	/* The profile type: the samples of the other kind are not there;
	 * nor those of the thread pools not selected. */
	for (size_t i = 1; i < n; i++) {
		const struct cct_node *node = &c->nodes.v[i];
		bool parent_off = off[node->parent] & 1, parent_out = off[node->parent] & 2;
		bool out_of_view = parent_out || (threads && node->type == FRAME_THREAD &&
						  !thread_pool_selected(threads, kernel_symbols_name(node->method_id)));

		off[i] = (uint8_t)((off_cpu_root(node) || parent_off) | (out_of_view ? 2 : 0));
		if (!counted(frames, off[i] & 1) || out_of_view)
			self[i] = 0;
	}
	/* A moved subtree's samples are not its carrier frames' any more. */
	for (size_t i = n; i-- > 0;) {
		total[i] += self[i];
		if (i && !moves_to_root(&c->nodes.v[i], frames))
			total[c->nodes.v[i].parent] += total[i];
	}
	/* Parents come first, so each kept node's parent is mapped already. */
	for (size_t i = 0; i < n; i++) {
		const struct cct_node *node = &c->nodes.v[i];

		if (!total[i])
			continue;
		if (i && off_cpu_root(node)) {
			/* its paths start at the view's root */
			to[i] = 0;
		} else if (i && !(frames & VIEW_MIXED) && (node->type == FRAME_KERNEL || node->type == FRAME_C)) {
			/* kernel and C frames sit above the Java frames */
			to[i] = to[node->parent];
		} else if (i && !(frames & VIEW_THREADS) && node->type == FRAME_THREAD) {
			to[i] = to[node->parent];
		} else if (i) {
			int32_t b = bci == VIEW_KEEP_BCI ? node->bci : -1;
			uint32_t parent = moves_to_root(node, frames) ? 0 : to[node->parent];

			to[i] = cct_child(out, parent, node->method_id, node->type, b, 1);
			if (!to[i])
				goto cleanup;
		}
		out->self.v[to[i]] += self[i];
		out->samples += self[i];
		in_other[i] = cct_is_overflow_node(node) || (i && in_other[node->parent]);
		if (in_other[i])
			out->overflow_samples += self[i];
	}
	rc = 0;
cleanup:
	free(self);
	free(total);
	free(to);
	free(in_other);
	free(off);
	return rc;
}
