#include "sample_queue.h"

#include <stdlib.h>
#include <string.h>

void sample_queue_init(struct sample_queue *q, size_t max_bytes)
{
	memset(q, 0, sizeof(*q));
	q->max_bytes = max_bytes;
}

void sample_queue_free(struct sample_queue *q)
{
	for (size_t i = q->head; i < q->items.n; i++)
		free(q->items.v[i]);
	vec_free(&q->items);
	q->head = 0;
	q->bytes = 0;
}

static void compact(struct sample_queue *q)
{
	if (q->head == 0 || q->head * 2 < q->items.n)
		return;
	memmove(q->items.v, q->items.v + q->head, (q->items.n - q->head) * sizeof(*q->items.v));
	q->items.n -= q->head;
	q->head = 0;
}

struct js_sample *sample_queue_pop(struct sample_queue *q)
{
	struct js_sample *s;

	if (q->head >= q->items.n)
		return NULL;
	s = q->items.v[q->head++];
	q->bytes -= sample_bytes(s);
	compact(q);
	return s;
}

int sample_queue_push(struct sample_queue *q, const struct js_sample *s)
{
	size_t size = sample_bytes(s);
	struct js_sample *copy;
	int dropped = 0;

	if (size > q->max_bytes)
		return -1;
	while (q->bytes + size > q->max_bytes) {
		free(sample_queue_pop(q));
		dropped++;
	}
	copy = malloc(size);
	if (!copy)
		return -1;
	memcpy(copy, s, size);
	if (vec_push(&q->items, copy) != 0) {
		free(copy);
		return -1;
	}
	q->bytes += size;
	return dropped;
}
