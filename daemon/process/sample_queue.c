/* SPDX-License-Identifier: GPL-2.0-only */
#include "sample_queue.h"

#include <stdlib.h>
#include <string.h>

/* Chunks of a held copy are compared with its thread's base at these
 * address-aligned boundaries: small enough that a changed local in a deep
 * frame costs little, large enough that the bitmap and the compare loop
 * stay cheap (recorded Jython/xalan/JDK 25 start-up runs: 256 B kept
 * 33/37/24 % of the bytes, 1 KiB 35/40/34 %). */
#define CHUNK_SHIFT 8
#define CHUNK (1u << CHUNK_SHIFT)
/* Smaller copies are held as they are (sharing would save little). */
#define SHARE_MIN_BYTES 2048u
/* Most chunks per copy (SAMPLE_QUEUE_MAX_COPY, unaligned). */
#define MAX_CHUNKS (SAMPLE_QUEUE_MAX_COPY / CHUNK + 1)

static size_t chunk_count(const struct js_sample *s)
{
	if (!s->stack_len)
		return 0;
	return (size_t)(((s->stack_addr + s->stack_len - 1) >> CHUNK_SHIFT) - (s->stack_addr >> CHUNK_SHIFT) + 1);
}

static size_t mask_bytes(const struct js_sample *s) { return (chunk_count(s) + 7) / 8; }

/* Bit i of a copy's chunk mask: the chunk is the copy's own. */
static bool own_bit(const uint8_t *mask, size_t i) { return mask[i / 8] & (1u << (i % 8)); }
static void set_own_bit(uint8_t *mask, size_t i) { mask[i / 8] |= (uint8_t)(1u << (i % 8)); }

/* The bytes an entry itself takes (its base is counted on its own). */
static size_t entry_bytes(const struct held_sample *h)
{
	if (!h->base)
		return sample_bytes(h->s);
	return sizeof(*h->s) + h->own_bytes + mask_bytes(h->s);
}

static size_t base_bytes(const struct stack_base *b) { return sizeof(*b) + b->len; }

static const uint32_t trim_levels[SAMPLE_QUEUE_TRIM_LEVELS] = {SAMPLE_QUEUE_TRIM_BYTES, SAMPLE_QUEUE_MIN_BYTES};

/* Counts a copy of len bytes in (delta 1) or out of (-1) its base's users
 * no longer than each trim level. */
static void base_count(struct stack_base *b, uint32_t len, int delta)
{
	for (int l = 0; l < SAMPLE_QUEUE_TRIM_LEVELS; l++)
		if (len <= trim_levels[l])
			b->within[l] += (uint32_t)delta;
}

/* Chunk i of s: its bytes [*lo, *hi) in stack addresses. */
static void chunk_range(const struct js_sample *s, size_t i, uint64_t *lo, uint64_t *hi)
{
	uint64_t c = ((s->stack_addr >> CHUNK_SHIFT) + i) << CHUNK_SHIFT, end = s->stack_addr + s->stack_len;

	*lo = c < s->stack_addr ? s->stack_addr : c;
	*hi = c + CHUNK < end ? c + CHUNK : end;
}

static void base_put(struct sample_queue *q, struct stack_base *b)
{
	uint64_t *cur;

	if (!b || --b->refs)
		return;
	cur = u64_map_get(&q->bases, b->tid);
	if (cur && *cur == (uint64_t)(uintptr_t)b)
		u64_map_del(&q->bases, b->tid);
	q->bytes -= base_bytes(b);
	free(b->bytes);
	free(b);
}

void sample_queue_init(struct sample_queue *q, size_t max_bytes)
{
	memset(q, 0, sizeof(*q));
	q->max_bytes = max_bytes;
	u64_map_init(&q->bases);
}

void sample_queue_release(struct sample_queue *q, struct held_sample *h)
{
	if (h->base)
		base_count(h->base, h->s->stack_len, -1);
	free(h->s);
	h->s = NULL;
	base_put(q, h->base);
	h->base = NULL;
}

void sample_queue_free(struct sample_queue *q)
{
	for (size_t i = q->head; i < q->items.n; i++) {
		q->bytes -= entry_bytes(&q->items.v[i]);
		sample_queue_release(q, &q->items.v[i]);
	}
	vec_free(&q->items);
	u64_map_free(&q->bases);
	free(q->view);
	q->view = NULL;
	q->head = 0;
	q->bytes = 0;
}

