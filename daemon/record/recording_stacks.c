/* SPDX-License-Identifier: GPL-2.0-only */
#include "recording_stacks.h"

#include <stdlib.h>
#include <string.h>

#include "userspace/common/u64_map.h"

void recording_stacks_free(struct recording_stacks *t)
{
	for (uint32_t i = 0; i < RECORDING_STACK_SLOTS; i++) {
		free(t->slot[i].bytes);
		free(t->slot[i].last);
		free(t->slot[i].next);
	}
	memset(t, 0, sizeof(*t));
}

static struct recording_stack_slot *slot_of(struct recording_stacks *t, uint32_t pid, uint32_t tid)
{
	return &t->slot[u64_hash((uint64_t)pid << 32 | tid) & (RECORDING_STACK_SLOTS - 1)];
}

/* The end of a sample's stack; false if it wraps (only a lying record's). */
static bool end_of(const struct js_sample *s, uint64_t *end)
{
	if (s->stack_addr > UINT64_MAX - s->stack_len)
		return false;
	*end = s->stack_addr + s->stack_len;
	return true;
}

static bool holds(const struct recording_stack_slot *sl, const struct js_sample *s, uint64_t end)
{
	return sl->used && sl->pid == s->pid && sl->tid == s->tid && sl->end == end;
}

/* Makes the len bytes of stack, ending at end, the slot's; it holds their
 * bottom same bytes already. Without memory the slot is emptied: the
 * writer then writes the thread's next sample whole. */
static void keep(struct recording_stack_slot *sl, const struct js_sample *s, uint64_t end, const uint8_t *stack,
		 uint32_t same)
{
	uint32_t len = s->stack_len;

	if (len > JS_MAX_FRAGMENT_BYTES) {
		sl->used = false;
		return;
	}
	if (len > sl->cap) {
		uint32_t cap = sl->cap ? sl->cap : 4096;
		uint8_t *grown;

		while (cap < len)
			cap *= 2;
		if (!(grown = malloc(cap))) {
			sl->used = false;
			return;
		}
		if (same)
			memcpy(grown + cap - same, sl->bytes + sl->cap - same, same);
		free(sl->bytes);
		sl->bytes = grown;
		sl->cap = cap;
	}
	if (len > same) /* (an empty stack may have no buffer yet) */
		memcpy(sl->bytes + sl->cap - len, stack, len - same);
	sl->used = true;
	sl->pid = s->pid;
	sl->tid = s->tid;
	sl->end = end;
	sl->len = len;
}

uint32_t recording_stacks_put(struct recording_stacks *t, const struct js_sample *s)
{
	struct recording_stack_slot *sl = slot_of(t, s->pid, s->tid);
	uint32_t same = 0;
	uint64_t end;

	if (!end_of(s, &end))
		return 0;
	if (holds(sl, s, end) && sl->len && s->stack_len) {
		uint32_t most = sl->len < s->stack_len ? sl->len : s->stack_len;
		const uint8_t *a = s->stack + s->stack_len, *b = sl->bytes + sl->cap;

		/* From the end up: a line at a time, then a word. */
		while (same + 64 <= most && memcmp(a - same - 64, b - same - 64, 64) == 0)
			same += 64;
		while (same + 8 <= most && memcmp(a - same - 8, b - same - 8, 8) == 0)
			same += 8;
	}
	keep(sl, s, end, s->stack, same);
	if (same < RECORDING_MIN_SHARED || !sl->used)
		return 0;
	t->shared_bytes += same;
	return same;
}

struct js_sample *recording_stacks_next(struct recording_stacks *t, const struct js_sample *h, uint32_t shared)
{
	struct recording_stack_slot *sl = slot_of(t, h->pid, h->tid);
	uint32_t whole = (uint32_t)sizeof(*h) + h->stack_len;
	struct js_sample *s;
	uint64_t end;

	if (!end_of(h, &end) || shared > h->stack_len)
		return NULL;
	if (shared && (!holds(sl, h, end) || !sl->last || shared > sl->last->stack_len))
		return NULL;
	/* As the writer's keep: a longer copy, or no memory, empties the
	 * slot (the writer then wrote the thread's next sample whole, or
	 * the file reads as corrupt where it did not). */
	if (h->stack_len > JS_MAX_FRAGMENT_BYTES) {
		sl->used = false;
		return NULL;
	}
	if (whole > sl->next_cap) {
		free(sl->next);
		sl->next_cap = 0;
		if (!(sl->next = malloc(whole))) {
			sl->used = false;
			return NULL;
		}
		sl->next_cap = whole;
	}
	s = sl->next;
	memcpy(s, h, sizeof(*h));
	if (shared)
		memcpy(s->stack + h->stack_len - shared, sl->last->stack + sl->last->stack_len - shared, shared);
	t->shared_bytes += shared;
	return s;
}

void recording_stacks_keep(struct recording_stacks *t, struct js_sample *s)
{
	struct recording_stack_slot *sl = slot_of(t, s->pid, s->tid);
	struct js_sample *was = sl->last;
	uint32_t was_cap = sl->last_cap;
	uint64_t end;

	if (s != sl->next || !end_of(s, &end)) {
		sl->used = false;
		return;
	}
	sl->last = sl->next;
	sl->last_cap = sl->next_cap;
	sl->next = was;
	sl->next_cap = was_cap;
	sl->used = true;
	sl->pid = s->pid;
	sl->tid = s->tid;
	sl->end = end;
}
