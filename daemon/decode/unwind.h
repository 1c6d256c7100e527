/* SPDX-License-Identifier: GPL-2.0-only */
/* Shared state of one stack walk and the per-frame-kind unwinders. Each
 * unwinder emits the frame(s) at the current pc and moves the walk to the
 * caller, or stops the walk with a status. */
#ifndef JSAMPLED_UNWIND_H
#define JSAMPLED_UNWIND_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "decoder.h"
#include "stack_fragment.h"

struct walk_log;

/* The lowest and highest stack addresses a walk read or tried to read
 * (trial walks included): what its outcome depends on (walk_reuse.h). */
struct walk_touch {
	uint64_t lo, hi;
};

struct walk {
	const struct decode_ctx *ctx;
	const struct js_sample *s;
	struct trace *out;
	uint64_t pc, sp, fp;
	bool top; /* the current frame is the interrupted one */
	int reason;
	int rule; /* enum decode_rule of the top frame, set by its unwinder */
	uint64_t max_read; /* end of the highest stack word read */
	bool via_vm;       /* the next frame pushed called its callee through the VM */
	uint8_t crossing;  /* then: 1 + its entry frame's index in out->crossings, 0 none */
	/* The next compiled frame's pc returns from a leaf call (no debug info at
	 * the return address): name it by the nearest scope instead. */
	bool leaf_return;
	/* Steps and code-index nodes visited so far, shared by every trial walk
	 * of the sample: a sample's cost is bounded (DECODE_WORK_BUDGET). */
	uint32_t *work;
	/* The state at the start of the step the walk stopped in (when the
	 * fragment ended mid-frame, that frame's Java frames may be half
	 * pushed): where a walk over a longer copy of the stack goes on. */
	struct walk_resume resume;
	/* Every stack read goes through walk_peek, which notes it here. */
	struct walk_touch *touch;
	/* The thread's previous walk, to join where this one reaches the same
	 * frame over the same words (NULL: none); logging: this is the main
	 * walk, whose steps the log records (trial walks only join). */
	struct walk_log *log;
	bool logging;
	uint32_t log_at; /* the previous walk's boundary to compare next */
	uint32_t joined; /* frames this walk took from the previous walk's rest */
	/* walk_find_code's last lookup: the blob at found_pc (NULL: none),
	 * and found_pc's slot in the code map's lookup cache. */
	bool found_valid;
	uint64_t found_pc;
	const struct code_blob *found;
	struct codemap_hit *found_slot;
	/* In a virtual thread's frozen frames (unwind_chunk.c): s is then
	 * their chunk record, carrier the sample, barrier_sp the carrier's sp
	 * where the thawed frames returned into the return barrier. */
	bool in_chunk;
	const struct js_sample *carrier;
	uint64_t barrier_sp, barrier_fp;
	/* Below a deopt blob that is unpacking (Deoptimization::unpack_frames
	 * fills the skeletal interpreted frames it pushed, oldest first): the
	 * frames not filled yet have their links but stale Method* and bcp
	 * words, and are stepped over (unwind_interpreted.c). */
	bool deopt_skeleton;
};

/* Work one sample may take: far above what any recorded sample needed
 * (tests/corpus), low enough that no stack content can make decoding one
 * sample cost more than a few milliseconds. */
#define DECODE_WORK_BUDGET 200000u

enum step {
	STEP_CALLER,     /* frame emitted; pc/sp/fp now describe the caller */
	STEP_COMPLETE,   /* reached the bottom of the Java stack */
	STEP_INCOMPLETE, /* the fragment ended */
	STEP_RETRY,      /* code not known yet */
	STEP_FAIL,       /* w->reason says why */
	STEP_NO_JAVA,    /* a Java thread outside Java code with no Java frame at all */
};

/* The model lacks something newer agent data may bring: wait for it. */
/* Pushes a Java frame, marking it if the walk just crossed an entry frame. */
/* A virtual thread's continuation return barrier (JDK 21+: the frames
 * older than the one returning into it are frozen in the heap), by the
 * name HotSpot gives the stub: "Cont thaw return barrier" in JDK 21,
 * "cont_returnBarrier" in JDK 25. */
static inline bool stub_is_return_barrier(const struct code_blob *b)
{
	return b->name && (strncmp(b->name, "cont_returnBarrier", 18) == 0 ||
			   strncmp(b->name, "Cont thaw return barrier", 24) == 0);
}

/* Stubs a Java frame returns into: an FFM upcall stub (JDK 22+: native code
 * called Java), and the return barrier. Other stubs call the VM, never
 * Java. */
