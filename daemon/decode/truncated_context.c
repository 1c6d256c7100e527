/* SPDX-License-Identifier: GPL-2.0-only */
#include "truncated_context.h"

#include <stdlib.h>
#include <string.h>

/* Sized to its trace, in steps of CONTEXT_STEP frames: most traces are a
 * few dozen frames, and a host has thousands of threads. */
#define CONTEXT_STEP 16
struct thread_context {
	uint32_t n, cap;
	struct trace_frame frames[];
};

static size_t context_bytes(uint32_t cap)
{
	return sizeof(struct thread_context) + cap * sizeof(struct trace_frame);
}

void context_table_init(struct context_table *c)
{
	memset(c, 0, sizeof(*c));
	u64_map_init(&c->by_tid);
}

void context_table_free(struct context_table *c)
{
	for (size_t i = 0; i < c->by_tid.cap; i++)
		if (c->by_tid.slots[i].key)
			free((void *)(uintptr_t)c->by_tid.slots[i].val);
	u64_map_free(&c->by_tid);
	c->bytes = 0;
}

size_t context_table_bytes(const struct context_table *c)
{
	return c->bytes + u64_map_bytes(&c->by_tid);
}

void context_forget(struct context_table *c, uint32_t tid)
{
	uint64_t *v = u64_map_get(&c->by_tid, (uint64_t)tid + 1);

	if (v) {
		struct thread_context *t = (struct thread_context *)(uintptr_t)*v;

		c->bytes -= context_bytes(t->cap);
		free(t);
		u64_map_del(&c->by_tid, (uint64_t)tid + 1);
	}
}

int context_each_method(const struct context_table *c, int (*each)(void *ctx, uint32_t id), void *ctx)
{
	for (size_t i = 0; i < c->by_tid.cap; i++) {
		const struct thread_context *t = (const void *)(uintptr_t)c->by_tid.slots[i].val;
		int r;

		for (uint32_t k = 0; c->by_tid.slots[i].key && k < t->n; k++)
			if (t->frames[k].type <= FRAME_NATIVE && (r = each(ctx, t->frames[k].method_id)) != 0)
				return r;
	}
	return 0;
}

static bool same_frame(const struct trace_frame *a, const struct trace_frame *b)
{
	return a->method_id == b->method_id && a->type == b->type;
}

void context_remember(struct context_table *c, uint32_t tid, const struct trace *complete)
{
	uint64_t key = (uint64_t)tid + 1;
	uint64_t *v = u64_map_get(&c->by_tid, key);
	uint32_t n = complete->n < CONTEXT_FRAMES ? complete->n : CONTEXT_FRAMES;
	uint32_t cap = (n + CONTEXT_STEP - 1) / CONTEXT_STEP * CONTEXT_STEP;
	struct thread_context *t;

	if (v) {
		t = (struct thread_context *)(uintptr_t)*v;
		/* Grown to fit, shrunk only to half: a thread's depth
		 * wavers from sample to sample. */
		if (t->cap < cap || t->cap > 2 * cap + CONTEXT_STEP) {
			struct thread_context *r = realloc(t, context_bytes(cap));

			if (!r) {
				t->n = 0; /* keeps no stale context */
				return;
			}
			c->bytes += context_bytes(cap) - context_bytes(r->cap);
			r->cap = cap;
			*v = (uint64_t)(uintptr_t)r;
			t = r;
		}
	} else {
		if (c->by_tid.count >= CONTEXT_THREADS) {
			/* Replace an arbitrary entry: the table stays bounded. */
			for (size_t i = 0; i < c->by_tid.cap; i++)
				if (c->by_tid.slots[i].key) {
					context_forget(c, (uint32_t)(c->by_tid.slots[i].key - 1));
					break;
				}
		}
		t = malloc(context_bytes(cap));
		if (!t || u64_map_put(&c->by_tid, key, (uint64_t)(uintptr_t)t) != 0) {
			free(t);
			return;
		}
		t->cap = cap;
		c->bytes += context_bytes(cap);
	}
	t->n = n;
	memcpy(t->frames, complete->frames, n * sizeof(t->frames[0]));
}

uint32_t context_graft(struct context_table *c, uint32_t tid, const struct trace *incomplete,
		       struct trace_frame *prefix, uint32_t max)
{
	uint64_t *v = u64_map_get(&c->by_tid, (uint64_t)tid + 1);
	const struct thread_context *t;
	const struct trace_frame *first;
	uint32_t at = 0, hits = 0;

	if (!v || incomplete->n == 0) {
		c->truncated++;
		return 0;
	}
	t = (const struct thread_context *)(uintptr_t)*v;
	first = &incomplete->frames[0];
	if (first->type == FRAME_PSEUDO)
		goto ambiguous;
	for (uint32_t i = 1; i < incomplete->n; i++)
		if (same_frame(&incomplete->frames[i], first))
			goto ambiguous; /* recursion: its depth is unknown */
	for (uint32_t j = 0; j < t->n; j++)
		if (same_frame(&t->frames[j], first)) {
			at = j;
			hits++;
		}
	if (hits != 1 || at == 0 || at > max)
		goto ambiguous;
	memcpy(prefix, t->frames, at * sizeof(prefix[0]));
	c->grafted++;
	return at;
ambiguous:
	c->truncated++;
	return 0;
}
