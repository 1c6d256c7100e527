/* SPDX-License-Identifier: GPL-2.0-only */
#include "export_queue.h"

#include <stdint.h>
#include <string.h>

void export_queue_init(struct export_queue *q, size_t max_bytes)
{
	memset(q, 0, sizeof(*q));
	q->max_bytes = max_bytes;
}

/* What an item holds, counted against the bound. */
static size_t item_bytes(const struct export_item *it)
{
	return it->len + it->stacks_len + it->n_new_stacks * sizeof(*it->new_stacks);
}

static void item_release(struct export_item *it)
{
	free(it->body);
	free(it->stacks);
	free(it->new_stacks);
	it->body = it->stacks = NULL;
	it->new_stacks = NULL;
}

void export_queue_free(struct export_queue *q)
{
	for (size_t i = q->head; i < q->items.n; i++)
		item_release(&q->items.v[i]);
	vec_free(&q->items);
	q->head = 0;
	q->bytes = 0;
}

size_t export_queue_len(const struct export_queue *q)
{
	return q->items.n - q->head;
}

struct export_item *export_queue_peek(struct export_queue *q)
{
	return q->head < q->items.n ? &q->items.v[q->head] : NULL;
}

/* Removes the oldest item (its body freed); keeps the array compact. */
static void pop(struct export_queue *q)
{
	struct export_item *it = &q->items.v[q->head++];

	q->bytes -= item_bytes(it);
	item_release(it);
	if (q->head == q->items.n) {
		q->head = q->items.n = 0;
	} else if (q->head * 2 >= q->items.n) {
		memmove(q->items.v, q->items.v + q->head, (q->items.n - q->head) * sizeof(*q->items.v));
		q->items.n -= q->head;
		q->head = 0;
	}
}

static void drop_oldest(struct export_queue *q)
{
	q->c.dropped++;
	q->c.dropped_samples += q->items.v[q->head].samples;
	pop(q);
}

void export_queue_push(struct export_queue *q, struct export_item *item)
{
	size_t bytes = item_bytes(item);

	if (bytes > q->max_bytes) {
		q->c.dropped++;
		q->c.dropped_samples += item->samples;
		item_release(item);
		return;
	}
	while (export_queue_len(q) && q->bytes + bytes > q->max_bytes)
		drop_oldest(q);
	if (vec_push(&q->items, *item) != 0) {
		q->c.dropped++;
		q->c.dropped_samples += item->samples;
		item_release(item);
		return;
	}
	q->bytes += bytes;
	q->c.queued++;
	/* owned by the queue now */
	item->body = item->stacks = NULL;
	item->new_stacks = NULL;
}

void export_queue_done(struct export_queue *q)
{
	struct export_item *it = export_queue_peek(q);

	if (!it)
		return;
	q->c.sent++;
	q->c.sent_bytes += it->len + it->stacks_len;
	if (it->attempts > 1)
		q->c.retried++;
	pop(q);
	q->backoff_ms = 0;
	q->next_try_ms = 0;
}

void export_queue_failed(struct export_queue *q, uint64_t now_ms, int permanent)
{
	struct export_item *it = export_queue_peek(q);

	if (!it)
		return;
	q->c.failed++;
	if (permanent) {
		drop_oldest(q);
		return;
	}
	q->backoff_ms = q->backoff_ms ? q->backoff_ms * 2 : 1000;
	if (q->backoff_ms > EXPORT_MAX_BACKOFF_MS)
		q->backoff_ms = EXPORT_MAX_BACKOFF_MS;
	q->next_try_ms = now_ms + q->backoff_ms;
}

int64_t export_queue_oldest_from(const struct export_queue *q)
{
	return q->head < q->items.n ? q->items.v[q->head].from_s : INT64_MAX;
}