static inline bool stub_java_returns_into(const struct code_blob *b)
{
	return b->name && (strncmp(b->name, "upcall_stub", 11) == 0 || stub_is_return_barrier(b));
}

static inline int walk_push(struct walk *w, uint32_t method_id, uint8_t type, int32_t bci)
{
	if (trace_push(w->out, method_id, type, bci) != 0)
		return -1;
	if (w->via_vm) {
		w->out->frames[w->out->n - 1].flags |=
			(uint8_t)(FRAME_FLAG_VIA_VM | (w->crossing << FRAME_CROSSING_SHIFT));
		w->via_vm = false;
		w->crossing = 0;
	}
	return 0;
}

static inline enum step walk_retry(struct walk *w, uint8_t wait, uint64_t key)
{
	w->out->wait = wait;
	w->out->wait_key = key;
	return STEP_RETRY;
}

static inline enum step walk_fail_at(struct walk *w, int reason, const char *file, int line)
{
	w->reason = reason;
	if (w->ctx->explain)
		fprintf(w->ctx->explain, "    fail %s at %s:%d\n", decode_failure_name(reason), file, line);
	return STEP_FAIL;
}
#define walk_fail(w, reason) walk_fail_at((w), (reason), __FILE__, __LINE__)

/* The code blob at pc, at the sample's time (counted as work). The last
 * one found is kept: a frame's step looks up its caller's return address
 * (fp_dead_in), then the caller's step looks it up again. */
static inline const struct code_blob *walk_find_code(struct walk *w, uint64_t pc)
{
	if (pc != w->found_pc || !w->found_valid) {
		w->found = codemap_find_slot(w->ctx->code, pc, w->s->time_ns, w->work, &w->found_slot);
		w->found_pc = pc;
		w->found_valid = true;
	}
	return w->found;
}

/* The scope of blob b at pc (code_blob_scope); an exact one is remembered
 * with the code lookup of pc (whose slot the walk has if it looked pc up
 * last). */
static inline const struct pc_scope *walk_scope(const struct walk *w, const struct code_blob *b, uint64_t pc,
						bool exact)
{
	if (!exact)
		return code_blob_scope(b, pc, false);
	return w->found_valid && pc == w->found_pc ? codemap_slot_scope(w->ctx->code, w->found_slot, b, pc)
						    : codemap_exact_scope(w->ctx->code, b, pc);
}

/* Notes the words [lo, hi) as read (a walk that reads them in bulk). */
static inline void walk_touch_range(const struct walk *w, uint64_t lo, uint64_t hi)
{
	if (lo < w->touch->lo)
		w->touch->lo = lo;
	if (hi > w->touch->hi)
		w->touch->hi = hi;
}

/* Reads a stack word of the sample, noting the address as read. */
static inline enum frag_read walk_peek(const struct walk *w, uint64_t addr, uint64_t *out)
{
	/* What a walk reuses and images keep are the thread's own stack's. */
	if (!w->in_chunk)
		walk_touch_range(w, addr, addr > UINT64_MAX - 8 ? UINT64_MAX : addr + 8);
	return frag_read_u64(w->s, addr, out);
}

/* Reads a stack word, mapping fragment outcomes to walk steps: returns
 * STEP_CALLER on success. */
static inline enum step walk_read(struct walk *w, uint64_t addr, uint64_t *out)
{
	switch (walk_peek(w, addr, out)) {
	case FRAG_OK:
		if (addr + 8 > w->max_read && !w->in_chunk)
			w->max_read = addr + 8;
		return STEP_CALLER;
	case FRAG_BEYOND:
		if (w->ctx->explain)
			fprintf(w->ctx->explain, "    read %#llx: beyond the copied fragment\n", (unsigned long long)addr);
		return STEP_INCOMPLETE;
	default:
		return walk_fail(w, DECODE_FAIL_BAD_FRAME_POINTER);
	}
}

/* A saved rbp read at link in a frozen chunk: HotSpot stores the link to
 * an interpreted caller as its distance in words from the slot
 * (patch_callee_link_relative); a small value inside the chunk is one. */
static inline uint64_t chunk_link(const struct walk *w, uint64_t link, uint64_t v)
{
	uint64_t words = (w->s->stack_end - link) / 8;

	return v > 0 && v < words ? link + v * 8 : v;
}

/* Enters a virtual thread's frozen frames at its return barrier, if its
 * chunk came with the sample (unwind_chunk.c). */
