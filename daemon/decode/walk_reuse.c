/* SPDX-License-Identifier: GPL-2.0-only */
#include "walk_reuse.h"

#include <stdlib.h>
#include <string.h>

#include "codemap.h"
#include "decoder.h"
#include "userspace/profile/method_table.h"

void walk_reuse_init(struct walk_reuse *r, size_t max_bytes)
{
	memset(r, 0, sizeof(*r));
	u64_map_init(&r->by_tid);
	r->max_bytes = max_bytes;
}

static size_t memo_bytes(const struct walk_memo *m)
{
	return sizeof(*m) + m->v_cap + m->b_cap * sizeof(*m->b) + m->k_cap * sizeof(*m->k) +
	       m->f_cap * sizeof(*m->frames);
}

static void memo_free(struct walk_memo *m)
{
	free(m->vals);
	free(m->b);
	free(m->k);
	free(m->frames);
	free(m);
}

static void free_all(struct walk_reuse *r)
{
	for (size_t i = 0; i < r->by_tid.cap; i++)
		if (r->by_tid.slots[i].key)
			memo_free((struct walk_memo *)(uintptr_t)r->by_tid.slots[i].val);
	u64_map_free(&r->by_tid); /* and empty again, ready for use */
	r->bytes = 0;
}

void walk_reuse_free(struct walk_reuse *r)
{
	free_all(r);
	u64_map_free(&r->by_tid);
}

struct walk_memo *walk_reuse_of(struct walk_reuse *r, uint32_t tid)
{
	uint64_t *v = u64_map_get(&r->by_tid, (uint64_t)tid + 1);
	struct walk_memo *m;

	if (v)
		return (struct walk_memo *)(uintptr_t)*v;
	if (r->bytes + sizeof(*m) > r->max_bytes) {
		/* Threads come and go: rather than track which memos still
		 * serve, start over (each thread's next sample makes its own). */
		free_all(r);
		r->resets++;
	}
	if (!(m = calloc(1, sizeof(*m))))
		return NULL;
	if (u64_map_put(&r->by_tid, (uint64_t)tid + 1, (uint64_t)(uintptr_t)m) != 0) {
		free(m);
		return NULL;
	}
	m->owner = r;
	r->bytes += memo_bytes(m);
	return m;
}

void walk_reuse_forget(struct walk_reuse *r, uint32_t tid)
{
	uint64_t *v = u64_map_get(&r->by_tid, (uint64_t)tid + 1);

	if (!v)
		return;
	r->bytes -= memo_bytes((struct walk_memo *)(uintptr_t)*v);
	memo_free((struct walk_memo *)(uintptr_t)*v);
	u64_map_del(&r->by_tid, (uint64_t)tid + 1);
}

bool walk_memo_fits(const struct walk_memo *m, const struct js_sample *s, const struct codemap *code,
		    const struct method_table *methods)
{
	/* Code loaded or unloaded between the two samples could change any
	 * lookup; so could any change to the code map or methods since. */
	return m && m->nb && m->stack_end == s->stack_end && m->time_ns <= s->time_ns &&
	       m->code_changes == code->changes && code->latest_event_ns <= m->time_ns &&
	       m->method_changes == methods->changes;
}

/* The frame pushed just before a step matters to the rest of the walk as
 * the callee its caller's call site must name (unwind_interpreted,
 * walk_try_caller): its method, type and flags, not where in it the
 * thread was (its bci). */
static bool same_callee(const struct trace_frame *a, const struct trace_frame *b)
{
	return a->method_id == b->method_id && a->type == b->type && a->flags == b->flags;
}

static bool same_state(const struct walk_step_state *a, const struct walk_step_state *b)
{
	return a->pc == b->pc && a->sp == b->sp && a->fp == b->fp && a->via_vm == b->via_vm &&
	       a->leaf_return == b->leaf_return && a->crossing == b->crossing && same_callee(&a->above, &b->above);
}

/* Whether s holds what the memo's step b (its key) read. Inline: a join
 * compares every boundary below it, tens a sample. */
static inline __attribute__((always_inline)) bool same_words(const struct walk_memo *m, const struct js_sample *s,
							    const struct memo_key *b)
{
	const uint8_t *x, *y = m->vals + b->val_at;
	uint32_t len = b->read_len;
	/* Below the copy's start the difference wraps past any length. */
	uint64_t off = b->read_lo - s->stack_addr;

	if (len == 0)
		return true;
	if (off > s->stack_len || s->stack_len - off < len)
		return false;
	x = s->stack + off;
	/* A compiled frame's step reads two words, compared inline, not by a
	 * call; an interpreted frame's reads its fixed slots, a scan's more:
	 * memcmp's vector compare takes those (xalan replay: 383M -> 262M
	 * instructions comparing, callgrind). */
	if (len > 16)
		return memcmp(x, y, len) == 0;
	for (; len >= 8; len -= 8, x += 8, y += 8) {
		uint64_t v, w;

		memcpy(&v, x, 8);
		memcpy(&w, y, 8);
		if (v != w)
			return false;
	}
	return len == 0 || memcmp(x, y, len) == 0;
}

