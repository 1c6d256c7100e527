/* SPDX-License-Identifier: GPL-2.0-only */
/* A bounded FIFO of samples waiting for their process's code map to catch
 * up (a compiled method's load event arrives after the code already runs,
 * and a JVM sampled since its exec waits for its agent). Full means counted
 * trimming of big samples, then a counted drop of the oldest sample, never
 * a stall.
 *
 * Held copies of one thread are mostly the same bytes at the same stack
 * addresses (the callers' frames do not change between ticks), so a copy
 * keeps only its 256-byte chunks that differ from a base copy of its
 * thread and shares the rest: recorded runs hold 2.7-4x fewer bytes that
 * way (a starting JVM's held samples, every sample until its agent comes,
 * 29 MiB -> 7 MiB). */
#ifndef JSAMPLED_SAMPLE_QUEUE_H
#define JSAMPLED_SAMPLE_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/sampler.h"
#include "userspace/common/u64_map.h"
#include "userspace/common/vec.h"

/* What a full queue cuts big copies to, in turn (the top of a stack holds
 * the frames that matter most; a cut sample decodes as an incomplete trace,
 * attached under its thread's known context): to SAMPLE_QUEUE_TRIM_BYTES,
 * and, still full, to SAMPLE_QUEUE_MIN_BYTES, before anything is dropped.
 * At 10 kHz a starting JVM's samples, 6 KiB each, fill 16 MiB in a quarter
 * of a second, and a JDK 25 JVM admits its agent 0.1-0.25 s after the exec
 * (up to 1 s under load). */
#define SAMPLE_QUEUE_TRIM_BYTES 4096u
#define SAMPLE_QUEUE_MIN_BYTES 1024u
#define SAMPLE_QUEUE_TRIM_LEVELS 2
/* The longest copy shared with a base: a sample's own (JS_MAX_FRAGMENT_BYTES)
 * or one that took its thread's older words along (stack_bottoms_extend). */
#define SAMPLE_QUEUE_MAX_COPY (256u * 1024u)

/* Stack bytes at addr shared by held copies of thread tid; freed with
 * the last copy using it. Once every copy using it is no longer than a
 * trim level, it is cut to what they can still read. */
struct stack_base {
	uint32_t refs;
	uint32_t tid;
	uint64_t addr;
	uint64_t max_user_addr; /* the highest stack_addr of a copy using it */
	uint32_t within[SAMPLE_QUEUE_TRIM_LEVELS]; /* copies using it no longer than each level */
	uint32_t len;
	uint8_t *bytes; /* apart: a cut reallocates them, the users keep b */
};

/* A held sample and what it waits for (trace.h, enum decode_wait), so a
 * retry can skip it cheaply until the model has that. Without a base,
 * s->stack holds the whole copy; with one, s->stack holds the copy's own
 * chunks packed (own_bytes), then a bit per chunk (1: own, 0: the base's
 * bytes at the same address), and s->stack_len is the whole copy's length.
 * Read it whole with sample_queue_view. */
struct held_sample {
	struct js_sample *s;
	struct stack_base *base;
	uint32_t own_bytes;
	/* The sample's own copy's length; past it, words of its thread's
	 * stack image it took along (stack_bottoms_extend). */
	uint32_t fragment_len;
	uint8_t wait;
	uint64_t key;
};

struct sample_queue {
	VEC(struct held_sample) items;
	size_t head;  /* items before head are consumed */
	size_t bytes; /* held now, the bases included */
	size_t max_bytes;
	size_t peak_bytes;     /* the most held at once */
	uint64_t shared_bytes; /* bytes of copies held as a base's, not copied */
	struct u64_map bases;  /* tid -> its newest struct stack_base */
	struct js_sample *view; /* sample_queue_view's buffer */
	/* Per trim level: items before this index are cut to it already (a
	 * full queue's pushes do not scan them again). */
	size_t cut_upto[SAMPLE_QUEUE_TRIM_LEVELS];
};

void sample_queue_init(struct sample_queue *q, size_t max_bytes);
void sample_queue_free(struct sample_queue *q);
static inline size_t sample_queue_len(const struct sample_queue *q) { return q->items.n - q->head; }
/* Copies s in, noting what it waits for and how much of its copy is its
 * own (fragment_len; s->stack_len if all). When full, cuts big samples
 * (this one, then the oldest) level by level, counting each sample cut in
 * *trimmed, then drops the oldest. Returns the number of samples dropped
 * to make room (0 normally), or -1 if even an empty queue cannot take it. */
int sample_queue_push(struct sample_queue *q, const struct js_sample *s, uint32_t fragment_len, uint8_t wait,
		      uint64_t key, uint32_t *trimmed);
/* Puts back an entry taken with pop (no copy); -1 if out of memory (then
 * the caller still owns it). */
int sample_queue_requeue(struct sample_queue *q, const struct held_sample *h);
/* Oldest entry; false if empty. The caller gives it back with requeue or
 * frees it with sample_queue_release. */
bool sample_queue_pop(struct sample_queue *q, struct held_sample *h);
/* The whole sample of an entry: h->s itself, or a copy put together in the
 * queue's buffer (valid until the next view). NULL if out of memory. */
const struct js_sample *sample_queue_view(struct sample_queue *q, const struct held_sample *h);
/* Frees that buffer (256 KiB) while nothing is held: a host's many quiet
 * JVMs would each keep one. */
void sample_queue_drop_view(struct sample_queue *q);
void sample_queue_release(struct sample_queue *q, struct held_sample *h);
static inline size_t sample_bytes(const struct js_sample *s) { return sizeof(*s) + s->stack_len; }
/* The earliest time a held sample was taken; UINT64_MAX if none is held. */
uint64_t sample_queue_oldest_ns(const struct sample_queue *q);

#endif
