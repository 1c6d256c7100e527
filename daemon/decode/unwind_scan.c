/* SPDX-License-Identifier: GPL-2.0-only */
/* The last resort at the top of the stack, when the interrupted code keeps
 * no frame the decoder understands: a stub or adapter without a known frame
 * (vtable/itable stubs, StubRoutines, i2c/c2i adapters), or a leaf call from
 * compiled code into native code that sets no frame anchor. The caller's
 * return address is somewhere just above sp: scan the words there for one
 * that points into Java code, and accept it only if it is a call site the
 * code map knows (an exact scope of an nmethod, the interpreter with a valid
 * interpreted frame, the call stub) and the walk on from it succeeds - it
 * reaches the thread's entry frame, or at least two frames before the
 * fragment ends (ICPE'14 section 2.3, "additional checks"). */
#include <string.h>

#include "userspace/common/agent_protocol.h"
#include "unwind.h"

/* How far above sp to look: stubs keep small frames, but leaf native code
 * called straight from compiled code can be deep (JDK 21+ sorts arrays in
 * libsimdsort). Candidates are validated, so a stale word costs time, not
 * correctness. */
#define SCAN_WORDS 2048

/* Whether v could be a return address into Java code at all. A return
 * address into compiled code is either a call site with debug info, or the
 * return from a leaf call (runtime stubs, intrinsics calling native code),
 * which has none: *leaf says which. */
/* The trial's frames now start at frames[at]: their crossings move into
 * out's table (dropped, with their link, when it is full). */
static void adopt_crossings(struct trace *out, uint32_t at, const struct trace *trial)
{
	for (uint32_t i = 0; i < trial->n; i++) {
		struct trace_frame *f = &out->frames[at + i];
		unsigned k = FRAME_CROSSING(f->flags);

		if (!k)
			continue;
		f->flags &= (uint8_t)~(0xfu << FRAME_CROSSING_SHIFT);
		if (k <= trial->n_crossings && out->n_crossings < TRACE_MAX_CROSSINGS) {
			out->crossings[out->n_crossings++] = trial->crossings[k - 1];
			f->flags |= (uint8_t)(out->n_crossings << FRAME_CROSSING_SHIFT);
		}
	}
}

static bool plausible(struct walk *w, uint64_t v, const struct code_blob **bp, bool *leaf)
{
	const struct code_blob *b;

	*leaf = false;
	if (!walk_in_code_cache(w, v))
		return false;
	b = walk_find_code(w, v);
	if (!b)
		return false;
	*bp = b;
	switch (b->kind) {
	case JS_CODE_NMETHOD:
		if (walk_scope(w, b, v, true))
			return true;
		/* Not a call site: acceptable only in the body proper, with
		 * the frame in place. */
		*leaf = code_blob_frame_state(b, v) < 0 && v > b->start + (uint64_t)(b->frame_complete_offset > 0 ? b->frame_complete_offset : 0) &&
			(b->stub_offset <= 0 || v < b->start + (uint64_t)b->stub_offset);
		return *leaf;
	case JS_CODE_NATIVE_WRAPPER:
	case JS_CODE_INTERPRETER:
	case JS_CODE_INTERPRETER_ENTRY:
		return true;
	case JS_CODE_CALL_STUB:
		return v == w->ctx->layout->call_stub_return;
	default:
		return false;
	}
}

bool walk_try_caller(struct walk *w, uint64_t pc, uint64_t sp, uint64_t fp, enum step *result)
{
	const struct code_blob *b;
	struct walk sub;
	enum step st;
	bool leaf;

	if (!plausible(w, pc, &b, &leaf)) {
		if (w->ctx->explain && walk_in_code_cache(w, pc)) {
			b = walk_find_code(w, pc);
			fprintf(w->ctx->explain, "    candidate %#llx at sp %#llx: no call site (%s kind %d +%#llx)\n",
				(unsigned long long)pc, (unsigned long long)sp, b ? (b->name ? b->name : "") : "no blob",
				b ? b->kind : -1, b ? (unsigned long long)(pc - b->start) : 0ull);
		}
		return false;
	}
	struct trace *trial = &w->ctx->scratch->trial;

	sub = *w;
	sub.leaf_return = leaf;
	sub.out = trial;
	trial->n = 0;
	trial->n_crossings = 0;
	trial->frozen = false;
	trial->via_chunk = false;
	sub.pc = pc;
	sub.sp = sp;
	sub.fp = fp;
	sub.top = false;
	sub.reason = 0;
	sub.logging = false; /* a trial joins the previous walk but records no steps */
	st = walk_run(&sub);
	if (st == STEP_RETRY) {
		/* The walk on needs agent data not fetched yet: decide later. */
		w->out->wait = trial->wait;
		w->out->wait_key = trial->wait_key;
		*result = STEP_RETRY;
		return true;
	}
	if (!(st == STEP_COMPLETE || (st == STEP_INCOMPLETE && trial->n >= 2)) || trial->n == 0)
		return false;
	/* A stale return address left by an earlier call usually leads to a
	 * caller that does not stand at an invoke instruction, or at one that
	 * names another method than the frame found before it runs. */
	if (trace_bad_caller(w->ctx->methods, trial->frames, trial->n, false) >= 0)
		return false;
	if (w->out->n > 0) {
		const struct trace_frame join[2] = {w->out->frames[w->out->n - 1], trial->frames[0]};
		if (trace_bad_caller(w->ctx->methods, join, 2, false) >= 0)
			return false;
	}
	if (w->out->n + trial->n > TRACE_MAX_FRAMES) {
		*result = walk_fail(w, DECODE_FAIL_DEPTH_LIMIT);
		return true;
	}
	if (st == STEP_INCOMPLETE) {
		w->resume = sub.resume;
		w->resume.n += w->out->n;
		w->out->frozen = trial->frozen;
	}
	if (trial->via_chunk) {
		w->out->via_chunk = true;
		w->out->chunk_from = w->out->n + trial->chunk_from;
	}
	memcpy(&w->out->frames[w->out->n], trial->frames, trial->n * sizeof(trial->frames[0]));
	adopt_crossings(w->out, w->out->n, trial);
	w->out->n += trial->n;
	w->max_read = sub.max_read > w->max_read ? sub.max_read : w->max_read;
	walk_to_caller(w, sub.pc, sub.sp, sub.fp);
	*result = st;
	return true;
}

enum step unwind_scan(struct walk *w, int fail_reason)
{
	uint64_t base = w->sp;
	enum step st;

	for (int i = 0; i < SCAN_WORDS; i++) {
		uint64_t addr = base + 8 * (uint64_t)i, v;

		uint64_t fps[3], saved;
		int nfp = 0;

		if (walk_peek(w, addr, &v) != FRAG_OK)
			break;
		/* The caller's frame pointer (needed if it is interpreted): saved
		 * just below the return address by a callee that pushes rbp
		 * first (libjvm is built with frame pointers), still in rbp if the
		 * callee left it alone (stubs), or the one the thread's anchor
		 * kept from its last transition. */
		if (addr >= base + 8 && walk_peek(w, addr - 8, &saved) == FRAG_OK && saved > addr)
			fps[nfp++] = saved;
		fps[nfp++] = w->fp;
		if (w->s->anchor_fp && w->s->anchor_fp != w->fp)
			fps[nfp++] = w->s->anchor_fp;
		for (int k = 0; k < nfp; k++) {
			if (walk_try_caller(w, v, addr + 8, fps[k], &st)) {
				w->rule = DECODE_RULE_SCAN;
				return st;
			}
		}
	}
	return walk_fail(w, fail_reason);
}