static void compact(struct sample_queue *q)
{
	if (q->head == 0 || q->head * 2 < q->items.n)
		return;
	memmove(q->items.v, q->items.v + q->head, (q->items.n - q->head) * sizeof(*q->items.v));
	q->items.n -= q->head;
	for (int l = 0; l < SAMPLE_QUEUE_TRIM_LEVELS; l++)
		q->cut_upto[l] = q->cut_upto[l] > q->head ? q->cut_upto[l] - q->head : 0;
	q->head = 0;
}

bool sample_queue_pop(struct sample_queue *q, struct held_sample *h)
{
	if (q->head >= q->items.n)
		return false;
	*h = q->items.v[q->head++];
	q->bytes -= entry_bytes(h);
	compact(q);
	return true;
}

/* Writes the whole copy of h (header included) to out, its top len bytes. */
static void assemble(const struct held_sample *h, struct js_sample *out, uint32_t len)
{
	const struct js_sample *s = h->s;
	const uint8_t *own = s->stack, *mask = s->stack + h->own_bytes;
	size_t n = chunk_count(s);

	memcpy(out, s, sizeof(*s));
	out->stack_len = len;
	for (size_t i = 0; i < n; i++) {
		uint64_t lo, hi;
		size_t k;

		chunk_range(s, i, &lo, &hi);
		k = (size_t)(hi - lo);
		if (own_bit(mask, i)) {
			if (lo - s->stack_addr < len)
				memcpy(out->stack + (lo - s->stack_addr), own,
				       hi - s->stack_addr <= len ? k : len - (lo - s->stack_addr));
			own += k;
		} else if (lo - s->stack_addr < len) {
			memcpy(out->stack + (lo - s->stack_addr), h->base->bytes + (lo - h->base->addr),
			       hi - s->stack_addr <= len ? k : len - (lo - s->stack_addr));
		}
	}
}

const struct js_sample *sample_queue_view(struct sample_queue *q, const struct held_sample *h)
{
	if (!h->base)
		return h->s;
	if (!q->view) {
		q->view = malloc(sizeof(*q->view) + SAMPLE_QUEUE_MAX_COPY);
		if (!q->view)
			return NULL;
	}
	if (h->s->stack_len > SAMPLE_QUEUE_MAX_COPY)
		return NULL;
	assemble(h, q->view, h->s->stack_len);
	return q->view;
}

void sample_queue_drop_view(struct sample_queue *q)
{
	free(q->view);
	q->view = NULL;
}

/* Once all its users are no longer than a level, a base keeps only the
 * bytes they can read: up to the highest user's start plus the level. */
static void shrink_base(struct sample_queue *q, struct stack_base *b)
{
	uint64_t keep = b->len;
	uint8_t *smaller;

	for (int l = 0; l < SAMPLE_QUEUE_TRIM_LEVELS; l++)
		if (b->within[l] == b->refs && b->max_user_addr + trim_levels[l] - b->addr < keep)
			keep = b->max_user_addr + trim_levels[l] - b->addr;
	if (keep >= b->len || !(smaller = realloc(b->bytes, keep ? keep : 1)))
		return;
	q->bytes -= b->len - keep;
	b->bytes = smaller;
	b->len = (uint32_t)keep;
}

/* Cuts a shared copy to its top len bytes in place: its own chunks past
 * that go, its base stays (and shrinks once no user reads its deep part). */
static bool cut_shared(struct sample_queue *q, struct held_sample *h, uint32_t len)
{
	const struct js_sample *s = h->s;
	const uint8_t *mask = s->stack + h->own_bytes, *from = s->stack;
	uint64_t end = s->stack_addr + len;
	struct js_sample shape = *s, *c;
	size_t n = chunk_count(s), kept, own = 0;
	uint8_t *out;

	shape.stack_len = len;
	kept = chunk_count(&shape);
	for (size_t i = 0; i < kept; i++) {
		uint64_t lo, hi;

		chunk_range(s, i, &lo, &hi);
		if (own_bit(mask, i))
			own += (hi < end ? hi : end) - lo;
	}
	c = malloc(sizeof(*c) + own + (kept + 7) / 8);
	if (!c)
		return false;
	memcpy(c, s, sizeof(*c));
	c->stack_len = len;
	out = c->stack;
	memset(c->stack + own, 0, (kept + 7) / 8);
	for (size_t i = 0; i < n; i++) {
		uint64_t lo, hi;

		chunk_range(s, i, &lo, &hi);
		if (!own_bit(mask, i))
			continue;
		if (i < kept) {
			memcpy(out, from, (hi < end ? hi : end) - lo);
			out += (hi < end ? hi : end) - lo;
			set_own_bit(c->stack + own, i);
		}
		from += hi - lo;
	}
	base_count(h->base, s->stack_len, -1);
	base_count(h->base, len, 1);
	free(h->s);
	h->s = c;
	h->own_bytes = (uint32_t)own;
	shrink_base(q, h->base);
	return true;
}

