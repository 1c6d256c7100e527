/* SPDX-License-Identifier: GPL-2.0-only */
#include "stack_bottoms.h"

#include <stdlib.h>
#include <string.h>

/* An incomplete trace waiting for its thread's image to vouch for the words
 * below its fragment. Its own last words are kept to check the join. */
struct pending_trace {
	struct js_sample *s; /* the sample, without its words: the start of mem */
	struct walk_resume resume;
	uint64_t max_read;
	uint64_t tail_addr, end; /* its fragment's words [tail_addr, end) are kept */
	uint64_t shallowest;     /* the highest sp of the thread's samples since */
	uint32_t n, tail_len;
	uint8_t top_rule;
	void *mem; /* the sample's header, n frames (root first), tail_len bytes of words */
};

static struct trace_frame *pending_frames(const struct pending_trace *pt)
{
	return (struct trace_frame *)((uint8_t *)pt->mem + sizeof(struct js_sample));
}

static const uint8_t *pending_tail(const struct pending_trace *pt)
{
	return (const uint8_t *)(pending_frames(pt) + pt->n);
}

/* One thread's stack as its samples showed it: words [lo, hi) in s (a
 * sample whose copy starts at lo, so the decoder reads it like any other;
 * stack_len 0 while no sample has given words). The words from valid_from
 * up were copied by the newest sample or have not been seen to change
 * since: no sample showed the thread's sp above them, so their frames are
 * the ones that were there. */
struct stack_image {
	uint64_t valid_from;
	struct js_sample *s;
	uint32_t fit; /* the thread's samples since one whose copy was capped */
	uint32_t npend;
	struct pending_trace pend[STACK_BOTTOM_PENDING]; /* oldest first */
};

void stack_bottoms_init(struct stack_bottoms *b, size_t max_bytes)
{
	memset(b, 0, sizeof(*b));
	u64_map_init(&b->by_tid);
	b->max_bytes = max_bytes;
}

static struct stack_image *image_of(struct stack_bottoms *b, uint32_t tid)
{
	uint64_t *v = u64_map_get(&b->by_tid, (uint64_t)tid + 1);

	return v ? (struct stack_image *)(uintptr_t)*v : NULL;
}

static size_t pending_bytes(const struct pending_trace *pt)
{
	return sizeof(struct js_sample) + pt->n * sizeof(struct trace_frame) + pt->tail_len;
}

/* Removes img's waiting trace i (settled or dropped). */
static void pending_remove(struct stack_bottoms *b, struct stack_image *img, uint32_t i)
{
	b->bytes -= pending_bytes(&img->pend[i]);
	b->pending--;
	free(img->pend[i].mem);
	memmove(&img->pend[i], &img->pend[i + 1], (img->npend - i - 1) * sizeof(img->pend[0]));
	img->npend--;
}

/* The waiting trace as the decoder left it, in b->settling. */
static struct trace *unpack(struct stack_bottoms *b, const struct pending_trace *pt)
{
	struct trace *tr = b->settling;

	tr->n = pt->n;
	tr->complete = false;
	tr->top_rule = pt->top_rule;
	tr->stop_pc = tr->stop_sp = tr->stop_fp = 0;
	tr->wait = 0;
	tr->wait_key = 0;
	tr->max_read = pt->max_read;
	tr->work = 0;
	tr->resume = pt->resume;
	tr->from_image = false;
	tr->frozen = false; /* a frozen trace is never kept to wait */
	tr->via_chunk = false;
	tr->chunk_from = 0;
	tr->chunk_rejected = false;
	tr->joined = 0;
	tr->bad_call_known = false;
	memcpy(tr->frames, pending_frames(pt), pt->n * sizeof(tr->frames[0]));
	/* Its crossings are not kept while it waits: no frame names one. */
	tr->n_crossings = 0;
	for (uint32_t i = 0; i < pt->n; i++)
		tr->frames[i].flags &= (uint8_t)~(0xfu << FRAME_CROSSING_SHIFT);
	return tr;
}

