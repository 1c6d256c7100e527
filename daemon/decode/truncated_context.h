/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Where an incomplete trace goes in the CCT. A stack deeper than the copied
 * fragment yields only its top part; without its bottom, the trace cannot be
 * placed by itself. The same thread's most recent complete trace often
 * shows the missing bottom: if the incomplete trace's deepest frame occurs
 * exactly once there (and not again in the incomplete trace, which rules
 * out recursion), the trace is grafted under that context. Otherwise it
 * goes under an explicit [truncated] node - never silently under the root.
 */
#ifndef JSAMPLED_TRUNCATED_CONTEXT_H
#define JSAMPLED_TRUNCATED_CONTEXT_H

#include <stdint.h>

#include "userspace/common/u64_map.h"
#include "userspace/profile/trace.h"

/* Frames of a thread's last complete trace kept for grafting. */
#define CONTEXT_FRAMES 128
/* Threads tracked per process; beyond, the oldest entries are replaced. */
#define CONTEXT_THREADS 4096

struct context_table {
	struct u64_map by_tid; /* tid -> struct thread_context * */
	uint64_t grafted, truncated;
	size_t bytes; /* the contexts and their index */
};

void context_table_init(struct context_table *c);
void context_table_free(struct context_table *c);
/* Remembers a complete trace (root first) of thread tid. */
void context_remember(struct context_table *c, uint32_t tid, const struct trace *complete);
/* For an incomplete trace (root first) of thread tid: how many frames of
 * the thread's known context to put above it, copied to prefix (at most
 * max); 0 if no unambiguous context exists. */
uint32_t context_graft(struct context_table *c, uint32_t tid, const struct trace *incomplete,
		       struct trace_frame *prefix, uint32_t max);
void context_forget(struct context_table *c, uint32_t tid);
size_t context_table_bytes(const struct context_table *c);
/* Calls each() with the method id of every remembered Java frame; stops
 * at, and returns, the first nonzero result. */
int context_each_method(const struct context_table *c, int (*each)(void *ctx, uint32_t id), void *ctx);

#endif
