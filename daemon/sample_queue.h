/* A bounded FIFO of samples waiting for their process's code map to catch
 * up (a compiled method's load event arrives after the code already runs).
 * Full means a counted drop of the oldest sample, never a stall. */
#ifndef JSAMPLED_SAMPLE_QUEUE_H
#define JSAMPLED_SAMPLE_QUEUE_H

#include <stddef.h>
#include <stdint.h>

#include "../bpf/sampler.h"
#include "../userspace/common/vec.h"

struct sample_queue {
	VEC(struct js_sample *) items;
	size_t head;  /* items before head are consumed */
	size_t bytes; /* held now */
	size_t max_bytes;
};

void sample_queue_init(struct sample_queue *q, size_t max_bytes);
void sample_queue_free(struct sample_queue *q);
static inline size_t sample_queue_len(const struct sample_queue *q) { return q->items.n - q->head; }
/* Copies s in. Returns the number of older samples dropped to make room
 * (0 normally), or -1 if even an empty queue cannot take it. */
int sample_queue_push(struct sample_queue *q, const struct js_sample *s);
/* Oldest sample or NULL; the caller frees what pop returns. */
struct js_sample *sample_queue_pop(struct sample_queue *q);
static inline size_t sample_bytes(const struct js_sample *s) { return sizeof(*s) + s->stack_len; }

#endif