/* Hands img's waiting trace i to the sink - completed (the trace in
 * b->settling) or not, as how says - and removes it. */
static void settle(struct stack_bottoms *b, struct stack_image *img, uint32_t i, enum bottom_outcome how,
		   const struct bottom_sink *sink)
{
	struct trace *tr = how == BOTTOM_COMPLETED ? b->settling : unpack(b, &img->pend[i]);

	if (sink && sink->settle)
		sink->settle(sink->ctx, img->pend[i].s, how, tr);
	pending_remove(b, img, i);
}

static void image_free(struct stack_bottoms *b, struct stack_image *img, const struct bottom_sink *sink)
{
	if (!img)
		return;
	while (img->npend)
		settle(b, img, 0, BOTTOM_NO_IMAGE, sink);
	b->bytes -= img->s->stack_len + sizeof(*img);
	free(img->s);
	free(img);
}

void stack_bottoms_forget(struct stack_bottoms *b, uint32_t tid, const struct bottom_sink *sink)
{
	struct stack_image *img = image_of(b, tid);

	if (img) {
		u64_map_del(&b->by_tid, (uint64_t)tid + 1);
		image_free(b, img, sink);
	}
}

void stack_bottoms_flush(struct stack_bottoms *b, const struct bottom_sink *sink)
{
	for (size_t i = 0; i < b->by_tid.cap; i++) {
		struct stack_image *img = (struct stack_image *)(uintptr_t)b->by_tid.slots[i].val;

		while (b->by_tid.slots[i].key && img->npend)
			settle(b, img, 0, BOTTOM_NO_IMAGE, sink);
	}
}

void stack_bottoms_free(struct stack_bottoms *b)
{
	for (size_t i = 0; i < b->by_tid.cap; i++)
		if (b->by_tid.slots[i].key)
			image_free(b, (struct stack_image *)(uintptr_t)b->by_tid.slots[i].val, NULL);
	u64_map_free(&b->by_tid);
	free(b->settling);
	memset(b, 0, sizeof(*b));
}

static uint64_t end_of(const struct js_sample *s)
{
	return s->stack_addr + s->stack_len;
}

/* An image of no words yet: the thread is known to run deep. Its own
 * size counts in the process's budget too (a process of many deep
 * threads). */
static struct stack_image *image_new(struct stack_bottoms *b, const struct js_sample *s)
{
	struct stack_image *img = NULL;

	if (b->bytes + sizeof(*img) > b->max_bytes) {
		b->refused++;
		return NULL;
	}
	img = calloc(1, sizeof(*img));
	if (!img || !(img->s = calloc(1, sizeof(*img->s))) ||
	    u64_map_put(&b->by_tid, (uint64_t)s->tid + 1, (uint64_t)(uintptr_t)img) != 0) {
		if (img)
			free(img->s);
		free(img);
		return NULL;
	}
	img->s->tid = s->tid;
	img->s->pid = s->pid;
	img->s->stack_end = s->stack_end;
	b->bytes += sizeof(*img);
	return img;
}

/* The image's words go (they passed a limit, or changed where a sample
 * ended); what waits on it stays. */
static void image_clear(struct stack_bottoms *b, struct stack_image *img)
{
	struct js_sample *shrunk = realloc(img->s, sizeof(*img->s));

	if (shrunk)
		img->s = shrunk;
	b->bytes -= img->s->stack_len;
	img->s->stack_len = 0;
	img->valid_from = 0;
}

/* Lays s's words over the thread's image, growing it to cover them; a
 * sample that does not touch the image starts it over. false if the image
 * would pass its limits (its words are then dropped). */
