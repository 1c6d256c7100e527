/* SPDX-License-Identifier: GPL-2.0-only */
/* What a rendering shows of a CCT: all of it or the samples of a time
 * window, frames told apart by bci (pprof: a line per frame) or merged when
 * they differ only by bci (the tree, folded, JSON and page formats), and no
 * node without samples in or below it. A view is a CCT of its own, built in
 * the rendering child from the live tree (a copy-on-write snapshot). */
#ifndef JSAMPLED_CCT_VIEW_H
#define JSAMPLED_CCT_VIEW_H

#include <stdbool.h>

#include "cct.h"
#include "cct_slices.h"
#include "view_names.h"

enum cct_view_bci { VIEW_MERGE_BCI, VIEW_KEEP_BCI };


/* Builds out (initialised here; cct_free it) from c. window NULL: all of
 * the tree's samples; else the samples of the slices overlapping it (its
 * coverage is filled in). -1 if out of memory. */
int cct_view_build(const struct cct *c, enum cct_view_bci bci, unsigned frames,
		   struct slice_window *window, struct cct *out);
/* The same, of the threads a selector takes in (thread_pools.h; NULL:
 * all): the paths below other pools' [thread] nodes are left out. */
int cct_view_build_threads(const struct cct *c, enum cct_view_bci bci, unsigned frames,
			   struct slice_window *window, const char *threads, struct cct *out);

/* Totals: total[i] = samples in node i and below (an array of
 * c->nodes.n, calloc'd; NULL if out of memory). */
uint64_t *cct_totals(const struct cct *c);

#endif
