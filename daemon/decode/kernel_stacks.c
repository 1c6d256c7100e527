/* SPDX-License-Identifier: GPL-2.0-only */
#include "kernel_stacks.h"

#include <stdlib.h>
#include <string.h>

#include "userspace/profile/kernel_symbols.h"

struct kernel_stack {
	uint32_t n;
	uint32_t ids[JS_KSTACK_MAX]; /* innermost first */
};

/* A thread's tick: tid and time together (0 is no key of a u64_map). */
void kernel_stacks_init(struct kernel_stacks *k)
{
	memset(k, 0, sizeof(*k));
	u64_map_init(&k->by_sample);
}

static struct kernel_stack *get(struct kernel_stacks *k)
{
	return k->nspare ? k->spare[--k->nspare] : malloc(sizeof(struct kernel_stack));
}

static void put(struct kernel_stacks *k, struct kernel_stack *ks)
{
	if (k->nspare < KERNEL_STACKS_SPARE)
		k->spare[k->nspare++] = ks;
	else
		free(ks);
}

static void forget_all(struct kernel_stacks *k)
{
	for (size_t i = 0; i < k->by_sample.cap; i++)
		if (k->by_sample.slots[i].key)
			put(k, (struct kernel_stack *)(uintptr_t)k->by_sample.slots[i].val);
	k->forgotten += k->by_sample.count;
	u64_map_free(&k->by_sample);
	u64_map_init(&k->by_sample);
}

void kernel_stacks_free(struct kernel_stacks *k)
{
	forget_all(k);
	u64_map_free(&k->by_sample);
	while (k->nspare)
		free(k->spare[--k->nspare]);
}

void kernel_stacks_take(struct kernel_stacks *k, const struct js_sample *s)
{
	uint32_t n = s->stack_len / 8;
	struct kernel_stack *ks;
	uint64_t key = sample_key(s), *old;

	if (n == 0)
		return;
	if (n > JS_KSTACK_MAX)
		n = JS_KSTACK_MAX;
	if (k->by_sample.count >= KERNEL_STACKS_MAX)
		forget_all(k);
	ks = get(k);
	if (!ks)
		return;
	ks->n = n;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t addr;

		memcpy(&addr, s->stack + i * 8, 8);
		ks->ids[i] = kernel_symbols_lookup(addr);
	}
	if ((old = u64_map_get(&k->by_sample, key)))
		put(k, (struct kernel_stack *)(uintptr_t)*old);
	if (u64_map_put(&k->by_sample, key, (uint64_t)(uintptr_t)ks) != 0) {
		put(k, ks);
		return;
	}
	k->taken++;
}

void kernel_stacks_apply(struct kernel_stacks *k, const struct js_sample *s, struct trace *tr, int add)
{
	uint64_t key, *v;
	struct kernel_stack *ks;
	uint32_t n;

	if (!(s->flags & JS_SAMPLE_KERNEL_MODE) || k->by_sample.count == 0)
		return;
	key = sample_key(s);
	if (!(v = u64_map_get(&k->by_sample, key)))
		return;
	ks = (struct kernel_stack *)(uintptr_t)*v;
	u64_map_del(&k->by_sample, key);
	n = ks->n;
	if (add && tr->n > 0) {
		/* A decoded trace is root first: the kernel's outermost frame
		 * (the system call's entry) follows the leaf, its innermost
		 * ends the trace. */
		for (uint32_t i = n; i-- > 0 && tr->n < TRACE_MAX_FRAMES;)
			tr->frames[tr->n++] = (struct trace_frame){.method_id = ks->ids[i], .type = FRAME_KERNEL, .bci = -1};
		k->used++;
	}
	put(k, ks);
}
