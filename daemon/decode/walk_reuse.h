/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Walking only what changed. A thread's older frames stay put while it runs
 * above them, so most of a sample's walk repeats the walk of the thread's
 * previous sample. Each thread keeps its last complete walk (a walk memo):
 * the state at the start of every step below the top (pc, sp, fp and the
 * method of the frame pushed just before), the stack words each step read,
 * its frames. A new walk that reaches a step in the same state, where the
 * words read by that step and every step below it are the same, would find
 * the same frames: it takes them from the memo instead.
 *
 * Only the words the steps read count (a step reads a range: a compiled
 * frame's return address, an interpreted frame's fixed slots), not the
 * stack between them: a caller's spill slots and locals change whenever it
 * runs between two samples (a loop around a call, a recursion that came
 * back up and went down again), while the words the walk reads stay.
 *
 * A word that differs deep down (a recursion that came back through another
 * call site) forbids taking the rest, but not the steps above it: from a
 * step in the same state down to the step that read the differing word,
 * the steps read the same words and found the same frames, so the main
 * walk takes them and walks on from that step (in a Jython run, 20 steps a
 * sample that were walked again before).
 *
 * The rest of a walk depends on nothing else while the code map and the
 * method table are unchanged and no code was loaded or unloaded between the
 * two samples' times; a memo is used only then (walk_memo_fits).
 */
#ifndef JSAMPLED_WALK_REUSE_H
#define JSAMPLED_WALK_REUSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/sampler.h"
#include "userspace/common/u64_map.h"
#include "userspace/profile/trace.h"

struct codemap;
struct method_table;

/* The state at the start of one step of a walk, and what the rest needs. */
struct walk_step_state {
	uint64_t pc, sp, fp;
	struct trace_frame above; /* the frame pushed just before (type FRAME_TYPE_COUNT: none) */
	uint8_t via_vm, leaf_return, crossing;
};

struct memo_boundary {
	struct walk_step_state at;
	uint64_t from;  /* the lowest stack address the walk read from this step on */
	uint32_t below; /* frames the walk found from this step on (to the root) */
};

/* What every step of a walk looks at in the boundaries, kept apart from the
 * rest in an array of its own: a deep stack's memo has thousands of
 * boundaries, which a walk seeks through by sp and compares by their words
 * in order, one cache line for two of these where a boundary took one or
 * two (Jython replay: 5.1 % of the first-level cache's read misses were
 * that seek alone, cachegrind). */
struct memo_key {
	uint64_t sp, pc;   /* the boundary's at.sp and at.pc */
	uint64_t read_lo;  /* what its step itself read: read_len bytes from read_lo, */
	uint32_t read_len; /* as they were: the memo's vals[val_at..] */
	uint32_t val_at;
};

struct walk_memo {
	struct walk_reuse *owner;
	uint64_t time_ns, stack_end;
	uint64_t code_changes, method_changes; /* of the code map and method table it was walked with */
	uint64_t hi; /* the end of the highest word its walk read */
	/* The words each step read, as it read them, in the boundaries'
	 * order (bottom first): a walk that joins this one keeps a prefix
	 * and appends what it walked; the stack between the reads is not
	 * kept (nor touched: live, a sample's words come cold from the ring). */
	uint8_t *vals;
	uint32_t nv, v_cap;
	struct memo_boundary *b; /* bottom first (sp descending) */
	struct memo_key *k;      /* the same nb boundaries' keys */
	uint32_t nb, b_cap, k_cap;
	struct trace_frame *frames; /* root first */
	uint32_t nf, f_cap;
	uint64_t max_read;
	uint64_t stop_pc, stop_sp, stop_fp;
	/* The first of its frames (root first) that calls the next wrongly
	 * (trace_bad_caller), -1 none; bad_known false: not checked. */
	int32_t bad_at;
	bool bad_known;
};

/* What one process's memos may take: a memo is about its thread's stack
 * (words, frames, steps), a few KiB for most threads. */
#define WALK_REUSE_PROCESS_BYTES (8u << 20)
/* What one memo's steps may have read (a scan reads many words). */
#define WALK_MEMO_MAX_VALS (256u << 10)

/* One process's memos, per thread, within a byte budget: past it they all
 * go (each is rebuilt by its thread's next sample). */
struct walk_reuse {
	struct u64_map by_tid; /* tid + 1 -> struct walk_memo * */
	size_t bytes, max_bytes;
	uint64_t resets;
};