/* Live, the sample's words come cold from the ring: the ones the memo's
 * steps [0, k) read are asked for all at once, not one miss after another
 * as the comparison reaches them. */
static void prefetch_reads(const struct walk_memo *m, const struct js_sample *s, uint32_t k)
{
	for (uint32_t i = 0; i < k; i++) {
		uint64_t at = m->k[i].read_lo - s->stack_addr;

		if (m->k[i].read_len && m->k[i].read_lo >= s->stack_addr && at < s->stack_len)
			__builtin_prefetch(s->stack + at);
	}
}

/* Boundary kk's state matched, but the words of boundary differs_at < kk
 * do not: the nearest boundary at or below kk whose words differ, looking
 * down from kk. A walk's successive calls look at disjoint ranges (the walk
 * goes on below the boundary the last one found), unless the run it found
 * had no room in the trace (4096 frames). */
static int32_t nearest_difference(const struct walk_log *log, const struct js_sample *s, uint32_t kk)
{
	const struct walk_memo *m = log->memo;

	for (uint32_t i = kk; i > (uint32_t)log->differs_at; i--)
		if (!same_words(m, s, &m->k[i]))
			return (int32_t)i;
	return log->differs_at;
}

int walk_memo_join(struct walk_log *log, const struct js_sample *s, const struct walk_step_state *at,
		   uint32_t *from_index, int32_t *skip_to)
{
	const struct walk_memo *m = log->memo;
	uint32_t k;

	if (skip_to)
		*skip_to = -1;
	if (!m || !walk_memo_seek(m, at->sp, from_index))
		return -1;
	k = *from_index;
	if (!same_state(&m->b[k - 1].at, at))
		return -1;
	/* Compared from the walk's last step up, once per sample: the
	 * boundaries below the first step whose words differ can all be
	 * joined. */
	if (log->checked == 0 && k > 1 && log->differs_at < 0)
		prefetch_reads(m, s, k);
	while (log->differs_at < 0 && log->checked < k) {
		if (!same_words(m, s, &m->k[log->checked]))
			log->differs_at = (int32_t)log->checked;
		else
			log->checked++;
	}
	if (log->differs_at < 0 || (uint32_t)log->differs_at >= k)
		return (int)(k - 1);
	/* Some step below differs: the steps down to the nearest such one
	 * may still be taken. */
	if (skip_to) {
		int32_t d = nearest_difference(log, s, k - 1);
		if ((uint32_t)d < k - 1)
			*skip_to = d;
	}
	return -1;
}

static int reserve(struct walk_memo *m, void **v, uint32_t *cap, uint32_t n, size_t size)
{
	uint32_t c = *cap ? *cap : 32;
	void *grown;

	if (n <= *cap)
		return 0;
	while (c < n)
		c *= 2;
	if (!(grown = realloc(*v, (size_t)c * size)))
		return -1;
	m->owner->bytes += (size_t)(c - *cap) * size;
	*v = grown;
	*cap = c;
	return 0;
}

static void forget_walk(struct walk_memo *m)
{
	m->nb = 0;
	m->nf = 0;
	m->nv = 0;
	m->bad_known = false;
}

/* trace_bad_caller of frames[from, to) (root first), as an index of frames. */
static int32_t bad_call_in(const struct method_table *methods, const struct trace_frame *frames, uint32_t from,
			   uint32_t to)
{
	int at = to > from ? trace_bad_caller(methods, frames + from, to - from, true) : -1;

	return at >= 0 ? at + (int32_t)from : -1;
}

int32_t walk_memo_bad_call(const struct walk_memo *m, uint32_t joined, const struct walk_log *log,
			   const struct trace_frame *frames, uint32_t n, const struct method_table *methods)
{
	uint32_t start = 0;
	int32_t at;

	if (m && m->bad_known && joined > 0 && joined <= m->nf) {
		if (m->bad_at >= 0 && (uint32_t)m->bad_at + 1 < joined)
			return m->bad_at;
		start = joined - 1; /* the call from the last joined frame on */
	}
	if (log && log->nruns && m && m->bad_known && m->bad_at < 0 && n <= TRACE_MAX_FRAMES) {
		/* Root first, the runs come last taken first. Between them,
		 * and from each one's last frame to the next, the calls are
		 * checked; inside one they are m's, and m had no bad one. */
		for (uint32_t k = log->nruns; k-- > 0;) {
			uint32_t a = n - log->run[k].to, b = n - log->run[k].from;

			if (log->run[k].to > n || log->run[k].from >= log->run[k].to || b <= start)
				continue;
			if (a > start && (at = bad_call_in(methods, frames, start, a + 1)) >= 0)
				return at;
			start = b - 1;
		}
	}
	return bad_call_in(methods, frames, start, n);
}