static bool take_words(struct stack_bottoms *b, struct stack_image *img, const struct js_sample *s)
{
	struct js_sample *grown;
	uint64_t lo = s->stack_addr, hi = end_of(s), old_lo = img->s->stack_addr, old_len = img->s->stack_len;

	if (old_len && s->stack_addr <= end_of(img->s) && hi >= old_lo) {
		lo = lo < old_lo ? lo : old_lo;
		hi = hi > end_of(img->s) ? hi : end_of(img->s);
	} else {
		old_len = 0; /* disjoint: start over */
	}
	if (hi - lo > STACK_BOTTOM_MAX_BYTES || b->bytes - img->s->stack_len + (hi - lo) > b->max_bytes) {
		image_clear(b, img);
		b->refused++;
		return false;
	}
	if (hi - lo != img->s->stack_len || !old_len) {
		if (!(grown = realloc(img->s, sizeof(*grown) + (hi - lo)))) {
			image_clear(b, img);
			b->refused++;
			return false;
		}
		if (old_len && lo < old_lo) /* grew at the top: the old words move up */
			memmove(grown->stack + (old_lo - lo), grown->stack, old_len);
		b->bytes = b->bytes - grown->stack_len + (hi - lo);
		img->s = grown;
	}
	/* The image reads like a sample whose copy starts at its top. */
	img->s->tid = s->tid;
	img->s->pid = s->pid;
	img->s->time_ns = s->time_ns;
	img->s->stack_end = s->stack_end;
	img->s->stack_addr = lo;
	img->s->stack_len = (uint32_t)(hi - lo);
	img->s->regs[JS_REG_SP] = lo;
	memcpy(img->s->stack + (s->stack_addr - lo), s->stack, s->stack_len);
	img->valid_from = s->stack_addr;
	return true;
}

/* Whether the image vouches, now, for the words [from, end) and all above. */
static bool image_covers(const struct stack_image *img, uint64_t from, uint64_t end)
{
	return img->s->stack_len && from >= img->valid_from && from >= img->s->stack_addr && end_of(img->s) > end;
}

const struct js_sample *stack_bottoms_extend(struct stack_bottoms *b, const struct js_sample *s, uint32_t max_len,
					     struct js_sample **buf, size_t *buf_size)
{
	struct stack_image *img = image_of(b, s->tid);
	uint64_t s_end = end_of(s), from = s_end - STACK_BOTTOM_VERIFY_BYTES, img_end, len;
	struct js_sample *out;

	if (!img || !(s->flags & JS_SAMPLE_STACK_CAPPED) || img->s->stack_end != s->stack_end ||
	    s->stack_len < STACK_BOTTOM_VERIFY_BYTES || s->stack_addr > UINT64_MAX - s->stack_len ||
	    !image_covers(img, from, s_end))
		return s;
	img_end = end_of(img->s);
	len = img_end - s->stack_addr;
	if (len > max_len ||
	    memcmp(img->s->stack + (from - img->s->stack_addr), s->stack + (from - s->stack_addr), s_end - from) != 0)
		return s;
	if (*buf_size < sizeof(*s) + len) {
		if (!(out = realloc(*buf, sizeof(*s) + len)))
			return s;
		*buf = out;
		*buf_size = sizeof(*s) + len;
	}
	out = *buf;
	memcpy(out, s, sizeof(*s) + s->stack_len);
	memcpy(out->stack + s->stack_len, img->s->stack + (s_end - img->s->stack_addr), img_end - s_end);
	out->stack_len = (uint32_t)len;
	b->extended++;
	return out;
}

/* Walks on from tr's resume point over the image and puts the frames found
 * below tr's (tr root first: its last resume.n frames were found before the
 * frame the fragment ended in, which the walk on finds again). */
static enum bottom_outcome walk_on(const struct stack_image *img, const struct decode_ctx *ctx, struct trace *tr,
				   struct trace *scratch)
{
	uint32_t keep = tr->resume.n, m;
	struct trace_frame join[2];

