/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The bottoms of deep stacks. A thread's older frames do not change while
 * it runs above them, so a sample that copied only the top of a stack
 * deeper than its fragment can borrow the rest from the same thread's
 * earlier copies: per thread, one image of its stack as the newest samples
 * showed it (each sample's words laid over the older ones). An incomplete
 * trace is completed by walking on, over that image, from where its own
 * fragment ended - only if the image's words at the end of the new
 * fragment are the ones the new sample copied (the frames the walk stopped
 * in are still the same), the walk reaches the thread's first Java frame,
 * and the joined frames call each other through invoke instructions that
 * name their callees. Otherwise the trace stays incomplete.
 *
 * A thread that went deeper between two samples than its copies reach
 * leaves a gap between a new fragment and the image. Such a trace waits
 * (a few per thread, for a second at most) for a later sample - on the
 * thread's way back up - to show the words of the gap, as long as no
 * sample since showed the thread above where the waiting fragment ends:
 * the frames there are still the ones the waiting sample saw.
 *
 * A deep sample held for code is decoded after newer samples of its
 * thread have laid their words over the image, and could borrow nothing
 * from it then. So when it is held, it takes along the image's words below
 * its fragment, as the image is then, if the image vouches for them as
 * completing it would (stack_bottoms_extend): it is decoded later as one
 * copy of the whole stack. Held copies of a thread share their equal
 * words (sample_queue.h), so the older words cost little.
 */
#ifndef JSAMPLED_STACK_BOTTOMS_H
#define JSAMPLED_STACK_BOTTOMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/sampler.h"
#include "userspace/common/u64_map.h"
#include "decoder.h"

/* One thread's image covers at most this much of its stack. */
#define STACK_BOTTOM_MAX_BYTES (1u << 20)
/* All of one process's images (and the traces waiting on them) together. */
#define STACK_BOTTOMS_PROCESS_BYTES (8u << 20)
/* Words at the end of a new fragment that must equal the image's. */
#define STACK_BOTTOM_VERIFY_BYTES 256u
/* A thread whose samples' copies all reached its bottom for this many
 * samples in a row loses its image (stack_bottoms_take). */
#define STACK_BOTTOM_IDLE_SAMPLES 1024u
/* Traces of one thread waiting for a later sample to vouch for the words
 * below their fragments, and how long they may wait (by sample time). */
#define STACK_BOTTOM_PENDING 16u
#define STACK_BOTTOM_PENDING_NS 1000000000ull

struct stack_image;

struct stack_bottoms {
	struct u64_map by_tid; /* tid + 1 -> struct stack_image * */
	size_t bytes, max_bytes;
	uint64_t refused;  /* images dropped: over max_bytes or STACK_BOTTOM_MAX_BYTES */
	uint64_t idled;    /* images dropped: STACK_BOTTOM_IDLE_SAMPLES without a capped copy */
	uint64_t extended; /* held samples that took the image's words along */
	uint64_t mismatched; /* images whose words a sample showed changed (and went) */
	uint32_t pending;  /* traces waiting now, all threads */
	uint64_t swept_ns; /* sample time of the last sweep for overdue waits */
	struct trace *settling; /* a waiting trace being settled (made on first use) */
};

enum bottom_outcome {
	BOTTOM_NONE,        /* nothing to complete (the image may have learnt from the sample) */
	BOTTOM_COMPLETED,   /* the trace is complete now */
	BOTTOM_NO_IMAGE,    /* no image of the thread reaching on from where the fragment ends */
	BOTTOM_MISMATCH,    /* the image's words differ where the fragment ends */
	BOTTOM_WALK_FAILED, /* the walk on did not reach the bottom, or joined badly */
	BOTTOM_DEFERRED,    /* kept: a later sample may vouch for what lies below it */
};

/* Where a trace that waited is handed when it is settled: completed
 * (BOTTOM_COMPLETED, the trace now complete) or not (why, the trace as it
 * was). s is the sample without its words (stack_len 0). */
struct bottom_sink {
	void (*settle)(void *ctx, const struct js_sample *s, enum bottom_outcome how, struct trace *tr);
	void *ctx;
};

void stack_bottoms_init(struct stack_bottoms *b, size_t max_bytes);
/* s, or a copy of s (in *buf, grown as needed, at most max_len bytes of
 * words) that goes on with its thread's image's words below its fragment,
 * to the image's end, when the image vouches for them (the words at the
 * end of s's fragment are the image's, and no sample since the one that
 * copied them showed the thread above them). For a deep sample about to
 * be held. */
const struct js_sample *stack_bottoms_extend(struct stack_bottoms *b, const struct js_sample *s, uint32_t max_len,
					     struct js_sample **buf, size_t *buf_size);
/* Drops everything, waiting traces unsettled (the process is gone). */
void stack_bottoms_free(struct stack_bottoms *b);
/* A thread's image goes; its waiting traces are settled incomplete. */
void stack_bottoms_forget(struct stack_bottoms *b, uint32_t tid, const struct bottom_sink *sink);
/* Settles every waiting trace incomplete (no more samples will come). */
void stack_bottoms_flush(struct stack_bottoms *b, const struct bottom_sink *sink);

/* Every decoded sample of a thread (st: its status, tr: its trace, root
 * first) goes by here. A deep stack decoded completely starts or renews
 * the thread's image; any sample of a thread with an image, decoded or
 * not, lays its words over it (they are the current ones; the frames above
 * its sp are gone);
 * an incomplete trace is completed from the image if it can be, and then
 * is complete. One whose fragment ends below what the image vouches for
 * (the thread went deeper in one step than the copies showed) waits for a
 * later sample to fill the gap: BOTTOM_DEFERRED, the caller must not use
 * tr; it reaches the sink later, completed or not. Traces of the thread
 * that waited are settled through the sink on the way. scratch holds the
 * walk on. */
enum bottom_outcome stack_bottoms_take(struct stack_bottoms *b, const struct decode_ctx *ctx,
				       const struct js_sample *s, enum decode_status st, struct trace *tr,
				       struct trace *scratch, const struct bottom_sink *sink);

/* A gap-filling window of a deep thread's stack (JS_SAMPLE_FILL, copied
 * just before the sample of the same tick): the topmost starts the
 * thread's image anew (it is the stack as it is now, up to its top), each
 * next one of the same tick extends it down if the two join. The sample
 * that follows then completes from the image. true if the window was
 * taken. */
bool stack_bottoms_fill(struct stack_bottoms *b, const struct decode_ctx *ctx, const struct js_sample *s,
			struct trace *scratch, const struct bottom_sink *sink);

#endif
