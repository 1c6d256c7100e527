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
		free(q->items.v[i].s);
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

bool sample_queue_pop(struct sample_queue *q, struct held_sample *h)
{
	if (q->head >= q->items.n)
		return false;
	*h = q->items.v[q->head++];
	q->bytes -= sample_bytes(h->s);
	compact(q);
	return true;
}

/* Cuts a held sample's copy to its top SAMPLE_QUEUE_TRIM_BYTES; returns
 * the bytes saved. */
static size_t trim(struct held_sample *h)
{
	struct js_sample *smaller;
	size_t saved;

	if (h->s->stack_len <= SAMPLE_QUEUE_TRIM_BYTES)
		return 0;
	saved = h->s->stack_len - SAMPLE_QUEUE_TRIM_BYTES;
	h->s->stack_len = SAMPLE_QUEUE_TRIM_BYTES;
	h->s->flags |= JS_SAMPLE_HELD_TRIMMED;
	smaller = realloc(h->s, sample_bytes(h->s));
	if (smaller)
		h->s = smaller;
	return saved;
}

int sample_queue_push(struct sample_queue *q, const struct js_sample *s, uint8_t wait, uint64_t key,
		      uint32_t *trimmed)
{
	size_t size = sample_bytes(s);
	struct held_sample h = {.wait = wait, .key = key};
	struct held_sample old;
	int dropped = 0;

	/* Full: first give up the deep parts of big copies, this one's and
	 * then the oldest ones' (deep-stack threads at high rates fill the
	 * queue within tens of milliseconds); drop whole samples last. */
	bool cut = q->bytes + size > q->max_bytes && s->stack_len > SAMPLE_QUEUE_TRIM_BYTES;

	if (cut)
		size -= s->stack_len - SAMPLE_QUEUE_TRIM_BYTES;
	if (size > q->max_bytes)
		return -1;
	for (size_t i = q->head; i < q->items.n && q->bytes + size > q->max_bytes; i++) {
		size_t saved = trim(&q->items.v[i]);
		if (saved) {
			q->bytes -= saved;
			(*trimmed)++;
		}
	}
	while (q->bytes + size > q->max_bytes && sample_queue_pop(q, &old)) {
		free(old.s);
		dropped++;
	}
	h.s = malloc(size);
	if (!h.s)
		return -1;
	memcpy(h.s, s, size);
	if (cut) {
		h.s->stack_len = SAMPLE_QUEUE_TRIM_BYTES;
		h.s->flags |= JS_SAMPLE_HELD_TRIMMED;
	}
	if (vec_push(&q->items, h) != 0) {
		free(h.s);
		return -1;
	}
	q->bytes += size;
	if (cut)
		(*trimmed)++;
	return dropped;
}

int sample_queue_requeue(struct sample_queue *q, const struct held_sample *h)
{
	if (vec_push(&q->items, *h) != 0)
		return -1;
	q->bytes += sample_bytes(h->s);
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