	if (keep == 0 || keep > tr->n)
		return BOTTOM_NO_IMAGE;
	if (decode_from_caller(ctx, img->s, &tr->resume, scratch) != DECODE_RESOLVED)
		return BOTTOM_WALK_FAILED;
	m = scratch->n;
	if (m) {
		join[0] = scratch->frames[m - 1];
		join[1] = tr->frames[tr->n - keep];
	}
	if (m + keep > TRACE_MAX_FRAMES || (m && trace_bad_caller(ctx->methods, join, 2, true) >= 0))
		return BOTTOM_WALK_FAILED;
	memmove(&tr->frames[m], &tr->frames[tr->n - keep], keep * sizeof(tr->frames[0]));
	memcpy(tr->frames, scratch->frames, m * sizeof(tr->frames[0]));
	tr->n = m + keep;
	tr->joined += scratch->joined;
	tr->complete = true;
	tr->from_image = true;
	/* The trace's call check: the frames the walk on joined from the
	 * thread's memo were checked with it (a deep stack's completions
	 * were each a whole-trace check, 30,000 instructions apiece in a
	 * Jython replay). */
	tr->bad_call = walk_memo_bad_call(scratch->joined ? ctx->memo : NULL, scratch->joined, NULL, tr->frames, tr->n,
					  ctx->methods);
	tr->bad_call_known = true;
	return BOTTOM_COMPLETED;
}

/* Completes tr (incomplete, root first) of the newest sample s from the
 * image. BOTTOM_NO_IMAGE: the image does not reach where s ends. */
static enum bottom_outcome complete(struct stack_bottoms *b, struct stack_image *img, const struct decode_ctx *ctx,
				    const struct js_sample *s, struct trace *tr, struct trace *scratch)
{
	uint64_t s_end = end_of(s), from = s_end - STACK_BOTTOM_VERIFY_BYTES;

	/* The last words of the fragment must be ones the image vouches for
	 * (at or below valid_from), all of them: a few words (a saved rbp and
	 * a return address) are the same in every frame of a recursion. */
	if (s->stack_len < STACK_BOTTOM_VERIFY_BYTES || !image_covers(img, from, s_end))
		return BOTTOM_NO_IMAGE;
	if (memcmp(img->s->stack + (from - img->s->stack_addr), s->stack + (from - s->stack_addr), s_end - from) != 0) {
		/* The thread's older frames changed: nothing below is sure. */
		image_clear(b, img);
		b->mismatched++;
		return BOTTOM_MISMATCH;
	}
	if (!take_words(b, img, s))
		return BOTTOM_NO_IMAGE;
	return walk_on(img, ctx, tr, scratch);
}

/* Keeps s's incomplete trace tr to wait for the image. false if it cannot
 * (no room, or too little of the fragment to check a join with). */
static bool defer(struct stack_bottoms *b, struct stack_image *img, const struct js_sample *s, const struct trace *tr,
		  const struct bottom_sink *sink)
{
	uint64_t end = end_of(s), tail = end - STACK_BOTTOM_VERIFY_BYTES;
	struct pending_trace *pt;
	size_t frames = tr->n * sizeof(tr->frames[0]);

	/* The join is checked over the words the walk on reads again (from
	 * the frame it resumes in) and at least the verified tail. */
	if (tr->resume.sp < tail)
		tail = tr->resume.sp;
	if (!sink || s->stack_len < STACK_BOTTOM_VERIFY_BYTES || tail < s->stack_addr ||
	    end - tail > 4 * STACK_BOTTOM_VERIFY_BYTES || tr->resume.n == 0 || tr->resume.n > tr->n)
		return false;
	if (!b->settling && !(b->settling = malloc(sizeof(*b->settling))))
		return false;
	if (img->npend == STACK_BOTTOM_PENDING)
		settle(b, img, 0, BOTTOM_NO_IMAGE, sink);
	if (b->bytes + sizeof(*s) + frames + (end - tail) > b->max_bytes)
		return false;
	pt = &img->pend[img->npend];
	memset(pt, 0, sizeof(*pt));
	if (!(pt->mem = malloc(sizeof(*s) + frames + (end - tail))))
		return false;
	pt->s = pt->mem;
	memcpy(pt->s, s, sizeof(*s));
	pt->s->stack_len = 0;
	pt->resume = tr->resume;
	pt->max_read = tr->max_read;
	pt->top_rule = tr->top_rule;
	pt->n = tr->n;
	pt->tail_addr = tail;
	pt->end = end;
	pt->tail_len = (uint32_t)(end - tail);
	pt->shallowest = s->regs[JS_REG_SP];
	memcpy(pending_frames(pt), tr->frames, frames);
	memcpy((uint8_t *)pending_frames(pt) + frames, s->stack + (tail - s->stack_addr), pt->tail_len);
	img->npend++;
	b->pending++;
	b->bytes += pending_bytes(pt);
	return true;
}

