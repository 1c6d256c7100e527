/* SPDX-License-Identifier: GPL-2.0-only */
#include "cct_slices.h"

#include <stdlib.h>
#include <string.h>

/* Slices kept open for samples that arrive late (held while the code map
 * caught up): the newest two. */
#define OPEN_SLICES 2

void cct_slices_init(struct cct_slices *s)
{
	const uint32_t spans[SLICE_TIERS] = SLICE_SPANS;
	const int64_t keep[SLICE_TIERS] = SLICE_KEEP_S;

	memset(s, 0, sizeof(*s));
	memcpy(s->span, spans, sizeof(spans));
	memcpy(s->keep, keep, sizeof(keep));
	s->max_bytes = SLICES_MAX_BYTES;
}

void cct_slices_set_finest(struct cct_slices *s, uint32_t finest_s)
{
	if (finest_s && 60 % finest_s == 0)
		s->span[0] = finest_s;
}

static size_t slice_bytes(const struct cct_slice *sl)
{
	return (sl->counts.cap + sl->pending.cap) * sizeof(struct slice_count);
}

static void slice_free(struct cct_slice *sl)
{
	vec_free(&sl->counts);
	vec_free(&sl->pending);
}

void cct_slices_free(struct cct_slices *s)
{
	for (size_t i = 0; i < s->v.n; i++)
		slice_free(&s->v.v[i]);
	vec_free(&s->v);
	s->bytes = 0;
}

/* The tier of a span; SLICE_TIERS - 1 for the coarsest (or unknown). */
static int tier_of(const struct cct_slices *s, uint32_t span)
{
	for (int t = 0; t < SLICE_TIERS - 1; t++)
		if (s->span[t] == span)
			return t;
	return SLICE_TIERS - 1;
}

static int by_node(const void *a, const void *b)
{
	uint32_t x = ((const struct slice_count *)a)->node, y = ((const struct slice_count *)b)->node;
	return (x > y) - (x < y);
}

/* Sorts v[0..n) by node, stable, through tmp (n entries): least
 * significant 11 bits first, skipping the digits every node has zero. */
