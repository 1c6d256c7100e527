/* SPDX-License-Identifier: GPL-2.0-only */
/* A mounted virtual thread's frozen frames (JDK 21+). Its continuation
 * thaws only its newest frames onto the carrier; the oldest of those
 * returns into the return barrier, and the older frames stay in the tail
 * StackChunk on the Java heap, which the BPF program copied with the
 * sample (JS_SAMPLE_CHUNK). They are laid out as on a stack, with three
 * differences (continuationFreezeThaw_x86.inline.hpp, JDK 21-25): the top
 * frame's pc and fp sit in the two words below its sp; a link to an
 * interpreted caller is stored relative to its slot (chunk_link); and an
 * interpreted frame's saved sender sp is stale, its caller's sp follows
 * from its relativized locals pointer instead (unwind_interpreted.c). The
 * walk reads the chunk's words as the sample's until the chunk's bottom
 * frame returns, then goes on in the carrier's stack where the thawed
 * frames returned into the barrier. */
#include "unwind.h"

#include "userspace/common/agent_protocol.h"

bool walk_enter_chunk(struct walk *w)
{
	const struct js_sample *c = w->ctx->chunks ? frozen_chunks_of(w->ctx->chunks, w->s) : NULL;
	const struct code_blob *b;
	uint64_t pc, fp;

	if (!c || w->in_chunk || c->stack_len < 24 || c->regs[JS_REG_SP] != c->stack_addr + 16 ||
	    c->anchor_sp <= c->regs[JS_REG_SP]) {
		if (w->ctx->explain)
			fprintf(w->ctx->explain, "    no frozen frames came with the sample\n");
		return false;
	}
	memcpy(&fp, c->stack, 8);
	memcpy(&pc, c->stack + 8, 8);
	if (!(b = walk_find_code(w, pc))) {
		if (w->ctx->explain)
			fprintf(w->ctx->explain, "    the chunk's top pc %#llx is in no known code\n", (unsigned long long)pc);
		return false;
	}
	w->carrier = w->s;
	w->barrier_sp = w->sp;
	w->barrier_fp = w->fp;
	w->s = c;
	w->in_chunk = true;
	w->out->via_chunk = true;
	w->out->chunk_from = w->out->n;
	if (b->kind == JS_CODE_INTERPRETER)
		fp = chunk_link(w, c->stack_addr, fp);
	if (w->ctx->explain)
		fprintf(w->ctx->explain, "    into the frozen frames of chunk %#llx: pc %#llx sp %#llx fp %#llx\n",
			(unsigned long long)c->anchor_pc, (unsigned long long)pc,
			(unsigned long long)c->regs[JS_REG_SP], (unsigned long long)fp);
	w->pc = pc;
	w->sp = c->regs[JS_REG_SP];
	w->fp = fp;
	return true;
}

void walk_note_enter_special(struct walk *w, const struct code_blob *b)
{
	const struct method_info *m;

	struct enter_special *e = w->ctx->enter_special;

	if (e && !e->return_pc && !w->top && !w->in_chunk &&
	    (m = method_table_get(w->ctx->methods, b->method_id)) && method_name(m) && strcmp(method_name(m), "enterSpecial") == 0) {
		e->return_pc = w->pc;
		e->method_id = b->method_id;
	}
}

/* The chunk's bottom frame returns: its return address and link in the
 * chunk are not kept (zero, or stale words), since where the continuation
 * is entered changes with every mount. It returns where the thawed frames did, into enterSpecial,
 * whose frame the continuation entry is: at the barrier's sp, with the
 * barrier frame's link as its fp (ThawBase::new_entry_frame). */
enum step walk_leave_chunk(struct walk *w, uint64_t pc, uint64_t sp, uint64_t fp)
{
	const struct js_sample *c = w->s;

	(void)sp;
	(void)fp;
	/* Older frames still: in the parent chunk, which was not copied. */
	if (c->anchor_fp) {
		w->out->frozen = true;
		return STEP_INCOMPLETE;
	}
	pc = w->ctx->enter_special ? w->ctx->enter_special->return_pc : 0;
	if (!pc) {
		w->out->frozen = true;
		return STEP_INCOMPLETE;
	}
	w->s = w->carrier;
	w->in_chunk = false;
	if (w->ctx->explain)
		fprintf(w->ctx->explain, "    out of the chunk into the carrier: pc %#llx sp %#llx fp %#llx\n",
			(unsigned long long)pc, (unsigned long long)w->barrier_sp, (unsigned long long)w->barrier_fp);
	return walk_to_caller(w, pc, w->barrier_sp, w->barrier_fp);
}
