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
 */
#ifndef JSAMPLED_STACK_BOTTOMS_H
#define JSAMPLED_STACK_BOTTOMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../bpf/sampler.h"
#include "../userspace/common/u64_map.h"
#include "decoder.h"

/* One thread's image covers at most this much of its stack. */
#define STACK_BOTTOM_MAX_BYTES (1u << 20)
/* All of one process's images together. */
#define STACK_BOTTOMS_PROCESS_BYTES (8u << 20)
/* Words at the end of a new fragment that must equal the image's. */
#define STACK_BOTTOM_VERIFY_BYTES 256u

struct stack_bottoms {
	struct u64_map by_tid; /* tid + 1 -> struct stack_image * */
	size_t bytes, max_bytes;
	uint64_t refused; /* images dropped: over max_bytes or STACK_BOTTOM_MAX_BYTES */
};

enum bottom_outcome {
	BOTTOM_NONE,        /* nothing to complete (the image may have learnt from the sample) */
	BOTTOM_COMPLETED,   /* the trace is complete now */
	BOTTOM_NO_IMAGE,    /* no image of the thread reaching on from where the fragment ends */
	BOTTOM_MISMATCH,    /* the image's words differ where the fragment ends */
	BOTTOM_WALK_FAILED, /* the walk on did not reach the bottom, or joined badly */
};

void stack_bottoms_init(struct stack_bottoms *b, size_t max_bytes);
void stack_bottoms_free(struct stack_bottoms *b);
void stack_bottoms_forget(struct stack_bottoms *b, uint32_t tid);

/* Every decoded sample of a thread (st: its status, tr: its trace, root
 * first) goes by here. A deep stack decoded completely starts or renews
 * the thread's image; any sample of a thread with an image, decoded or
 * not, lays its words over it (they are the current ones; the frames above
 * its sp are gone);
 * an incomplete trace is completed from the image if it can be, and then
 * is complete. scratch holds the walk on. */
enum bottom_outcome stack_bottoms_take(struct stack_bottoms *b, const struct decode_ctx *ctx,
				       const struct js_sample *s, enum decode_status st, struct trace *tr,
				       struct trace *scratch);

#endif
