/* SPDX-License-Identifier: GPL-2.0-only */
#include "cct_view.h"

#include <stdlib.h>

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

int cct_view_build(const struct cct *c, enum cct_view_bci bci, enum cct_view_frames frames,
		   struct slice_window *window, struct cct *out)
{
	size_t n = c->nodes.n;
	uint64_t *self = calloc(n ? n : 1, sizeof(*self)), *total = calloc(n ? n : 1, sizeof(*total));
	uint32_t *to = calloc(n ? n : 1, sizeof(*to));
	bool *in_other = calloc(n ? n : 1, sizeof(*in_other)); /* an [other] node or below one (a pruned method) */
	int rc = -1;

	if (cct_init(out, UINT32_MAX - 2) != 0 || !self || !total || !to || !in_other)
		goto cleanup;
	if (window)
		cct_slices_window(&c->slices, self, n, window);
	else
		for (size_t i = 0; i < n; i++)
			self[i] = c->self.v[i];
	for (size_t i = n; i-- > 0;) {
		total[i] += self[i];
		if (i)
			total[c->nodes.v[i].parent] += total[i];
	}
	/* Parents come first, so each kept node's parent is mapped already. */
	for (size_t i = 0; i < n; i++) {
		const struct cct_node *node = &c->nodes.v[i];

		if (!total[i])
			continue;
		if (i && frames == VIEW_JAVA && (node->type == FRAME_KERNEL || node->type == FRAME_C)) {
			/* kernel and C frames sit above the Java frames */
			to[i] = to[node->parent];
		} else if (i) {
			int32_t b = bci == VIEW_KEEP_BCI ? node->bci : -1;
			to[i] = cct_child(out, to[node->parent], node->method_id, node->type, b, 1);
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
	return rc;
}
