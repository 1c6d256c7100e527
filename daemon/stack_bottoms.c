#include "stack_bottoms.h"

#include <stdlib.h>
#include <string.h>

/* One thread's stack as its samples showed it: words [lo, hi) in s (a
 * sample whose copy starts at lo, so the decoder reads it like any other).
 * The words from valid_from up were copied by the newest sample or have
 * not been seen to change since: no sample showed the thread's sp above
 * them, so their frames are the ones that were there. */
struct stack_image {
	uint64_t valid_from;
	struct js_sample *s;
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

static void image_free(struct stack_image *img)
{
	if (img) {
		free(img->s);
		free(img);
	}
}

void stack_bottoms_forget(struct stack_bottoms *b, uint32_t tid)
{
	struct stack_image *img = image_of(b, tid);

	if (img) {
		b->bytes -= img->s->stack_len;
		image_free(img);
		u64_map_del(&b->by_tid, (uint64_t)tid + 1);
	}
}

void stack_bottoms_free(struct stack_bottoms *b)
{
	for (size_t i = 0; i < b->by_tid.cap; i++)
		if (b->by_tid.keys[i])
			image_free((struct stack_image *)(uintptr_t)b->by_tid.vals[i]);
	u64_map_free(&b->by_tid);
	memset(b, 0, sizeof(*b));
}

static uint64_t end_of(const struct js_sample *s)
{
	return s->stack_addr + s->stack_len;
}

static struct stack_image *image_new(struct stack_bottoms *b, uint32_t tid)
{
	struct stack_image *img = calloc(1, sizeof(*img));

	if (!img || !(img->s = calloc(1, sizeof(*img->s))) ||
	    u64_map_put(&b->by_tid, (uint64_t)tid + 1, (uint64_t)(uintptr_t)img) != 0) {
		image_free(img);
		return NULL;
	}
	return img;
}

/* Lays s's words over the thread's image, growing it to cover them; a
 * sample that does not touch the image starts it over. false if the image
 * would pass its limits (it is then dropped). */
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
		stack_bottoms_forget(b, s->tid);
		b->refused++;
		return false;
	}
	if (hi - lo != img->s->stack_len || !old_len) {
		if (!(grown = realloc(img->s, sizeof(*grown) + (hi - lo)))) {
			stack_bottoms_forget(b, s->tid);
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

/* Completes tr (incomplete, root first) from the image. */
static enum bottom_outcome complete(struct stack_bottoms *b, struct stack_image *img, const struct decode_ctx *ctx,
				    const struct js_sample *s, struct trace *tr, struct trace *scratch)
{
	uint64_t s_end = end_of(s), from = s_end - STACK_BOTTOM_VERIFY_BYTES;
	uint32_t keep = tr->resume.n, m;
	struct trace_frame join[2];

	/* The last words of the fragment must be ones the image vouches for
	 * (at or below valid_from), all of them: a few words (a saved rbp and
	 * a return address) are the same in every frame of a recursion. */
	if (s->stack_len < STACK_BOTTOM_VERIFY_BYTES || from < img->valid_from || from < img->s->stack_addr ||
	    end_of(img->s) <= s_end || keep == 0 || keep > tr->n)
		return BOTTOM_NO_IMAGE;
	if (memcmp(img->s->stack + (from - img->s->stack_addr), s->stack + (from - s->stack_addr), s_end - from) != 0) {
		/* The thread's older frames changed: nothing below is sure. */
		stack_bottoms_forget(b, s->tid);
		return BOTTOM_MISMATCH;
	}
	if (!take_words(b, img, s))
		return BOTTOM_NO_IMAGE;
	if (decode_from_caller(ctx, img->s, &tr->resume, scratch) != DECODE_RESOLVED)
		return BOTTOM_WALK_FAILED;
	m = scratch->n;
	/* tr is root first: its last `keep` frames were found before the
	 * frame the fragment ended in, which the walk on found again. */
	if (m) {
		join[0] = scratch->frames[m - 1];
		join[1] = tr->frames[tr->n - keep];
	}
	if (m + keep > TRACE_MAX_FRAMES || (m && trace_bad_caller(ctx->methods, join, 2, true) >= 0))
		return BOTTOM_WALK_FAILED;
	memmove(&tr->frames[m], &tr->frames[tr->n - keep], keep * sizeof(tr->frames[0]));
	memcpy(tr->frames, scratch->frames, m * sizeof(tr->frames[0]));
	tr->n = m + keep;
	tr->complete = true;
	tr->from_image = true;
	return BOTTOM_COMPLETED;
}

enum bottom_outcome stack_bottoms_take(struct stack_bottoms *b, const struct decode_ctx *ctx,
				       const struct js_sample *s, enum decode_status st, struct trace *tr,
				       struct trace *scratch)
{
	struct stack_image *img = image_of(b, s->tid);

	/* A copy whose end wraps around is no stack (only a lying record's). */
	if (s->stack_len < 8 || s->stack_addr > UINT64_MAX - s->stack_len || st == DECODE_NOT_JAVA ||
	    st == DECODE_RETRY)
		return BOTTOM_NONE;
	if (img && img->s->stack_end != s->stack_end) {
		stack_bottoms_forget(b, s->tid); /* another stack on the tid */
		img = NULL;
	}
	/* A sample decoded late (it waited for code) knows less than the
	 * image: it neither teaches nor borrows. */
	if (img && s->time_ns < img->s->time_ns)
		return st == DECODE_INCOMPLETE ? BOTTOM_NO_IMAGE : BOTTOM_NONE;
	if (st != DECODE_INCOMPLETE) {
		/* Only deep stacks (the copy reached its limit) need an image.
		 * A failed sample's words are the thread's all the same. */
		if (!img && st == DECODE_RESOLVED && (s->flags & JS_SAMPLE_STACK_CAPPED))
			img = image_new(b, s->tid);
		if (img)
			take_words(b, img, s);
		return BOTTOM_NONE;
	}
	if (!img)
		return BOTTOM_NO_IMAGE;
	if (end_of(s) < img->valid_from) {
		/* A gap between the fragment and what the image vouches for;
		 * the thread's sp was above valid_from at some point, or not -
		 * unknown. Frames above the fragment's sp are gone, though. */
		return BOTTOM_NO_IMAGE;
	}
	return complete(b, img, ctx, s, tr, scratch);
}
