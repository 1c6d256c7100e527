/* SPDX-License-Identifier: GPL-2.0-only */
/* Bounds-checked reads from a sample's copy of the user stack. The copy
 * holds [stack_addr, stack_addr + stack_len) - from sp, or from just below
 * the frame anchor when the thread was outside Java code. Addresses above it
 * are beyond the fragment (the stack goes on: the trace is incomplete);
 * below it, or past the stack's end, they are invalid. */
#ifndef JSAMPLED_STACK_FRAGMENT_H
#define JSAMPLED_STACK_FRAGMENT_H

#include <stdint.h>
#include <string.h>

#include "bpf/sampler.h"
#include "userspace/common/u64_map.h"

enum frag_read {
	FRAG_OK = 0,
	FRAG_BEYOND = 1,  /* above the copied part, inside the stack: incomplete */
	FRAG_INVALID = -1 /* below sp, past the stack's end, or misaligned */
};

/* The key that pairs a sample with the records the BPF program sent for it
 * apart (its kernel stack, an off-CPU wait, a virtual thread's chunk): the
 * thread and the sample's time, hashed, never 0 (u64_map's empty key). */
static inline uint64_t sample_key(const struct js_sample *s)
{
	uint64_t k = u64_hash(s->time_ns ^ ((uint64_t)s->tid << 40));
	return k ? k : 1;
}

static inline enum frag_read frag_read_u64(const struct js_sample *s, uint64_t addr, uint64_t *out)
{
	uint64_t base = s->stack_addr;

	/* Written so that no sum can wrap: addresses come from the stack
	 * itself, and a lying one may be anything up to 2^64 - 8. */
	if (addr < base || (addr & 7) != 0)
		return FRAG_INVALID;
	if (s->stack_end && (addr >= s->stack_end || s->stack_end - addr < 8))
		return FRAG_INVALID;
	if (addr - base >= s->stack_len || s->stack_len - (addr - base) < 8)
		return FRAG_BEYOND;
	memcpy(out, s->stack + (addr - base), 8);
	return FRAG_OK;
}

/* The BPF program wrote the record from another CPU: its lines are in
 * that CPU's cache or in memory. The walk reads the stack frame by frame,
 * each read depending on the one before, so each miss would be paid in
 * turn; asked for all at once, they arrive together. */
static inline void frag_prefetch(const struct js_sample *s)
{
	for (uint32_t off = 0; off < s->stack_len; off += 64)
		__builtin_prefetch(s->stack + off);
}

/* True if addr could be a stack address of this thread at or above sp. */
static inline int frag_in_stack(const struct js_sample *s, uint64_t addr)
{
	uint64_t sp = s->regs[JS_REG_SP];

	if (addr < sp)
		return 0;
	if (s->stack_end)
		return addr < s->stack_end;
	return addr - sp < (64u << 20);
}

#endif
