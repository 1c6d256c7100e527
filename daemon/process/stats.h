/* SPDX-License-Identifier: GPL-2.0-only */
/* Counters of what happened to samples, per process and in total. */
#ifndef JSAMPLED_STATS_H
#define JSAMPLED_STATS_H

#include <stdint.h>

#include "daemon/decode/decode_reasons.h"
#include "daemon/decode/decoder.h"

struct decode_stats {
	uint64_t samples;    /* records received from the ring buffer */
	uint64_t resolved;   /* complete Java traces */
	uint64_t incomplete; /* Java traces cut short by the fragment size */
	uint64_t not_java;   /* JVM-internal threads ([GC], [JIT compiler], [VM]) */
	uint64_t failed;     /* undecodable; by reason below */
	uint64_t wrong;      /* decoded traces with an impossible caller (not at a call site) */
	uint64_t wrong_cut;  /* of them, put in the tree only above the impossible call, as incomplete */
	uint64_t reasons[DECODE_FAILURE_COUNT];
	uint64_t rules[DECODE_RULE_COUNT]; /* decoded samples by top-frame heuristic */
	uint64_t held_total; /* samples that waited for the code map */
	uint64_t held_for[4]; /* ... by what they waited for (enum decode_wait) */
	uint64_t held_trimmed; /* held samples cut to their top to fit the held queue */
	uint64_t dropped;    /* samples lost inside jsampled (see below) */
	uint64_t dropped_queue_full;
	uint64_t dropped_no_memory;
	uint64_t kernel_mode; /* samples taken while the thread was in the kernel */
	uint64_t stack_bytes;
	/* Added later: the state file keeps the fields in this order. */
	/* Incomplete traces given to the thread's stack image (stack_bottoms.h):
	 * completed (counted in resolved), or not, by why. */
	uint64_t completed;
	uint64_t completion_no_image;
	uint64_t completion_mismatch;
	uint64_t completion_walk_failed;
	uint64_t stack_images_refused; /* images dropped at their limits */
	uint64_t stack_images_idled;   /* images dropped: the thread's copies reached its bottom for a while */
	uint64_t stack_image_bytes;    /* held now (set at each sample) */
	/* Of completed: after waiting for a later sample to fill a gap
	 * between the fragment and the image. */
	uint64_t completed_later;
	uint64_t held_extended; /* deep samples held with their stack image's older words */
	uint64_t completion_pending; /* waiting now (set at each sample) */
	/* Gap-filling windows received (JS_SAMPLE_FILL, not samples), and
	 * those laid over an image. Their bytes count in stack_bytes. */
	uint64_t fills;
	uint64_t fills_used;
	/* Walks that joined their thread's previous walk (walk_reuse.h), and
	 * the frames they took from it instead of walking. */
	uint64_t walks_joined;
	uint64_t frames_joined;
	uint64_t walk_memo_bytes; /* the memos held now (set at each sample) */
	/* Incomplete traces of mounted virtual threads: the walk met the
	 * continuation's return barrier (PSEUDO_VTHREAD_FROZEN). */
	uint64_t vthread_frozen;
	/* Frozen-frame copies received (JS_SAMPLE_CHUNK), and traces whose
	 * walk went on through them (unwind_chunk.c). */
	uint64_t vthread_chunks;
	uint64_t vthread_chunk_walked;
	uint64_t vthread_chunk_rejected; /* walked, but not joined at a call site: frozen */
	uint64_t vthread_rooted; /* resolved traces put under [virtual thread] */
	/* Off-CPU samples (JS_SAMPLE_OFFCPU) and the ticks they put in the
	 * tree; those whose weight never came (JS_SAMPLE_WAIT) are dropped. */
	uint64_t offcpu_samples;
	uint64_t offcpu_ticks;
	uint64_t offcpu_unweighed;
};

void decode_stats_account(struct decode_stats *st, enum decode_status status, int reason, int rule);
void decode_stats_add(struct decode_stats *into, const struct decode_stats *from);

#endif