/* A step's words: most steps read a return address and a saved rbp (16
 * bytes) or one of them, which a copy of constant size does inline. */
static inline void copy_read(uint8_t *to, const uint8_t *from, uint32_t len)
{
	if (len == 16)
		memcpy(to, from, 16);
	else if (len == 8)
		memcpy(to, from, 8);
	else if (len)
		memcpy(to, from, len);
}

void walk_memo_update(struct walk_memo *m, const struct walk_log *log, const struct js_sample *s,
		      struct trace *trace, const struct codemap *code, const struct method_table *methods)
{
	const int32_t j = log->joined;
	const uint32_t n = trace->n;
	const uint64_t s_end = s->stack_addr + s->stack_len;
	uint32_t nb = j >= 0 ? (uint32_t)j + 1 : 0, r = j >= 0 ? m->b[j].below : 0;
	uint32_t nv = j >= 0 ? m->k[j].val_at + m->k[j].read_len : 0;
	uint64_t hi = j >= 0 && m->hi > log->hi ? m->hi : log->hi, vals = nv;

	if (log->n == 0 && j < 0)
		return; /* nothing walked below the top: what the memo has still stands */
	/* A trace with crossings links frames to entry frames by index; such
	 * walks (rare past start-up) are not kept. */
	if (trace->n_crossings || r > n || nv > m->nv)
		goto forget;
	/* What the new steps read lies in s's copy (the kept steps' reads do:
	 * the join compared them). */
	for (uint32_t k = 0; k < log->n; k++) {
		const struct walk_log_step *st = &log->step[k];

		if (st->step_lo >= st->step_hi)
			continue;
		if (st->step_lo < s->stack_addr || st->step_hi > s_end)
			goto forget;
		vals += st->step_hi - st->step_lo;
	}
	if (vals > WALK_MEMO_MAX_VALS || reserve(m, (void **)&m->b, &m->b_cap, nb + log->n, sizeof(*m->b)) != 0 ||
	    reserve(m, (void **)&m->k, &m->k_cap, nb + log->n, sizeof(*m->k)) != 0 ||
	    reserve(m, (void **)&m->frames, &m->f_cap, n, sizeof(*m->frames)) != 0 ||
	    reserve(m, (void **)&m->vals, &m->v_cap, (uint32_t)vals, 1) != 0)
		goto forget;
	/* The new steps, bottom first, each with the lowest address read from
	 * it on (its own reads and those of every step below it) and its own
	 * reads' words. */
	uint64_t below_from = nb ? m->b[nb - 1].from : UINT64_MAX;

	for (uint32_t k = log->n; k-- > 0;) {
		const struct walk_log_step *st = &log->step[k];
		uint32_t len = st->step_lo < st->step_hi ? (uint32_t)(st->step_hi - st->step_lo) : 0;

		copy_read(m->vals + nv, s->stack + (st->step_lo - s->stack_addr), len);
		m->k[nb] = (struct memo_key){
			.sp = st->at.sp, .pc = st->at.pc, .read_lo = st->step_lo, .read_len = len, .val_at = nv};
		if (st->step_lo < below_from)
			below_from = st->step_lo;
		m->b[nb++] = (struct memo_boundary){
			.at = st->at,
			.from = below_from,
			.below = n - st->n,
		};
		nv += len;
	}
	m->nb = nb;
	m->nv = nv;
	m->hi = hi;
	m->bad_at = walk_memo_bad_call(m, j >= 0 ? r : 0, log, trace->frames, n, methods);
	m->bad_known = true;
	trace->bad_call = m->bad_at;
	trace->bad_call_known = true;
	memcpy(m->frames + r, trace->frames + r, (n - r) * sizeof(*m->frames));
	m->nf = n;
	m->time_ns = s->time_ns;
	m->stack_end = s->stack_end;
	m->code_changes = code->changes;
	m->method_changes = methods->changes;
	m->max_read = trace->max_read;
	m->stop_pc = trace->stop_pc;
	m->stop_sp = trace->stop_sp;
	m->stop_fp = trace->stop_fp;
	return;
forget:
	forget_walk(m);
}
