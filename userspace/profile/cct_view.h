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

enum cct_view_bci { VIEW_MERGE_BCI, VIEW_KEEP_BCI };

/* Which frames a view shows: Java's (and the pseudo frames), or Java's
 * with the kernel frames above them (--view mixed). A hidden frame's
 * samples go to the frame below it. */
enum cct_view_frames { VIEW_JAVA, VIEW_MIXED };

/* Builds out (initialised here; cct_free it) from c. window NULL: all of
 * the tree's samples; else the samples of the slices overlapping it (its
 * coverage is filled in). -1 if out of memory. */
int cct_view_build(const struct cct *c, enum cct_view_bci bci, enum cct_view_frames frames,
		   struct slice_window *window, struct cct *out);

/* Totals: total[i] = samples in node i and below (an array of
 * c->nodes.n, calloc'd; NULL if out of memory). */
uint64_t *cct_totals(const struct cct *c);

#endif