/* Tries img's waiting traces against the image as it is now; settles those
 * completed, and those that never can be. */
static void settle_ready(struct stack_bottoms *b, struct stack_image *img, const struct decode_ctx *ctx,
			 struct trace *scratch, const struct bottom_sink *sink)
{
	for (uint32_t i = 0; i < img->npend;) {
		struct pending_trace *pt = &img->pend[i];
		enum bottom_outcome how;

		if (pt->shallowest > pt->tail_addr) {
			how = BOTTOM_NO_IMAGE; /* the frames it ended in returned */
		} else if (img->s->time_ns < pt->s->time_ns || !image_covers(img, pt->tail_addr, pt->end)) {
			i++; /* nothing yet vouches for the gap */
			continue;
		} else if (memcmp(img->s->stack + (pt->tail_addr - img->s->stack_addr),
				  pending_tail(pt), pt->tail_len) != 0) {
			how = BOTTOM_MISMATCH;
		} else {
			how = walk_on(img, ctx, unpack(b, pt), scratch);
		}
		settle(b, img, i, how, sink);
	}
}

/* Traces that waited past STACK_BOTTOM_PENDING_NS (by sample time) settle
 * incomplete; looked for at most twice per period. */
static void settle_overdue(struct stack_bottoms *b, uint64_t now_ns, const struct bottom_sink *sink)
{
	if (!b->pending || now_ns < b->swept_ns + STACK_BOTTOM_PENDING_NS / 2)
		return;
	b->swept_ns = now_ns;
	for (size_t i = 0; i < b->by_tid.cap; i++) {
		struct stack_image *img = (struct stack_image *)(uintptr_t)b->by_tid.slots[i].val;

		while (b->by_tid.slots[i].key && img->npend && img->pend[0].s->time_ns + STACK_BOTTOM_PENDING_NS < now_ns)
			settle(b, img, 0, BOTTOM_NO_IMAGE, sink);
	}
}

/* A sample of the thread, later than its waiting traces, shows how far up
 * its stack the thread has been since them. */
static void note_sp(struct stack_image *img, const struct js_sample *s)
{
	for (uint32_t i = 0; i < img->npend; i++)
		if (img->pend[i].s->time_ns <= s->time_ns && s->regs[JS_REG_SP] > img->pend[i].shallowest)
			img->pend[i].shallowest = s->regs[JS_REG_SP];
}

enum bottom_outcome stack_bottoms_take(struct stack_bottoms *b, const struct decode_ctx *ctx,
				       const struct js_sample *s, enum decode_status st, struct trace *tr,
				       struct trace *scratch, const struct bottom_sink *sink)
{
	struct stack_image *img = image_of(b, s->tid);
	enum bottom_outcome out = BOTTOM_NONE;

