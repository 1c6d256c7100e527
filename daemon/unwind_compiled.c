/* Compiled frames (nmethods and native wrappers), walked by frame size.
 *
 * CodeBlob::_frame_size counts words from the frame's sp up to and
 * including the return address, so sender_sp = sp + size*8, the return pc
 * is at sender_sp-8 and the caller's rbp was saved at sender_sp-16 (C1, C2
 * and native wrappers all push rbp in the prologue, with or without
 * PreserveFramePointer: ../shared/hotspot-notes.md). rbp itself is not
 * used as a frame pointer: without PreserveFramePointer it is a general
 * register in compiled code. */
#include "unwind.h"

#include "../userspace/common/agent_protocol.h"

enum step emit_compiled_frames(struct walk *w, const struct code_blob *b, bool exact)
{
	const struct pc_scope *sc = code_blob_scope(b, w->pc, exact);
	uint8_t root_type = b->kind == JS_CODE_NATIVE_WRAPPER ? FRAME_NATIVE : FRAME_COMPILED;

	if (!sc) {
		/* Native wrappers have no descriptors; a top pc after the last
		 * descriptor (stub section, epilogue) still lies in the method. */
		if (exact && b->kind == JS_CODE_NMETHOD && b->npcs > 0)
			return walk_fail(w, DECODE_FAIL_NOT_A_CALL_SITE);
		if (trace_push(w->out, b->method_id, root_type, -1) != 0)
			return walk_fail(w, DECODE_FAIL_DEPTH_LIMIT);
		return STEP_CALLER;
	}
	for (uint8_t d = 0; d < sc->depth; d++) {
		const struct scope_frame *f = &b->frames[sc->first + d];
		uint8_t type = d + 1 == sc->depth ? root_type : FRAME_INLINED;

		if (trace_push(w->out, f->method_id, type, f->bci) != 0)
			return walk_fail(w, DECODE_FAIL_DEPTH_LIMIT);
	}
	return STEP_CALLER;
}

enum step unwind_compiled(struct walk *w, const struct code_blob *b)
{
	uint64_t sender_sp, ret, saved_fp;
	enum step st;

	if (w->top && b->frame_complete_offset >= 0 && w->pc < b->start + (uint64_t)b->frame_complete_offset)
		return walk_fail(w, DECODE_FAIL_PROLOGUE);
	if (b->frame_size_words <= 0)
		return walk_fail(w, DECODE_FAIL_UNKNOWN_FRAME_SIZE);
	st = emit_compiled_frames(w, b, !w->top);
	if (st != STEP_CALLER)
		return st;
	sender_sp = w->sp + (uint64_t)b->frame_size_words * 8;
	if ((st = walk_read(w, sender_sp - 8, &ret)) != STEP_CALLER)
		return st;
	if ((st = walk_read(w, sender_sp - 16, &saved_fp)) != STEP_CALLER)
		return st;
	w->pc = ret;
	w->sp = sender_sp;
	w->fp = saved_fp;
	return STEP_CALLER;
}