/* Cuts a held sample's copy to its top len bytes (if longer). *first: it
 * had not been cut before. */
static void trim(struct sample_queue *q, struct held_sample *h, uint32_t len, bool *first)
{
	struct js_sample *smaller;
	bool was_cut = h->s->flags & JS_SAMPLE_HELD_TRIMMED;

	*first = false;
	if (h->s->stack_len <= len)
		return;
	q->bytes -= entry_bytes(h);
	if (h->base) {
		if (!cut_shared(q, h, len)) { /* kept whole: nothing saved */
			q->bytes += entry_bytes(h);
			return;
		}
	} else {
		h->s->stack_len = len;
		smaller = realloc(h->s, sample_bytes(h->s));
		if (smaller)
			h->s = smaller;
		h->own_bytes = len;
	}
	h->s->flags |= JS_SAMPLE_HELD_TRIMMED;
	q->bytes += entry_bytes(h);
	*first = !was_cut;
}

/* Cuts the oldest samples to level l until need more bytes fit. */
static void trim_older(struct sample_queue *q, int l, size_t need, uint32_t *trimmed)
{
	size_t i = q->cut_upto[l] > q->head ? q->cut_upto[l] : q->head;
	bool first;

	for (; i < q->items.n && q->bytes + need > q->max_bytes; i++) {
		trim(q, &q->items.v[i], trim_levels[l], &first);
		*trimmed += first;
	}
	q->cut_upto[l] = i;
}

/* How s would be held against its thread's base b: the chunks that differ
 * are set in mask; returns their bytes (the whole copy if b does not
 * cover it at all). */
static size_t own_chunks(const struct js_sample *s, const struct stack_base *b, uint8_t *mask)
{
	size_t n = chunk_count(s), own = 0;

	memset(mask, 0, (n + 7) / 8);
	for (size_t i = 0; i < n; i++) {
		uint64_t lo, hi;

		chunk_range(s, i, &lo, &hi);
		if (lo >= b->addr && hi <= b->addr + b->len &&
		    memcmp(s->stack + (lo - s->stack_addr), b->bytes + (lo - b->addr), hi - lo) == 0)
			continue;
		set_own_bit(mask, i);
		own += hi - lo;
	}
	return own;
}

/* Makes h a holder of s's own chunks against base b (mask from
 * own_chunks, own bytes of them); false if out of memory. */
static bool hold_shared(struct held_sample *h, const struct js_sample *s, struct stack_base *b, const uint8_t *mask,
			size_t own)
{
	size_t n = chunk_count(s), mb = (n + 7) / 8;
	uint8_t *out;

	h->s = malloc(sizeof(*s) + own + mb);
	if (!h->s)
		return false;
	memcpy(h->s, s, sizeof(*s));
	out = h->s->stack;
	for (size_t i = 0; i < n; i++) {
		uint64_t lo, hi;

		if (!own_bit(mask, i))
			continue;
		chunk_range(s, i, &lo, &hi);
		memcpy(out, s->stack + (lo - s->stack_addr), hi - lo);
		out += hi - lo;
	}
	memcpy(out, mask, mb);
	h->base = b;
	h->own_bytes = (uint32_t)own;
	b->refs++;
	base_count(b, s->stack_len, 1);
	if (s->stack_addr > b->max_user_addr)
		b->max_user_addr = s->stack_addr;
	return true;
}

/* A new base of s's thread holding all of s's copy, referenced once (by
 * the caller, until a sample holds it). */
static struct stack_base *new_base(struct sample_queue *q, const struct js_sample *s)
{
	struct stack_base *b = calloc(1, sizeof(*b));

	if (!b || !(b->bytes = malloc(s->stack_len))) {
		free(b);
		return NULL;
	}
	b->refs = 1;
	b->tid = s->tid;
	b->addr = s->stack_addr;
	b->max_user_addr = s->stack_addr;
	b->len = s->stack_len;
	memcpy(b->bytes, s->stack, s->stack_len);
	if (u64_map_put(&q->bases, s->tid, (uint64_t)(uintptr_t)b) != 0) {
		free(b->bytes);
		free(b);
		return NULL;
	}
	q->bytes += base_bytes(b);
	return b;
}

