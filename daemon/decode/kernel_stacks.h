/* SPDX-License-Identifier: GPL-2.0-only */
/* The kernel stacks of one process's samples, from their JS_SAMPLE_KSTACK
 * records (bpf/sampler.h) until the sample of the same tick is put in the
 * CCT - possibly much later, when a held sample is decoded. Each is kept
 * symbolised (kernel_symbols.h ids, innermost first), keyed by thread and
 * time. Bounded: past KERNEL_STACKS_MAX waiting (their samples dropped or
 * never sent), all are forgotten, counted. */
#ifndef JSAMPLED_KERNEL_STACKS_H
#define JSAMPLED_KERNEL_STACKS_H

#include <stdint.h>

#include "userspace/common/u64_map.h"
#include "stack_fragment.h"
#include "userspace/profile/trace.h"

#define KERNEL_STACKS_MAX 4096
/* Used-up stacks kept for reuse: no allocation per sample once warm. */
#define KERNEL_STACKS_SPARE 64

struct kernel_stack;

struct kernel_stacks {
	struct u64_map by_sample; /* mix(tid, time) -> struct kernel_stack * */
	struct kernel_stack *spare[KERNEL_STACKS_SPARE];
	uint32_t nspare;
	uint64_t taken, used, forgotten;
};

void kernel_stacks_init(struct kernel_stacks *k);
void kernel_stacks_free(struct kernel_stacks *k);
/* A JS_SAMPLE_KSTACK record: symbolised and kept for its sample. */
void kernel_stacks_take(struct kernel_stacks *k, const struct js_sample *s);
/* The sample's kernel stack, if one came, as frames added above the
 * decoded trace's leaf (a decoded trace is root first); it is used up
 * either way.
 * Call for every sample once it is settled (decoded or failed): add is
 * false for a sample not put in the CCT. */
void kernel_stacks_apply(struct kernel_stacks *k, const struct js_sample *s, struct trace *tr, int add);

#endif