	/* A copy whose end wraps around is no stack (only a lying record's). */
	if (s->stack_len < 8 || s->stack_addr > UINT64_MAX - s->stack_len || st == DECODE_RETRY)
		return BOTTOM_NONE;
	settle_overdue(b, s->time_ns, sink);
	if (img && img->s->stack_end != s->stack_end) {
		stack_bottoms_forget(b, s->tid, sink); /* another stack on the tid */
		img = NULL;
	}
	if (img)
		note_sp(img, s);
	if (st == DECODE_NOT_JAVA) {
		out = BOTTOM_NONE; /* no Java frames left: what waits may settle */
	} else if (img && img->s->stack_len && s->time_ns < img->s->time_ns) {
		/* A sample decoded late (it waited for code) knows less than the
		 * image: it neither teaches nor borrows. */
		return st == DECODE_INCOMPLETE ? BOTTOM_NO_IMAGE : BOTTOM_NONE;
	} else if (st != DECODE_INCOMPLETE) {
		/* Only deep stacks (the copy reached its limit) need an image.
		 * A failed sample's words are the thread's all the same. */
		if (!img && st == DECODE_RESOLVED && (s->flags & JS_SAMPLE_STACK_CAPPED))
			img = image_new(b, s);
		if (img && (s->flags & JS_SAMPLE_STACK_CAPPED))
			img->fit = 0;
		if (img && ++img->fit > STACK_BOTTOM_IDLE_SAMPLES && !img->npend) {
			/* The thread's copies have all reached its bottom for a
			 * while: its image goes, and with it the copy of each
			 * sample into it, until it runs deep again (an incomplete
			 * sample then waits for the next sample's words). */
			stack_bottoms_forget(b, s->tid, sink);
			b->idled++;
			img = NULL;
		} else if (img) {
			take_words(b, img, s);
		}
	} else {
		/* The thread runs deeper than its copies: it keeps an image from
		 * now on, which its next complete sample starts. */
		if (!img)
			img = image_new(b, s);
		out = img ? complete(b, img, ctx, s, tr, scratch) : BOTTOM_NO_IMAGE;
		if ((out == BOTTOM_NO_IMAGE || out == BOTTOM_MISMATCH) && defer(b, img, s, tr, sink))
			out = BOTTOM_DEFERRED;
	}
	if (img && img->npend)
		settle_ready(b, img, ctx, scratch, sink);
	return out;
}

bool stack_bottoms_fill(struct stack_bottoms *b, const struct decode_ctx *ctx, const struct js_sample *s,
			struct trace *scratch, const struct bottom_sink *sink)
{
	struct stack_image *img = image_of(b, s->tid);
	uint64_t end = end_of(s);

	if (s->stack_len < STACK_BOTTOM_VERIFY_BYTES || s->stack_addr > UINT64_MAX - s->stack_len)
		return false;
	if (img && img->s->stack_end != s->stack_end) {
		stack_bottoms_forget(b, s->tid, sink); /* another stack on the tid */
		img = NULL;
	}
	if (!img && !(img = image_new(b, s)))
		return false;
	settle_overdue(b, s->time_ns, sink);
	note_sp(img, s);
	if (s->flags & JS_SAMPLE_FILL_TOP) {
		/* The top of the stack as it is now: an image of its own. */
		image_clear(b, img);
	} else if (img->s->stack_len < STACK_BOTTOM_VERIFY_BYTES || img->s->time_ns != s->time_ns ||
		   img->s->stack_addr < s->stack_addr ||
		   img->s->stack_addr + STACK_BOTTOM_VERIFY_BYTES > end ||
		   memcmp(img->s->stack, s->stack + (img->s->stack_addr - s->stack_addr),
			  STACK_BOTTOM_VERIFY_BYTES) != 0) {
		return false; /* not the next window down of the same tick */
	}
	if (!take_words(b, img, s))
		return false;
	if (img->npend)
		settle_ready(b, img, ctx, scratch, sink);
	return true;
}