bool walk_enter_chunk(struct walk *w);
/* Learns enterSpecial's return pc from a frame returned into there. */
void walk_note_enter_special(struct walk *w, const struct code_blob *b);

/* Moves the walk to a caller: its pc, sp and fp. Every unwinder decides
 * where the caller is; this is the one place the walk moves. */
enum step walk_leave_chunk(struct walk *w, uint64_t pc, uint64_t sp, uint64_t fp);

static inline enum step walk_to_caller(struct walk *w, uint64_t pc, uint64_t sp, uint64_t fp)
{
	if (w->in_chunk && sp >= w->s->anchor_sp)
		return walk_leave_chunk(w, pc, sp, fp);
	/* A frame's link slot is below its caller's sp (an interpreted
	 * frame's link was taken as relative already). */
	if (w->in_chunk)
		fp = chunk_link(w, sp - 16, fp);
	w->pc = pc;
	w->sp = sp;
	w->fp = fp;
	return STEP_CALLER;
}

/* A frame that ends at sender_sp (its caller's sp) holds the return address
 * at sender_sp - 8 and, once saved, the caller's rbp at sender_sp - 16
 * (compiled frames, sized stubs, prologues past "push rbp"). saved_fp NULL:
 * not saved (yet). */
static inline enum step walk_frame_words(struct walk *w, uint64_t sender_sp, uint64_t *ret, uint64_t *saved_fp)
{
	enum step st = walk_read(w, sender_sp - 8, ret);

	if (st == STEP_CALLER && saved_fp)
		st = walk_read(w, sender_sp - 16, saved_fp);
	return st;
}

/* Pops such a frame: the walk moves to its caller. fp_saved false: the
 * caller's rbp is still in the register. */
static inline enum step walk_pop_frame(struct walk *w, uint64_t sender_sp, bool fp_saved)
{
	uint64_t ret, fp = w->fp;
	enum step st = walk_frame_words(w, sender_sp, &ret, fp_saved ? &fp : NULL);

	return st == STEP_CALLER ? walk_to_caller(w, ret, sender_sp, fp) : st;
}

/* The same two words of a candidate frame, read without moving the walk. */
static inline bool frame_words_at(const struct walk *w, uint64_t sender_sp, uint64_t *ret, uint64_t *saved_fp)
{
	return walk_peek(w, sender_sp - 8, ret) == FRAG_OK && walk_peek(w, sender_sp - 16, saved_fp) == FRAG_OK;
}

/* Pushes the frames of compiled code at pc (inlined chain from the scope
 * descriptors, or the blob's method alone). */
enum step emit_compiled_frames(struct walk *w, const struct code_blob *b, bool exact);

enum step unwind_compiled(struct walk *w, const struct code_blob *b);
/* The commonest step below the top, taken without the general path's
 * dispatch and checks: a compiled frame returned into at a call site with
 * debug information, called directly (no entry frame crossed, no leaf
 * call). compiled_plain_slot: pc's code-lookup slot summarizing the frame
 * (codemap_plain_step) if the step is one, else NULL, having only looked
 * up pc as step_frame does first; unwind_compiled_plain then takes it with
 * the same frames, reads and lookups as step_frame and unwind_compiled
 * would, from the slot (not the blob, its scope or their frames). */
const struct codemap_hit *compiled_plain_slot(struct walk *w);
enum step unwind_compiled_plain(struct walk *w, const struct codemap_hit *h);
enum step unwind_interpreted(struct walk *w, const struct code_blob *b);
enum step unwind_entry(struct walk *w);
enum step unwind_anchor(struct walk *w);
/* A sample without a frame anchor whose rbp chain ends at its thread's
 * start without reaching the code cache: no Java frame (unwind_anchor.c). */
bool walk_chain_has_no_java(const struct walk *w);
enum step unwind_scan(struct walk *w, int fail_reason);
enum step unwind_interp_entry(struct walk *w, const struct code_blob *b);
/* Validates a candidate caller (return address pc, its sp and fp) by
 * walking on from it; if it holds, appends the frames found, sets *result
 * to the walk's final step and returns true. */
bool walk_try_caller(struct walk *w, uint64_t pc, uint64_t sp, uint64_t fp, enum step *result);

/* Runs the walk from its current state until it stops (decoder.c). */
enum step walk_run(struct walk *w);
bool walk_in_code_cache(const struct walk *w, uint64_t pc);
/* A Java thread outside Java code, with no Java frame: not "in Java" by its
 * thread state, and no frame anchor. */
bool walk_thread_has_no_java(const struct walk *w);

#endif