/* The steps of the walk being made, as the memo will keep them. */
struct walk_log_step {
	struct walk_step_state at;
	uint32_t n;                /* frames found above it */
	uint64_t step_lo, step_hi; /* what this step read, its trial walks' reads included */
};

#define WALK_LOG_RUNS 16

struct walk_log {
	struct walk_memo *memo; /* the previous walk, NULL: none usable */
	int32_t joined;         /* its boundary this walk joined, -1 none */
	uint32_t taken;         /* frames taken from it above that (runs of its steps) */
	/* The memo's boundaries [0, checked) read the same words in the
	 * sample; boundary differs_at does not (-1: none found yet). */
	uint32_t checked;
	int32_t differs_at;
	uint32_t n;
	uint64_t hi; /* the highest address the steps below the top read */
	/* The runs of the memo's steps the walk took (take_memo_steps), as
	 * ranges [from, to) of its frames, leaf first, in the order taken:
	 * a call inside one is a call of the memo's walk (walk_memo_bad_call).
	 * Past WALK_LOG_RUNS runs, the rest are not noted (only checked). */
	uint32_t nruns;
	struct walk_run_frames {
		uint32_t from, to;
	} run[WALK_LOG_RUNS];
	struct walk_log_step step[TRACE_MAX_FRAMES];
};

void walk_reuse_init(struct walk_reuse *r, size_t max_bytes);
void walk_reuse_free(struct walk_reuse *r);
/* The thread's memo, made empty on first use; NULL without memory. */
struct walk_memo *walk_reuse_of(struct walk_reuse *r, uint32_t tid);
void walk_reuse_forget(struct walk_reuse *r, uint32_t tid);

/* Whether m may stand for a walk of s now. */
bool walk_memo_fits(const struct walk_memo *m, const struct js_sample *s, const struct codemap *code,
		    const struct method_table *methods);

/* Moves *from_index (a walk's place in the memo's boundaries, bottom
 * first; see walk_memo_join) down past the boundaries below sp; true if a
 * boundary is at sp, the only place a join may be tried. */
static inline bool walk_memo_seek(const struct walk_memo *m, uint64_t sp, uint32_t *from_index)
{
	uint32_t k = *from_index;

	while (k > 0 && m->k[k - 1].sp < sp)
		k--;
	*from_index = k;
	return k > 0 && m->k[k - 1].sp == sp;
}

/* The memo's boundary a walk of s in state at may join (the words its walk
 * read from there on are the same in s), or -1. *from_index: where to look
 * from (bottom-first index, moved on as the walk goes down the stack).
 *
 * A join takes the memo's frames to the root, so one word that differs
 * deep in the stack (a recursion that came back through another call site)
 * forbids every join above it. The steps between still read what they read
 * before: when -1 is returned with *skip_to >= 0, the boundary
 * *from_index - 1 is in state at and the memo's steps from it down to
 * boundary *skip_to + 1 read the same words in s, so a walk may take their
 * frames and go on from boundary *skip_to's state, whose own words differ.
 * skip_to NULL: not looked for (a trial walk, which logs no steps). */
int walk_memo_join(struct walk_log *log, const struct js_sample *s, const struct walk_step_state *at,
		   uint32_t *from_index, int32_t *skip_to);

/* The frames (leaf first) the memo's step at boundary i found itself, from
 * m->frames: root-first indices [*lo, *hi). */
static inline void walk_memo_step_frames(const struct walk_memo *m, uint32_t i, uint32_t *lo, uint32_t *hi)
{
	*hi = m->b[i].below;
	*lo = i ? m->b[i - 1].below : 0;
}

/* trace_bad_caller(frames, n, root first) of a trace whose first joined
 * frames a join took from m (they are m's first frames): m's own answer
 * stands for the calls among those, so only the calls from the last of
 * them on are checked. With log (the walk's, NULL: none) and no bad call
 * in m, neither are the calls inside the runs of m's steps it took (in a
 * Jython replay, half the calls checked). */
int32_t walk_memo_bad_call(const struct walk_memo *m, uint32_t joined, const struct walk_log *log,
			   const struct trace_frame *frames, uint32_t n, const struct method_table *methods);

/* After a complete main walk of s that made trace (root first) and logged
 * its steps: the memo describes it from now on. The trace's call check
 * (trace_bad_caller) is made then, only for the calls the memo did not
 * already check: trace->bad_call_known. */
void walk_memo_update(struct walk_memo *m, const struct walk_log *log, const struct js_sample *s,
		      struct trace *trace, const struct codemap *code, const struct method_table *methods);

#endif