static void sort_by_node(struct slice_count *v, struct slice_count *tmp, size_t n)
{
	struct slice_count *from = v, *to = tmp;
	uint32_t any = 0;

	for (size_t i = 0; i < n; i++)
		any |= v[i].node;
	for (unsigned shift = 0; shift < 32 && (any >> shift); shift += 11) {
		size_t at[2048] = {0}, sum = 0;

		for (size_t i = 0; i < n; i++)
			at[(from[i].node >> shift) & 2047]++;
		for (size_t d = 0; d < 2048; d++) {
			size_t c = at[d];
			at[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			to[at[(from[i].node >> shift) & 2047]++] = from[i];
		struct slice_count *t = from;
		from = to;
		to = t;
	}
	if (from != v)
		memcpy(v, from, n * sizeof(*v));
}

/* Merges a[0..na) and b[0..nb), each ascending by node (b may repeat
 * one), into out, one entry a node; the count of entries. */
static size_t merge_counts(const struct slice_count *a, size_t na, const struct slice_count *b, size_t nb,
			   struct slice_count *out)
{
	size_t i = 0, j = 0, k = 0;

	while (i < na || j < nb) {
		struct slice_count c = j == nb || (i < na && a[i].node <= b[j].node) ? a[i++] : b[j++];

		if (k && out[k - 1].node == c.node)
			out[k - 1].count += c.count;
		else
			out[k++] = c;
	}
	return k;
}

size_t cct_slices_most_counts(const struct cct_slices *s)
{
	size_t most = 0;

	for (size_t i = 0; i < s->v.n; i++) {
		if (s->v.v[i].counts.n > most)
			most = s->v.v[i].counts.n;
		if (s->v.v[i].pending.n > most)
			most = s->v.v[i].pending.n;
	}
	return most;
}

void cct_slices_renumber(struct cct_slices *s, const uint32_t *to, size_t n, struct slice_count *tmp)
{
	for (size_t i = 0; i < s->v.n; i++) {
		struct cct_slice *sl = &s->v.v[i];
		struct slice_count *v = sl->counts.v;
		size_t k = 0;

		/* A pending log is in arrival order anyway. */
		for (size_t j = 0; j < sl->pending.n; j++)
			if (sl->pending.v[j].node < n)
				sl->pending.v[j].node = to[sl->pending.v[j].node];
		for (size_t j = 0; j < sl->counts.n; j++)
			if (v[j].node < n)
				v[j].node = to[v[j].node];
		/* Kept nodes keep their order; nodes folded into an [other]
		 * node land anywhere: sort again, and add up the repeats. */
		sort_by_node(v, tmp, sl->counts.n);
		for (size_t j = 0; j < sl->counts.n; j++) {
			if (k && v[k - 1].node == v[j].node)
				v[k - 1].count += v[j].count;
			else
				v[k++] = v[j];
		}
		sl->counts.n = k;
	}
}

/* Folds an open slice's pending counts into its sorted ones. */
static int fold_pending(struct cct_slices *s, struct cct_slice *sl)
{
	size_t n = sl->pending.n, room = sl->counts.n + n, before = slice_bytes(sl);
	struct slice_count *tmp, *m;

	if (!n)
		return 0;
	if (!(tmp = malloc(n * sizeof(*tmp))))
		return -1;
	sort_by_node(sl->pending.v, tmp, n);
	free(tmp);
	if (!(m = malloc(room * sizeof(*m))))
		return -1;
	sl->counts.n = merge_counts(sl->counts.v, sl->counts.n, sl->pending.v, n, m);
	free(sl->counts.v);
	sl->counts.v = m;
	sl->counts.cap = room;
	sl->pending.n = 0;
	s->bytes = s->bytes - before + slice_bytes(sl);
	return 0;
}

/* An open slice's last counts are folded in and its log goes. */
static int slice_close(struct cct_slices *s, struct cct_slice *sl)
{
	size_t before;

	if (!sl->open)
		return 0;
	if (fold_pending(s, sl) != 0)
		return -1;
	before = slice_bytes(sl);
	vec_free(&sl->pending);
	sl->open = false;
	s->bytes = s->bytes - before + slice_bytes(sl);
	return 0;
}

/* Merges closed slice b into closed slice a. */
static int slice_merge(struct cct_slices *s, struct cct_slice *a, struct cct_slice *b)
{
	size_t room = a->counts.n + b->counts.n + 1, before = slice_bytes(a) + slice_bytes(b);
	struct slice_count *m = malloc(room * sizeof(*m));

	if (!m)
		return -1;
	a->counts.n = merge_counts(a->counts.v, a->counts.n, b->counts.v, b->counts.n, m);
	free(a->counts.v);
	a->counts.v = m;
	a->counts.cap = room;
	a->samples += b->samples;
	slice_free(b);
	b->samples = 0;
	s->bytes = s->bytes - before + slice_bytes(a);
	return 0;
}

static void slice_remove(struct cct_slices *s, size_t at)
{
	s->bytes -= slice_bytes(&s->v.v[at]);
	slice_free(&s->v.v[at]);
	memmove(&s->v.v[at], &s->v.v[at + 1], (s->v.n - at - 1) * sizeof(s->v.v[0]));
	s->v.n--;
}

/* A new open slice of the finest tier at index at (the array stays in
 * order). */
static struct cct_slice *slice_insert(struct cct_slices *s, size_t at, int64_t start)
{
	struct cct_slice fresh = {.start_s = start, .span_s = s->span[0], .open = true};

	if (vec_grow(&s->v) != 0)
		return NULL;
	memmove(&s->v.v[at + 1], &s->v.v[at], (s->v.n - at) * sizeof(s->v.v[0]));
	s->v.v[at] = fresh;
	s->v.n++;
	return &s->v.v[at];
}

static int slice_count_add(struct cct_slices *s, struct cct_slice *sl, uint32_t node, uint64_t count)
{
	struct slice_count c = {.node = node, .count = count};

	sl->samples += count;
	if (sl->open) {
		size_t before = sl->pending.cap;

		if (vec_push(&sl->pending, c) != 0)
			return -1;
		s->bytes += (sl->pending.cap - before) * sizeof(c);
		/* The sample is in the log either way: a fold that finds no
		 * memory is tried again on the next push. */
		if (sl->pending.n >= SLICE_PENDING_BATCH)
			(void)fold_pending(s, sl);
		return 0;
	}
	/* A late sample in a closed slice: rare, an insertion in order. */
	size_t lo = 0, hi = sl->counts.n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (sl->counts.v[mid].node < node)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < sl->counts.n && sl->counts.v[lo].node == node) {
		sl->counts.v[lo].count += count;
		return 0;
	}
	size_t before = slice_bytes(sl);
	if (vec_grow(&sl->counts) != 0)
		return -1;
	memmove(&sl->counts.v[lo + 1], &sl->counts.v[lo], (sl->counts.n - lo) * sizeof(c));
	sl->counts.v[lo] = c;
	sl->counts.n++;
	s->bytes += slice_bytes(sl) - before;
	return 0;
}

/* The newest slice holding second t (a coarse slice may cover finer ones
 * after it: the finer, newer one wins); NULL if none, and then *at is
 * where a new slice for t goes (starts are multiples of the finest span, so
 * the order holds). */
static struct cct_slice *slice_of(struct cct_slices *s, int64_t t, size_t *at)
{
	*at = s->v.n;
	for (size_t i = s->v.n; i-- > 0;) {
		struct cct_slice *c = &s->v.v[i];

		if (t >= c->start_s && t < c->start_s + c->span_s)
			return c;
		if (i == s->v.n - 1 && t >= c->start_s + c->span_s)
			return NULL; /* newer than all: appended */
		if (c->start_s > t)
			*at = i;
	}
	return NULL;
}

int cct_slices_add(struct cct_slices *s, int64_t t_s, uint32_t node, uint64_t count)
{
	int64_t start = t_s - t_s % s->span[0];
	struct cct_slice *sl;
	size_t at;

	if (!s->first_s || t_s < s->first_s)
		s->first_s = t_s;
	if (t_s > s->last_s)
		s->last_s = t_s;
	sl = slice_of(s, t_s, &at);
	if (!sl) {
		if (s->v.n && t_s < s->v.v[0].start_s && tier_of(s, s->v.v[0].span_s) > 0) {
			s->expired_samples += count; /* older than the fine slices kept */
			return 0;
		}
		bool newest = at == s->v.n;
		if (!slice_insert(s, at, start)) {
			s->expired_samples += count;
			return -1;
		}
		if (newest) { /* a new newest slice: age the others behind it */
			cct_slices_tidy(s, t_s);
			sl = slice_of(s, t_s, &at);
			if (!sl) { /* aged away at once: older than what is kept */
				s->expired_samples += count;
				return 0;
			}
		} else {
			sl = &s->v.v[at];
		}
	}
	if (slice_count_add(s, sl, node, count) != 0) {
		s->expired_samples += count;
		return -1;
	}
	return 0;
}

/* Moves slice i up a tier: into the slice before it if that one covers it
 * already, else it becomes a slice of the next tier's span. Returns the
 * index of the slice after. */
static size_t fold_up(struct cct_slices *s, size_t i)
{
	struct cct_slice *sl = &s->v.v[i];
	int tier = tier_of(s, sl->span_s);
	uint32_t span = s->span[tier + 1 < SLICE_TIERS ? tier + 1 : tier];
	int64_t start = sl->start_s - sl->start_s % span;

	if (slice_close(s, sl) != 0)
		return i + 1;
	if (i > 0) {
		struct cct_slice *prev = &s->v.v[i - 1];
		if (prev->start_s <= sl->start_s && prev->start_s + prev->span_s >= sl->start_s + sl->span_s) {
			if (slice_close(s, prev) != 0 || slice_merge(s, prev, sl) != 0)
				return i + 1;
			slice_remove(s, i);
			return i;
		}
	}
	sl->start_s = start;
	sl->span_s = span;
	return i + 1;
}

void cct_slices_tidy(struct cct_slices *s, int64_t now_s)
{
	size_t i;

	/* The oldest go past the last tier's age; the others move up a tier
	 * past theirs. */
	while (s->v.n && tier_of(s, s->v.v[0].span_s) == SLICE_TIERS - 1 &&
	       s->v.v[0].start_s + s->v.v[0].span_s <= now_s - s->keep[SLICE_TIERS - 1]) {
		s->expired_samples += s->v.v[0].samples;
		slice_remove(s, 0);
	}
	for (i = 0; i < s->v.n;) {
		struct cct_slice *sl = &s->v.v[i];
		int tier = tier_of(s, sl->span_s);
		if (tier < SLICE_TIERS - 1 && sl->start_s + sl->span_s <= now_s - s->keep[tier])
			i = fold_up(s, i);
		else
			i++;
	}
	for (i = 0; i + OPEN_SLICES < s->v.n; i++)
		slice_close(s, &s->v.v[i]);
	/* Over the byte cap: coarsen from the oldest, then drop the oldest;
	 * the newest slice always stays. */
	for (i = 0; s->bytes > s->max_bytes && i + 1 < s->v.n;) {
		if (tier_of(s, s->v.v[i].span_s) < SLICE_TIERS - 1)
			i = fold_up(s, i);
		else
			i++;
	}
	while (s->bytes > s->max_bytes && s->v.n > 1) {
		s->expired_samples += s->v.v[0].samples;
		slice_remove(s, 0);
	}
}

void cct_slices_window(const struct cct_slices *s, uint64_t *counts, size_t n, struct slice_window *w)
{
	w->covered_from = w->covered_until = 0;
	w->samples = 0;
	for (size_t i = 0; i < s->v.n; i++) {
		const struct cct_slice *sl = &s->v.v[i];
		int64_t end = sl->start_s + sl->span_s;

		if (end <= w->from_s || sl->start_s >= w->until_s)
			continue;
		if (!w->covered_until || sl->start_s < w->covered_from)
			w->covered_from = sl->start_s;
		if (end > w->covered_until)
			w->covered_until = end;
		w->samples += sl->samples;
		for (size_t k = 0; k < sl->counts.n; k++)
			if (sl->counts.v[k].node < n)
				counts[sl->counts.v[k].node] += sl->counts.v[k].count;
		for (size_t k = 0; k < sl->pending.n; k++)
			if (sl->pending.v[k].node < n)
				counts[sl->pending.v[k].node] += sl->pending.v[k].count;
	}
	/* Nothing before the first sample or after the last is claimed. */
	if (w->covered_until) {
		if (s->first_s > w->covered_from)
			w->covered_from = s->first_s;
		if (s->last_s + 1 < w->covered_until)
			w->covered_until = s->last_s + 1;
	}
}

int cct_slices_restore(struct cct_slices *s, int64_t start_s, uint32_t span_s, uint64_t samples,
		       struct slice_count *counts, size_t n)
{
	struct cct_slice sl = {.start_s = start_s, .span_s = span_s, .samples = samples};
	size_t k = 0;

	if (s->v.n && start_s < s->v.v[s->v.n - 1].start_s)
		return -1;
	/* Restored nodes may have folded together: merge equal ones. */
	qsort(counts, n, sizeof(*counts), by_node);
	for (size_t i = 0; i < n; i++) {
		if (k && counts[k - 1].node == counts[i].node)
			counts[k - 1].count += counts[i].count;
		else
			counts[k++] = counts[i];
	}
	for (size_t i = 0; i < k; i++)
		if (vec_push(&sl.counts, counts[i]) != 0) {
			vec_free(&sl.counts);
			return -1;
		}
	if (vec_push(&s->v, sl) != 0) {
		vec_free(&sl.counts);
		return -1;
	}
	s->bytes += slice_bytes(&s->v.v[s->v.n - 1]);
	if (!s->first_s || start_s < s->first_s)
		s->first_s = start_s;
	if (start_s + span_s - 1 > s->last_s)
		s->last_s = start_s + span_s - 1;
	return 0;
}
