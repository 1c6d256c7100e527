/* SPDX-License-Identifier: GPL-2.0-only */
/* A destination's send queue: the intervals' profiles waiting to be pushed,
 * oldest first, bounded in bytes (past the bound the oldest are dropped,
 * counted), with retry and exponential back-off after a failure. One queue
 * per destination, so a destination that is down only fills its own. */
#ifndef JSAMPLECTL_EXPORT_QUEUE_H
#define JSAMPLECTL_EXPORT_QUEUE_H

#include <stddef.h>
#include <stdint.h>

#include "userspace/common/vec.h"

struct export_item {
	int64_t from_s, until_s; /* the interval, seconds since the epoch */
	int pid;
	char name[768]; /* the store's series name: service{label=value,...} */
	uint8_t *body;	/* Pyroscope: the interval's profile (gzipped pprof); ClickHouse: samples rows */
	size_t len;
	uint8_t *stacks;  /* ClickHouse: the new stacks' rows, written first (NULL: none) */
	size_t stacks_len;
	uint64_t *new_stacks; /* ClickHouse: their hashes */
	size_t n_new_stacks;
	int stacks_done;      /* ClickHouse: the stacks are in; the samples go next */
	uint64_t samples;
	uint32_t attempts;
};

struct export_counters {
	uint64_t queued, sent, failed, retried, dropped, sent_bytes, dropped_samples;
};

struct export_queue {
	VEC(struct export_item) items; /* items.v[head..n) wait, oldest first */
	size_t head;
	size_t bytes, max_bytes;
	uint64_t next_try_ms; /* CLOCK_MONOTONIC ms before which nothing is sent */
	uint32_t backoff_ms;
	struct export_counters c;
};

void export_queue_init(struct export_queue *q, size_t max_bytes);
void export_queue_free(struct export_queue *q);
/* Takes ownership of item's buffers (body, stacks, new_stacks); drops the oldest items (or this one, if it
 * alone is over the bound) to stay within max_bytes. */
void export_queue_push(struct export_queue *q, struct export_item *item);
size_t export_queue_len(const struct export_queue *q);
/* The oldest item, or NULL; it stays queued until done or failed. */
struct export_item *export_queue_peek(struct export_queue *q);
/* The oldest item was pushed: it goes, the back-off resets. */
void export_queue_done(struct export_queue *q);
/* Pushing the oldest item failed at now_ms: back off (1 s doubling to
 * max_backoff_ms) and try it again later; a request the destination
 * refused for good (permanent) is dropped instead, counted. */
void export_queue_failed(struct export_queue *q, uint64_t now_ms, int permanent);
/* The start of the oldest waiting interval, or INT64_MAX when empty. */
int64_t export_queue_oldest_from(const struct export_queue *q);

#define EXPORT_MAX_BACKOFF_MS 60000u

#endif
