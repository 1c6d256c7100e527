/* SPDX-License-Identifier: GPL-2.0-only */
/* A CCT's samples by time, in slices that coarsen with age: by default
 * 10-second slices for the last 10 minutes, then minutes for an hour, then
 * hours for a day. Each slice holds how many samples ended in which node
 * during it. A window (from, until) is answered from the slices it
 * overlaps (so its edges are as fine as the slices there); the tree itself
 * keeps the all-time totals. Bounded: slices past the last tier's age, or
 * past the byte cap (coarsened first, then dropped oldest first), go; their
 * samples stay in the tree, counted here as expired. */
#ifndef JSAMPLED_CCT_SLICES_H
#define JSAMPLED_CCT_SLICES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "userspace/common/vec.h"

#define SLICE_TIERS 3
/* The finest tier's span (seconds; divides 60) by default, and each tier's
 * age limit. */
#define SLICE_FINEST_S 5
#define SLICE_KEEP_S {10 * 60, 3600, 24 * 3600}
#define SLICE_SPANS {SLICE_FINEST_S, 60, 3600}
#define SLICES_MAX_BYTES (16u << 20)

struct slice_count {
	uint32_t node;
	uint64_t count;
};

/* An open slice's samples are appended to its pending log as they come (a
 * push: a hash map's lookup was a cache miss a sample in a deep tree) and
 * folded into its sorted counts a batch at a time (radix-sorted by node,
 * then merged). */
#define SLICE_PENDING_BATCH 4096

struct cct_slice {
	int64_t start_s; /* wall-clock second it begins */
	uint32_t span_s; /* one of the tiers' spans */
	bool open;       /* still growing: may have pending counts */
	uint64_t samples;
	VEC(struct slice_count) counts;  /* ascending by node, one entry a node */
	VEC(struct slice_count) pending; /* open: not yet in counts, in arrival order */
};

struct cct_slices {
	VEC(struct cct_slice) v; /* ascending by start; a coarse slice may cover finer ones after it */
	size_t bytes;
	size_t max_bytes;
	uint32_t span[SLICE_TIERS]; /* each tier's span, finest first: each divides the next */
	int64_t keep[SLICE_TIERS];  /* a slice older than this moves up a tier (the last: goes) */
	uint64_t expired_samples;   /* in slices dropped for age or memory */
	int64_t first_s, last_s;    /* the first and last second with a sample */
};

/* finest_s: the finest tier's span (a divisor of 60; 0: the default). */
void cct_slices_init(struct cct_slices *s);
void cct_slices_set_finest(struct cct_slices *s, uint32_t finest_s);
void cct_slices_free(struct cct_slices *s);
/* count samples ended in node at second t_s (> 0). -1 if out of memory
 * (the samples are then only in the tree, counted as expired). */
int cct_slices_add(struct cct_slices *s, int64_t t_s, uint32_t node, uint64_t count);
/* Coarsens and drops what the clock (now_s) and the byte cap say; cheap
 * when there is nothing to do. */
void cct_slices_tidy(struct cct_slices *s, int64_t now_s);

/* A saved slice, appended after the others (start not before the last
 * one's); its counts are sorted and merged here. -1 if malformed or out of
 * memory. */
int cct_slices_restore(struct cct_slices *s, int64_t start_s, uint32_t span_s, uint64_t samples,
		       struct slice_count *counts, size_t n);

struct slice_window {
	int64_t from_s, until_s;       /* asked for */
	int64_t covered_from, covered_until; /* the slices that answered (0, 0: none) */
	uint64_t samples;
};

/* The most counts one slice holds (sorted or pending): the room
 * cct_slices_renumber needs. */
size_t cct_slices_most_counts(const struct cct_slices *s);
/* Renumbers the nodes after the tree was pruned: node i becomes to[i]
 * (every node counted is below n; counts of nodes that become one add
 * up). tmp: room for cct_slices_most_counts entries. */
void cct_slices_renumber(struct cct_slices *s, const uint32_t *to, size_t n, struct slice_count *tmp);

/* Adds the counts of every slice overlapping [w->from_s, w->until_s) to
 * counts[node] (nodes < n), and fills in w's coverage and sample count. */
void cct_slices_window(const struct cct_slices *s, uint64_t *counts, size_t n, struct slice_window *w);

#endif