/* Holds s whole as a copy of its own (its top keep bytes). */
static bool hold_plain(struct held_sample *h, const struct js_sample *s, uint32_t keep)
{
	h->s = malloc(sizeof(*s) + keep);
	if (!h->s)
		return false;
	memcpy(h->s, s, sizeof(*s) + keep);
	h->base = NULL;
	h->own_bytes = keep;
	if (keep < s->stack_len) {
		h->s->stack_len = keep;
		h->s->flags |= JS_SAMPLE_HELD_TRIMMED;
	}
	return true;
}

enum hold_plan { HOLD_PLAIN, HOLD_SHARED, HOLD_NEW_BASE };

int sample_queue_push(struct sample_queue *q, const struct js_sample *s, uint32_t fragment_len, uint8_t wait,
		      uint64_t key, uint32_t *trimmed)
{
	struct held_sample h = {.fragment_len = fragment_len, .wait = wait, .key = key};
	uint8_t mask[(MAX_CHUNKS + 7) / 8];
	enum hold_plan plan = HOLD_PLAIN;
	struct stack_base *b = NULL;
	uint32_t keep = s->stack_len;
	struct held_sample old;
	size_t need = sizeof(*s) + keep, own = 0;
	bool ok;
	int dropped = 0;

	/* Against the thread's base when that saves at least half; a big copy
	 * that cannot becomes the thread's new base. The base is referenced
	 * here so that making room below cannot free it. */
	if (s->stack_len >= SHARE_MIN_BYTES && s->stack_len <= SAMPLE_QUEUE_MAX_COPY) {
		uint64_t *cur = u64_map_get(&q->bases, s->tid);

		plan = HOLD_NEW_BASE;
		if (cur) {
			b = (struct stack_base *)(uintptr_t)*cur;
			own = own_chunks(s, b, mask);
			if ((own + mask_bytes(s)) * 2 <= s->stack_len) {
				plan = HOLD_SHARED;
				b->refs++;
			} else {
				b = NULL;
			}
		}
		need = plan == HOLD_SHARED ? sizeof(*s) + own + mask_bytes(s)
					   : sizeof(*s) + mask_bytes(s) + sizeof(*b) + s->stack_len;
	}

	/* Full: first give up the deep parts of big copies, this one's and
	 * then the oldest ones', level by level (deep-stack threads at high
	 * rates fill the queue within tens of milliseconds); drop whole
	 * samples last. */
	for (int l = 0; l < SAMPLE_QUEUE_TRIM_LEVELS && q->bytes + need > q->max_bytes; l++) {
		if (keep > trim_levels[l])
			keep = trim_levels[l];
		if (sizeof(*s) + keep < need) {
			need = sizeof(*s) + keep;
			plan = HOLD_PLAIN;
		}
		trim_older(q, l, need, trimmed);
	}
	if (need > q->max_bytes) {
		base_put(q, b);
		return -1;
	}
	while (q->bytes + need > q->max_bytes && sample_queue_pop(q, &old)) {
		sample_queue_release(q, &old);
		dropped++;
	}
	if (plan == HOLD_NEW_BASE) {
		memset(mask, 0, mask_bytes(s));
		own = 0;
		b = new_base(q, s);
		plan = b ? HOLD_SHARED : HOLD_PLAIN;
	}
	if (plan == HOLD_SHARED) {
		ok = hold_shared(&h, s, b, mask, own);
		base_put(q, b); /* this push's own reference */
	} else {
		base_put(q, b);
		ok = hold_plain(&h, s, keep);
	}
	if (!ok)
		return -1;
	if (plan == HOLD_PLAIN && keep < s->stack_len)
		(*trimmed)++;
	if (plan == HOLD_SHARED)
		q->shared_bytes += s->stack_len - own;
	if (vec_push(&q->items, h) != 0) {
		sample_queue_release(q, &h);
		return -1;
	}
	q->bytes += entry_bytes(&h);
	if (q->bytes > q->peak_bytes)
		q->peak_bytes = q->bytes;
	return dropped;
}

int sample_queue_requeue(struct sample_queue *q, const struct held_sample *h)
{
	if (vec_push(&q->items, *h) != 0)
		return -1;
	q->bytes += entry_bytes(h);
	return 0;
}

uint64_t sample_queue_oldest_ns(const struct sample_queue *q)
{
	uint64_t oldest = UINT64_MAX;

	/* Requeued samples go to the back: the front is not always the oldest. */
	for (size_t i = q->head; i < q->items.n; i++)
		if (q->items.v[i].s->time_ns < oldest)
			oldest = q->items.v[i].s->time_ns;
	return oldest;
}
