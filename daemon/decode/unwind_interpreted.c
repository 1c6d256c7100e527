/* SPDX-License-Identifier: GPL-2.0-only */
/* Interpreted frames. The template interpreter always keeps rbp as its frame
 * pointer; the frame holds Method* and the bytecode pointer at fixed word
 * offsets from it (frame_x86.hpp, offsets reported by the agent). Every
 * frame read this way is validated: the Method* must be one the agent
 * reported, and the bcp must point into that method's bytecode. */
#include "unwind.h"

static bool frame_bcp_valid(const struct vm_layout *L, const struct method_info *m, uint64_t bcp)
{
	uint64_t code = m->const_method + (uint64_t)L->const_method_size;

	return m->const_method && bcp >= code && bcp < code + m->body->code_size;
}

/* A skeletal frame the deopt has not filled yet (unwind.h): no Java frame
 * of its own, but linked to its caller as every interpreted frame is. */
static enum step skip_skeletal_frame(struct walk *w, uint64_t fp)
{
	const struct vm_layout *L = w->ctx->layout;
	uint64_t ret, saved_fp, sender_sp;
	enum step st;

	if ((st = walk_read(w, fp + 8, &ret)) != STEP_CALLER || (st = walk_read(w, fp, &saved_fp)) != STEP_CALLER ||
	    (st = walk_read(w, fp + (uint64_t)(L->interp_sender_sp_offset * 8), &sender_sp)) != STEP_CALLER)
		return st;
	if (w->ctx->explain)
		fprintf(w->ctx->explain, "    skeletal frame not filled yet: return %#llx, caller fp %#llx, sender sp %#llx\n",
			(unsigned long long)ret, (unsigned long long)saved_fp, (unsigned long long)sender_sp);
	if (sender_sp <= fp || !frag_in_stack(w->s, sender_sp))
		return walk_fail(w, DECODE_FAIL_BAD_FRAME_POINTER);
	return walk_to_caller(w, ret, sender_sp, saved_fp);
}

enum step unwind_interpreted(struct walk *w, const struct code_blob *b)
{
	const struct vm_layout *L = w->ctx->layout;
	uint64_t fp = w->fp, method, bcp = 0, ret, sender_sp, saved_fp;
	const struct method_info *m;
	uint32_t id;
	int32_t bci = -1;
	enum step st;

	(void)b;
	if (!frag_in_stack(w->s, fp) || fp < w->sp)
		return walk_fail(w, DECODE_FAIL_BAD_FRAME_POINTER);
	if ((st = walk_read(w, fp + (uint64_t)(L->interp_method_offset * 8), &method)) != STEP_CALLER)
		return st;
	id = method_table_by_ptr(w->ctx->methods, method);
	if (w->deopt_skeleton) {
		if ((m = id ? method_table_get(w->ctx->methods, id) : NULL) &&
		    walk_read(w, fp + (uint64_t)(L->interp_bcp_offset * 8), &bcp) == STEP_CALLER &&
		    frame_bcp_valid(L, m, bcp))
			w->deopt_skeleton = false; /* filled: so are the older ones */
		else
			return skip_skeletal_frame(w, fp);
	}
	if (!id)
		return w->ctx->final ? walk_fail(w, DECODE_FAIL_INTERP_BAD_METHOD)
				     : walk_retry(w, WAIT_METHOD, method);
	/* Looked up once for the bci, the call-site check and the frame type. */
	if (!(m = method_table_get(w->ctx->methods, id)))
		return walk_fail(w, DECODE_FAIL_INTERP_BAD_METHOD);
	if (walk_read(w, fp + (uint64_t)(L->interp_bcp_offset * 8), &bcp) == STEP_CALLER && frame_bcp_valid(L, m, bcp))
		bci = (int32_t)(bcp - (m->const_method + (uint64_t)L->const_method_size));
	/* A frame that called the Java frame found before it stands at an
	 * invoke instruction (unless it called through the VM). One that does not is named by a Method* the agent
	 * has since given to another method (a hidden class unloaded, its
	 * metaspace reused): wait for the newer agent data that says so. */
	if (!w->top && !w->via_vm && bci >= 0 && w->out->n > 0 &&
	    w->out->frames[w->out->n - 1].type != FRAME_PSEUDO && method_is_call_site(m, bci) == 0)
		return w->ctx->final ? walk_fail(w, DECODE_FAIL_INTERP_BAD_METHOD) : walk_retry(w, WAIT_UNKNOWN, method);
	if (walk_push(w, id, method_is_native(m) ? FRAME_NATIVE : FRAME_INTERPRETED, bci) != 0)
		return walk_fail(w, DECODE_FAIL_DEPTH_LIMIT);
	if ((st = walk_read(w, fp + 8, &ret)) != STEP_CALLER)
		return st;
	if ((st = walk_read(w, fp, &saved_fp)) != STEP_CALLER)
		return st;
	/* The caller's own (unextended) sp was saved by the interpreter; a
	 * compiled caller's frame size counts from it. */
	if ((st = walk_read(w, fp + (uint64_t)(L->interp_sender_sp_offset * 8), &sender_sp)) != STEP_CALLER)
		return st;
	if (w->in_chunk) {
		/* A frozen frame: its link is relative, its saved sender sp
		 * stale; its caller's sp is one word above its locals, whose
		 * pointer is kept as a word distance from fp. */
		uint64_t locals;

		saved_fp = chunk_link(w, fp, saved_fp);
		if ((st = walk_read(w, fp + (uint64_t)(L->interp_locals_offset * 8), &locals)) != STEP_CALLER)
			return st;
		if (locals > 0xffff)
			return walk_fail(w, DECODE_FAIL_BAD_FRAME_POINTER);
		sender_sp = fp + (locals + 1) * 8;
	}
	if (w->ctx->explain) {
		char name[256];
		method_table_name(w->ctx->methods, id, name, sizeof(name));
		fprintf(w->ctx->explain, "    interpreted %s: Method* %#llx bci %d, return %#llx, caller fp %#llx, sender sp %#llx\n",
			name, (unsigned long long)method, bci, (unsigned long long)ret,
			(unsigned long long)saved_fp, (unsigned long long)sender_sp);
	}
	/* Normally at least fp + 16 (above the return address); a method
	 * handle intrinsic that dropped its trailing MemberName argument
	 * leaves it one word lower. */
	if (sender_sp <= fp || !frag_in_stack(w->s, sender_sp))
		return walk_fail(w, DECODE_FAIL_BAD_FRAME_POINTER);
	return walk_to_caller(w, ret, sender_sp, saved_fp);
}
