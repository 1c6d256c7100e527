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
	for (int l = 0; l < SAMPLE_QUEUE_TRIM_LEVELS; l++)
		q->cut_upto[l] = q->cut_upto[l] > q->head ? q->cut_upto[l] - q->head : 0;
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

static const uint32_t trim_levels[SAMPLE_QUEUE_TRIM_LEVELS] = {SAMPLE_QUEUE_TRIM_BYTES, SAMPLE_QUEUE_MIN_BYTES};

/* Cuts a held sample's copy to its top len bytes; returns the bytes
 * saved. *first: it had not been cut before. */
static size_t trim(struct held_sample *h, uint32_t len, bool *first)
{
	struct js_sample *smaller;
	size_t saved;

	*first = false;
	if (h->s->stack_len <= len)
		return 0;
	saved = h->s->stack_len - len;
	*first = !(h->s->flags & JS_SAMPLE_HELD_TRIMMED);
	h->s->stack_len = len;
	h->s->flags |= JS_SAMPLE_HELD_TRIMMED;
	smaller = realloc(h->s, sample_bytes(h->s));
	if (smaller)
		h->s = smaller;
	return saved;
}

/* Cuts the oldest samples to level l until need more bytes fit. */
static void trim_older(struct sample_queue *q, int l, size_t need, uint32_t *trimmed)
{
	size_t i = q->cut_upto[l] > q->head ? q->cut_upto[l] : q->head;
	bool first;

	for (; i < q->items.n && q->bytes + need > q->max_bytes; i++) {
		q->bytes -= trim(&q->items.v[i], trim_levels[l], &first);
		*trimmed += first;
	}
	q->cut_upto[l] = i;
}

int sample_queue_push(struct sample_queue *q, const struct js_sample *s, uint8_t wait, uint64_t key,
		      uint32_t *trimmed)
{
	struct held_sample h = {.wait = wait, .key = key};
	uint32_t keep = s->stack_len;
	struct held_sample old;
	int dropped = 0;

	/* Full: first give up the deep parts of big copies, this one's and
	 * then the oldest ones', level by level (deep-stack threads at high
	 * rates fill the queue within tens of milliseconds); drop whole
	 * samples last. */
	for (int l = 0; l < SAMPLE_QUEUE_TRIM_LEVELS && q->bytes + sizeof(*s) + keep > q->max_bytes; l++) {
		if (keep > trim_levels[l])
			keep = trim_levels[l];
		trim_older(q, l, sizeof(*s) + keep, trimmed);
	}
	if (sizeof(*s) + keep > q->max_bytes)
		return -1;
	while (q->bytes + sizeof(*s) + keep > q->max_bytes && sample_queue_pop(q, &old)) {
		free(old.s);
		dropped++;
	}
	h.s = malloc(sizeof(*s) + keep);
	if (!h.s)
		return -1;
	memcpy(h.s, s, sizeof(*s) + keep);
	if (keep < s->stack_len) {
		h.s->stack_len = keep;
		h.s->flags |= JS_SAMPLE_HELD_TRIMMED;
		(*trimmed)++;
	}
	if (vec_push(&q->items, h) != 0) {
		free(h.s);
		return -1;
	}
	q->bytes += sizeof(*s) + keep;
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
