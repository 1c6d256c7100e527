/* SPDX-License-Identifier: GPL-2.0-only */
/* Entry frames: a return address into StubRoutines::call_stub means the
 * Java frames above were called from the VM (a thread's run(), main(), a
 * JNI upcall, class loading). The call stub's frame holds the
 * JavaCallWrapper (frame::entry_frame_call_wrapper_offset words from fp),
 * whose saved JavaFrameAnchor says whether older Java frames exist below the
 * VM/native frames in between: an empty anchor is the bottom of the Java
 * stack (the trace is complete), a set one is where the walk goes on
 * (JNI -> native -> Java alternation, ICPE'14 section 2.3). */
#include "unwind.h"

/* The call stub saved its caller's rbp at fp and was called from fp + 8:
 * where native unwinding of the VM/native frames in between starts. */
static void note_crossing(struct walk *w, uint64_t fp)
{
	struct trace *t = w->out;
	uint64_t saved_fp, ret;

	w->crossing = 0;
	if (t->n_crossings >= TRACE_MAX_CROSSINGS || walk_peek(w, fp, &saved_fp) != FRAG_OK ||
	    walk_peek(w, fp + 8, &ret) != FRAG_OK)
		return;
	t->crossings[t->n_crossings++] = (struct trace_crossing){.pc = ret, .sp = fp + 16, .fp = saved_fp};
	w->crossing = t->n_crossings;
}

enum step unwind_entry(struct walk *w)
{
	const struct vm_layout *L = w->ctx->layout;
	uint64_t fp = w->fp, wrapper, anchor, last_sp, last_fp, last_pc;
	enum step st;

	if (!frag_in_stack(w->s, fp) || fp < w->sp)
		return walk_fail(w, DECODE_FAIL_BAD_ENTRY_FRAME);
	if ((st = walk_read(w, fp + (uint64_t)(L->entry_call_wrapper_offset * 8), &wrapper)) != STEP_CALLER)
		return st == STEP_FAIL ? walk_fail(w, DECODE_FAIL_BAD_ENTRY_FRAME) : st;
	if (!frag_in_stack(w->s, wrapper))
		return walk_fail(w, DECODE_FAIL_BAD_ENTRY_FRAME);
	anchor = wrapper + (uint64_t)L->wrapper_anchor;
	if ((st = walk_read(w, anchor + (uint64_t)L->anchor_sp, &last_sp)) != STEP_CALLER)
		return st == STEP_FAIL ? walk_fail(w, DECODE_FAIL_BAD_ENTRY_FRAME) : st;
	if (last_sp == 0)
		return STEP_COMPLETE;
	if ((st = walk_read(w, anchor + (uint64_t)L->anchor_fp, &last_fp)) != STEP_CALLER ||
	    (st = walk_read(w, anchor + (uint64_t)L->anchor_pc, &last_pc)) != STEP_CALLER)
		return st == STEP_FAIL ? walk_fail(w, DECODE_FAIL_BAD_ENTRY_FRAME) : st;
	if (last_sp <= w->sp || !frag_in_stack(w->s, last_sp))
		return walk_fail(w, DECODE_FAIL_BAD_ENTRY_FRAME);
	/* A zero last_Java_pc means the return address sits just below sp. */
	if (last_pc == 0 && (st = walk_read(w, last_sp - 8, &last_pc)) != STEP_CALLER)
		return st == STEP_FAIL ? walk_fail(w, DECODE_FAIL_BAD_ENTRY_FRAME) : st;
	note_crossing(w, fp);
	w->via_vm = true;
	return walk_to_caller(w, last_pc, last_sp, last_fp);
}
