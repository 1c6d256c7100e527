/* SPDX-License-Identifier: GPL-2.0-only */
/* Samples in an interpreter method entry, while the callee's frame is being
 * built (TemplateInterpreterGenerator::generate_normal_entry and the native
 * and intrinsic entries, x86-64): rbx holds the callee's Method* and r13 the
 * caller's sp throughout. The entry pops the return address into rax, pushes
 * the extra locals, pushes it back, then "enter"s (push rbp; mov rbp, rsp)
 * and pushes the fixed frame slots (sender sp, last sp, Method*, ...). So,
 * depending on where it was interrupted, the caller's return address is at
 * [sp], at [rbp+8] or in rax; each candidate is validated by walking on
 * from it. Walking the fp of an entry like an ordinary interpreted frame
 * would name the caller as the running method: a wrong trace. */
#include "unwind.h"

/* A candidate caller holds if the walk on from it validates and the
 * caller's invoke instruction names the callee: a stale return address of
 * an earlier call can lead to a caller that stands at another call. */
static bool try_caller(struct walk *w, uint64_t pc, uint64_t sp, uint64_t fp, enum step *st)
{
	const struct walk before = *w;
	const uint32_t n0 = w->out->n;

	if (!walk_try_caller(w, pc, sp, fp, st))
		return false;
	if (*st != STEP_RETRY && w->out->n > n0 &&
	    trace_bad_caller(w->ctx->methods, &w->out->frames[n0 - 1], 2, false) >= 0) {
		if (w->ctx->explain)
			fprintf(w->ctx->explain, "    candidate %#llx: its caller does not call the entered method\n",
				(unsigned long long)pc);
		*w = before;
		w->out->n = n0;
		return false;
	}
	return true;
}

enum step unwind_interp_entry(struct walk *w, const struct code_blob *b)
{
	const struct js_sample *s = w->s;
	const struct vm_layout *L = w->ctx->layout;
	uint64_t method = s->regs[JS_REG_BX], r13 = s->regs[JS_REG_R13], rax = s->regs[JS_REG_AX];
	uint64_t fp = w->fp, slot, ret, caller_fp, caller_sp;
	const struct method_info *m;
	uint32_t id = method_table_by_ptr(w->ctx->methods, method);
	enum step st;

	w->rule = DECODE_RULE_INTERP_ENTRY;
	if (!id)
		return w->ctx->final ? walk_fail(w, DECODE_FAIL_INTERP_BAD_METHOD) : walk_retry(w, WAIT_METHOD, method);
	/* Past the fixed frame: rbp is the callee's frame and its Method* slot
	 * is filled in - an ordinary interpreted frame from here. */
	if (fp > w->sp && frag_in_stack(s, fp) &&
	    walk_peek(w, fp + (uint64_t)(L->interp_method_offset * 8), &slot) == FRAG_OK && slot == method)
		return unwind_interpreted(w, b);

	m = method_table_get(w->ctx->methods, id);
	if (walk_push(w, id, method_is_native(m) ? FRAME_NATIVE : FRAME_INTERPRETED, 0) != 0)
		return walk_fail(w, DECODE_FAIL_DEPTH_LIMIT);
	/* Before "enter", on entry or once pushed back, the return address is
	 * at [sp]. After it, [sp] holds the new frame's slots and locals, never
	 * a code address. Tried first: before "enter", rbp is still the caller's
	 * fp, and [rbp+8] - the caller's own return address - would validate
	 * too, leaving the caller out of the trace. */
	if (walk_peek(w, w->sp, &ret) == FRAG_OK && walk_in_code_cache(w, ret) &&
	    try_caller(w, ret, r13, fp, &st))
		return st;
	/* After "enter": the return address above the new rbp. */
	if (fp > w->sp && frag_in_stack(s, fp) && walk_peek(w, fp + 8, &ret) == FRAG_OK &&
	    walk_peek(w, fp, &caller_fp) == FRAG_OK) {
		caller_sp = r13;
		if (w->sp <= fp - 8 && walk_peek(w, fp - 8, &slot) == FRAG_OK && slot > fp)
			caller_sp = slot; /* the sender sp slot, once r13 is reused */
		if (try_caller(w, ret, caller_sp, caller_fp, &st))
			return st;
	}
	/* Between popping the return address and pushing it back: in rax. */
	if (try_caller(w, rax, r13, fp, &st))
		return st;
	w->out->n--; /* the callee alone is not a trace */
	return walk_fail(w, DECODE_FAIL_INTERP_ENTRY);
}
