/* A bounded FIFO of samples waiting for their process's code map to catch
 * up (a compiled method's load event arrives after the code already runs,
 * and a JVM sampled since its exec waits for its agent). Full means counted
 * trimming of big samples, then a counted drop of the oldest sample, never
 * a stall. */
#ifndef JSAMPLED_SAMPLE_QUEUE_H
#define JSAMPLED_SAMPLE_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../bpf/sampler.h"
#include "../userspace/common/vec.h"

/* A held sample and what it waits for (trace.h, enum decode_wait), so a
 * retry can skip it cheaply until the model has that. */
struct held_sample {
	struct js_sample *s;
	uint64_t key;
	uint8_t wait;
};

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

struct sample_queue {
	VEC(struct held_sample) items;
	size_t head;  /* items before head are consumed */
	size_t bytes; /* held now */
	size_t max_bytes;
	/* Per trim level: items before this index are cut to it already (a
	 * full queue's pushes do not scan them again). */
	size_t cut_upto[SAMPLE_QUEUE_TRIM_LEVELS];
};

void sample_queue_init(struct sample_queue *q, size_t max_bytes);
void sample_queue_free(struct sample_queue *q);
static inline size_t sample_queue_len(const struct sample_queue *q) { return q->items.n - q->head; }
/* Copies s in, noting what it waits for. When full, cuts big samples
 * (this one, then the oldest) level by level, counting each sample cut in
 * *trimmed, then drops the oldest. Returns the number of samples dropped
 * to make room (0 normally), or -1 if even an empty queue cannot take it. */
int sample_queue_push(struct sample_queue *q, const struct js_sample *s, uint8_t wait, uint64_t key,
		      uint32_t *trimmed);
/* Puts back an entry taken with pop (no copy); -1 if out of memory (then
 * the caller still owns h->s). */
int sample_queue_requeue(struct sample_queue *q, const struct held_sample *h);
/* Oldest entry; false if empty. The caller frees h->s. */
bool sample_queue_pop(struct sample_queue *q, struct held_sample *h);
static inline size_t sample_bytes(const struct js_sample *s) { return sizeof(*s) + s->stack_len; }
/* The earliest time a held sample was taken; UINT64_MAX if none is held. */
uint64_t sample_queue_oldest_ns(const struct sample_queue *q);

#endif
