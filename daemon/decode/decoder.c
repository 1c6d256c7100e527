/* SPDX-License-Identifier: GPL-2.0-only */
/* The walk driver: finds what kind of code each pc is in and hands the
 * frame to that kind's unwinder, until the bottom of the Java stack, the end
 * of the fragment, or a named failure. */
#include "decoder.h"

#include <string.h>

#include "userspace/common/agent_protocol.h"
#include "thread_roles.h"
#include "unwind.h"

static const char *const failure_names[] = {
	"none",
#define X(e, n, d) n,
	DECODE_FAILURES(X)
#undef X
};

static const char *const failure_descriptions[] = {
	"",
#define X(e, n, d) d,
	DECODE_FAILURES(X)
#undef X
};

static const char *const rule_names[] = {
	"none",
#define X(e, n, d) n,
	DECODE_RULES(X)
#undef X
};

static const char *const rule_descriptions[] = {
	"",
#define X(e, n, d) d,
	DECODE_RULES(X)
#undef X
};

const char *decode_rule_name(int rule)
{
	return rule >= 0 && rule < DECODE_RULE_COUNT ? rule_names[rule] : "invalid";
}

const char *decode_rule_description(int rule)
{
	return rule >= 0 && rule < DECODE_RULE_COUNT ? rule_descriptions[rule] : "";
}

const char *decode_failure_name(int reason)
{
	return reason >= 0 && reason < DECODE_FAILURE_COUNT ? failure_names[reason] : "invalid";
}

const char *decode_failure_description(int reason)
{
	return reason >= 0 && reason < DECODE_FAILURE_COUNT ? failure_descriptions[reason] : "";
}

/* A virtual thread's yield (JDK 21+): once Continuation.doYield has frozen
 * the frames above enterSpecial into the heap, its frame returns straight
 * to where Continuation.run called enterSpecial. For that moment run's
 * call site names enterSpecial, its callee is doYield. */
static bool yield_returning(const struct method_table *m, const struct trace_frame *caller,
			    const struct trace_frame *callee)
{
	const struct method_info *c = method_table_get(m, callee->method_id);
	const struct method_info *r = method_table_get(m, caller->method_id);

	return callee->type == FRAME_NATIVE && c && method_name(c) && r && method_name(r) && strcmp(method_name(c), "doYield") == 0 &&
	       strcmp(method_name(r), "run") == 0 && c->class_id == r->class_id;
}

int trace_bad_caller(const struct method_table *m, const struct trace_frame *f, uint32_t n, bool root_first)
{
	for (uint32_t i = 0; i + 1 < n; i++) {
		/* caller and callee of the i-th call in the trace */
		const struct trace_frame *caller = root_first ? &f[i] : &f[i + 1];
		const struct trace_frame *callee = root_first ? &f[i + 1] : &f[i];

		/* An inlined callee's caller is named by the JIT's own scope
		 * chain at that pc, a call the compiler saw: no stale return
		 * address makes one, so only the calls between physical
		 * frames are checked (in a deep compiled trace most calls are
		 * inlined ones). */
		if (caller->type == FRAME_PSEUDO || callee->type == FRAME_PSEUDO || callee->type == FRAME_INLINED ||
		    (caller->flags & FRAME_FLAG_VIA_VM) || caller->bci < 0)
			continue;
		/* At an invoke instruction, and one that names the callee's
		 * method (or an override: same name and descriptor). */
		if (method_table_bad_call(m, caller->method_id, caller->bci, callee->method_id) &&
		    !yield_returning(m, caller, callee))
			return (int)(caller - f);
	}
	return -1;
}

static bool in_code_cache(const struct vm_layout *L, uint64_t pc)
{
	return L->code_low && pc >= L->code_low && pc < L->code_high;
}

bool walk_in_code_cache(const struct walk *w, uint64_t pc)
{
	return in_code_cache(w->ctx->layout, pc);
}

bool walk_thread_has_no_java(const struct walk *w)
{
	const struct js_sample *s = w->s;
	const struct vm_layout *L = w->ctx->layout;

	return (s->flags & JS_SAMPLE_HAS_ANCHOR) && s->anchor_sp == 0 && (s->flags & JS_SAMPLE_HAS_STATE) &&
	       L->state_in_java >= 0 && JS_JVM_STATE(s->thread_state) != (uint32_t)L->state_in_java &&
	       JS_JVM_STATE(s->thread_state) != (uint32_t)L->state_in_java_trans;
}

/* SharedRuntime::generate_stubs builds these with generate_resolve_blob
 * (sharedRuntime.cpp, JDK 17-25): a call site's first call resolves its
 * target through them, and a not-entrant method's entry and an inline
 * cache miss jump to them, always with the caller's return address on
 * top of the stack. */
static bool stub_entered_by_call(const struct code_blob *b)
{
	static const char *const prefixes[] = {"resolve_", "wrong_method", "ic_miss"};

	if (!b->name)
		return false;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (strncmp(b->name, prefixes[i], strlen(prefixes[i])) == 0)
			return true;
	return false;
}

/* Stubs with a real frame size (runtime stubs, safepoint and deopt blobs)
 * are walked like compiled frames but contribute no Java frame. */
static enum step unwind_sized_stub(struct walk *w, const struct code_blob *b)
{
	enum step st;

	if (b->frame_size_words <= 0) {
		/* Native code called Java through an FFM upcall stub (JDK 22+):
		 * the Java frames above it are whole; what called the native
		 * code, Java or not, is below a native stretch jsampled does not
		 * walk - the trace is incomplete, not failed. */
		if (b->name && strncmp(b->name, "upcall_stub", 11) == 0)
			return STEP_INCOMPLETE;
		/* A virtual thread (JDK 21+) thaws its newest frames onto the
		 * carrier lazily: the oldest thawed one returns into the
		 * continuation's return barrier, which thaws the next ones from
		 * the heap stack chunk. The frames above are the thread's whole;
		 * the words below are the carrier's, not its callers. */
		if (stub_is_return_barrier(b)) {
			if (walk_enter_chunk(w))
				return STEP_CALLER;
			w->out->frozen = true;
			return STEP_INCOMPLETE;
		}
		return walk_fail(w, DECODE_FAIL_RETURN_INTO_STUB);
	}
	st = walk_pop_frame(w, w->sp + (uint64_t)b->frame_size_words * 8, true);
	/* A deopt blob returning into the interpreter is unpacking: below it
	 * are the skeletal frames it pushed for the deoptimized one. */
	if (st == STEP_CALLER && b->kind == JS_CODE_DEOPT && !w->out->deopt_from) {
		const struct code_blob *c = walk_find_code(w, w->pc);

		if (c && c->kind == JS_CODE_INTERPRETER) {
			w->deopt_skeleton = true;
			w->out->deopt_from = w->out->n + 1;
		}
	}
	/* Runtime stubs are also called from slow paths without debug info
	 * (C1's monitorexit, for one): the caller may not be at a call site.
	 * The call-resolution stubs are the exception: compiled code reaches
	 * them only through a call instruction, so their caller must be at a
	 * call site, and one that is not means the map no longer matches. */
	if (st == STEP_CALLER && !stub_entered_by_call(b))
		w->leaf_return = true;
	return st;
}

/* A call-resolution stub leaving: restore_live_registers pops the saved
 * registers (sp rises, rbp still at the frame's top), then pop rbp (sp ==
 * rbp: the caller's rbp at [sp], the return address above it), then jmp
 * to the resolved method (the return address at [sp]). Each candidate is
 * checked by the walk on; none holding is a named failure, not a guess. */
static enum step unwind_stub_epilogue(struct walk *w, const struct code_blob *b)
{
	uint64_t top = w->sp + (uint64_t)b->frame_size_words * 8, ret, saved_fp;
	enum step st;

	w->rule = DECODE_RULE_STUB_FRAME;
	if (w->fp >= w->sp && w->fp + 16 <= top && !(w->fp & 7) && frame_words_at(w, w->fp + 16, &ret, &saved_fp) &&
	    walk_try_caller(w, ret, w->fp + 16, saved_fp, &st))
		return st;
	if (walk_peek(w, w->sp, &ret) == FRAG_OK && walk_try_caller(w, ret, w->sp + 8, w->fp, &st))
		return st;
	return walk_fail(w, DECODE_FAIL_TOP_IN_STUB);
}

/* The top pc is in a stub or adapter (VM-generated code with no Java
 * frame of its own). */
static enum step unwind_top_stub(struct walk *w, const struct code_blob *b)
{
	const struct js_sample *s = w->s;

	/* Called into the VM from here: the anchor names the last Java frame. */
	if ((s->flags & JS_SAMPLE_HAS_ANCHOR) && s->anchor_sp)
		return unwind_anchor(w);
	if (walk_thread_has_no_java(w))
		return STEP_NO_JAVA; /* e.g. a JIT thread flushing the icache */
	/* Sampled before the agent (no anchor): a stub the VM calls from C++
	 * while it starts (CPU feature detection, icache flushes). */
	if (b->frame_size_words <= 0 && walk_chain_has_no_java(w))
		return STEP_NO_JAVA;
	/* The call-resolution stubs (RegisterSaver, sharedRuntime_x86_64.cpp)
	 * frame themselves with rbp from enter() to their last pop rbp, so
	 * past the prologue rbp marks the frame's top even while the epilogue
	 * pops the register area, when sp + size would overshoot. */
	if (b->frame_size_words > 2 && b->frame_complete_offset >= 0 &&
	    w->pc >= b->start + (uint64_t)b->frame_complete_offset && stub_entered_by_call(b) &&
	    w->fp != w->sp + (uint64_t)(b->frame_size_words - 2) * 8)
		return unwind_stub_epilogue(w, b);
	/* A runtime stub past its prologue has its full frame. */
	if (b->frame_size_words > 0 && b->frame_complete_offset >= 0 &&
	    w->pc >= b->start + (uint64_t)b->frame_complete_offset) {
		w->rule = DECODE_RULE_STUB_FRAME;
		return unwind_sized_stub(w, b);
	}
	/* Still saving registers, but rbp already frames it: stubs built with
	 * enter() (C1's Runtime1 stubs) push rbp and set it first, so rbp at
	 * exactly sp + size - 2 words says the frame's outer words are in
	 * place. Checked by the walk on, as it is no proof by itself. */
	if (b->frame_size_words > 2 && w->fp == w->sp + (uint64_t)(b->frame_size_words - 2) * 8) {
		uint64_t ret, saved_fp;
		enum step st;

		if (frame_words_at(w, w->fp + 16, &ret, &saved_fp) && walk_try_caller(w, ret, w->fp + 16, saved_fp, &st)) {
			w->rule = DECODE_RULE_STUB_FRAME;
			return st;
		}
	}
	return unwind_scan(w, DECODE_FAIL_TOP_IN_STUB);
}

static enum step step_frame(struct walk *w)
{
	const struct vm_layout *L = w->ctx->layout;
	const struct code_blob *b;

	b = walk_find_code(w, w->pc);
	if (w->ctx->explain) {
		char mname[256] = "";
		if (b && b->method_id && w->ctx->methods)
			method_table_name(w->ctx->methods, b->method_id, mname, sizeof(mname));
		fprintf(w->ctx->explain,
			"  pc %#llx sp %#llx fp %#llx: %s %s%s (kind %d%s, frame %d, +%#llx of %#x, stubs at %#x; "
			"id %llu level %d, loaded %+lld us)\n",
			(unsigned long long)w->pc, (unsigned long long)w->sp, (unsigned long long)w->fp,
			b ? "in" : "outside known code", b && b->name ? b->name : "", mname,
			b ? b->kind : -1, b && (b->flags & JS_CODE_FLAG_OSR) ? " osr" : "", b ? b->frame_size_words : 0,
			b ? (unsigned long long)(w->pc - b->start) : 0ull, b ? (unsigned)b->size : 0u,
			b ? (unsigned)b->stub_offset : 0u, b ? (unsigned long long)b->id : 0ull, b ? b->comp_level : -1,
			b ? ((long long)b->load_ns - (long long)w->s->time_ns) / 1000 : 0ll);
	}
	if (!w->top && w->pc == L->call_stub_return)
		return unwind_entry(w);
	if (!b) {
		if (in_code_cache(L, w->pc))
			return w->ctx->final ? walk_fail(w, DECODE_FAIL_UNKNOWN_CODE)
					     : walk_retry(w, WAIT_CODE, w->pc);
		/* Native or VM code: where the thread left Java code. */
		return w->top ? unwind_anchor(w) : walk_fail(w, DECODE_FAIL_BAD_RETURN_ADDRESS);
	}
	if (w->top && b->kind != JS_CODE_NMETHOD && b->kind != JS_CODE_NATIVE_WRAPPER &&
	    b->kind != JS_CODE_INTERPRETER && b->kind != JS_CODE_INTERPRETER_ENTRY)
		return unwind_top_stub(w, b);
	switch (b->kind) {
	case JS_CODE_NATIVE_WRAPPER:
		walk_note_enter_special(w, b);
		return unwind_compiled(w, b);
	case JS_CODE_NMETHOD:
		return unwind_compiled(w, b);
	case JS_CODE_INTERPRETER:
		if (w->top)
			w->rule = DECODE_RULE_INTERPRETED;
		return unwind_interpreted(w, b);
	case JS_CODE_INTERPRETER_ENTRY:
		/* A return address never points into a method entry: treat a
		 * non-top pc there as ordinary interpreter code. */
		return w->top ? unwind_interp_entry(w, b) : unwind_interpreted(w, b);
	default:
		return unwind_sized_stub(w, b);
	}
}

/* The main walk's log: the step that just ended read [touch.lo, touch.hi). */
static void close_step(struct walk *w)
{
	struct walk_log *log = w->log;

	if (log->n) {
		log->step[log->n - 1].step_lo = w->touch->lo;
		log->step[log->n - 1].step_hi = w->touch->hi;
	}
	if (log->n && w->touch->hi > log->hi)
		log->hi = w->touch->hi;
	w->touch->lo = UINT64_MAX;
	w->touch->hi = 0;
}

/* The walk's state at the start of its step, written into *at. */
static void put_state(const struct walk *w, struct walk_step_state *at)
{
	at->pc = w->pc;
	at->sp = w->sp;
	at->fp = w->fp;
	if (w->out->n)
		at->above = w->out->frames[w->out->n - 1];
	else
		at->above = (struct trace_frame){.type = FRAME_TYPE_COUNT};
	at->via_vm = w->via_vm;
	at->leaf_return = w->leaf_return;
	at->crossing = w->crossing;
}

/* A step of the main walk, as the memo will keep it (its reads are noted
 * when it is closed). */
static void log_step(struct walk *w, const struct walk_step_state *at)
{
	w->log->step[w->log->n++] = (struct walk_log_step){.at = *at, .n = w->out->n, .step_lo = UINT64_MAX, .step_hi = 0};
}

/* log_step of step_state, written in place (a deep walk logs thousands of
 * plain steps a sample). */
static void log_state(struct walk *w)
{
	struct walk_log_step *st = &w->log->step[w->log->n++];

	put_state(w, &st->at);
	st->n = w->out->n;
	st->step_lo = UINT64_MAX;
	st->step_hi = 0;
}

/* The rest of the walk is the previous walk's from its boundary j: its
 * frames below that step, its end (walk_reuse.h). */
static enum step join_memo(struct walk *w, int j)
{
	const struct walk_memo *m = w->log->memo;
	const struct memo_boundary *b = &m->b[j];

	for (uint32_t i = b->below; i-- > 0;)
		w->out->frames[w->out->n++] = m->frames[i];
	if (m->max_read > w->max_read)
		w->max_read = m->max_read;
	w->joined = b->below;
	/* A trial walk's outcome is part of the main walk's step: that step
	 * read what the memo's rest read (all of it, as one range). The main
	 * walk's own join ends it: the memo's steps go into the next memo as
	 * they are. */
	if (!w->logging)
		walk_touch_range(w, b->from, m->hi);
	if (w->ctx->explain)
		fprintf(w->ctx->explain, "    the same as the thread's previous walk from sp %#llx: %u frames\n",
			(unsigned long long)w->sp, b->below);
	w->via_vm = false;
	w->leaf_return = false;
	w->crossing = 0;
	walk_to_caller(w, m->stop_pc, m->stop_sp, m->stop_fp);
	return STEP_COMPLETE;
}

/* The previous walk's steps from boundary kk down to d + 1 read the same
 * words (walk_memo_join): the main walk logs them as they were, takes their
 * frames and goes on in boundary d's state. false: no room for them. */
static bool take_memo_steps(struct walk *w, uint32_t kk, uint32_t d)
{
	const struct walk_memo *m = w->log->memo;
	struct walk_log *log = w->log;
	const struct walk_step_state *to = &m->b[d].at;

	uint32_t first = w->out->n;

	if (w->out->n + (m->b[kk].below - m->b[d].below) > TRACE_MAX_FRAMES || log->n + (kk - d) + 1 > TRACE_MAX_FRAMES)
		return false;
	for (uint32_t i = kk; i > d; i--) {
		const struct memo_key *key = &m->k[i];
		const uint64_t read_hi = key->read_lo + key->read_len;
		uint32_t lo, hi;

		log->step[log->n++] = (struct walk_log_step){
			.at = m->b[i].at,
			.n = w->out->n,
			.step_lo = key->read_len ? key->read_lo : UINT64_MAX,
			.step_hi = key->read_len ? read_hi : 0,
		};
		if (key->read_len && read_hi > log->hi)
			log->hi = read_hi;
		if (key->read_len && read_hi > w->max_read)
			w->max_read = read_hi;
		walk_memo_step_frames(m, i, &lo, &hi);
		log->taken += hi - lo;
		while (hi-- > lo)
			w->out->frames[w->out->n++] = m->frames[hi];
	}
	if (log->nruns < WALK_LOG_RUNS && w->out->n > first)
		log->run[log->nruns++] = (struct walk_run_frames){.from = first, .to = w->out->n};
	if (w->ctx->explain)
		fprintf(w->ctx->explain, "    the same as the thread's previous walk from sp %#llx to %#llx: %u frames\n",
			(unsigned long long)w->sp, (unsigned long long)to->sp, m->b[kk].below - m->b[d].below);
	w->via_vm = to->via_vm;
	w->leaf_return = to->leaf_return;
	w->crossing = to->crossing;
	walk_to_caller(w, to->pc, to->sp, to->fp);
	w->log_at = d + 1;
	return true;
}

/* Below the top, each step of the main walk is logged; any walk joins the
 * previous one where it can. true: *st is the walk's end. */
static bool at_step(struct walk *w, enum step *st)
{
	struct walk_step_state at;
	int32_t skip_to = -1;
	int j;

	if (w->logging)
		close_step(w);
	put_state(w, &at);
	j = walk_memo_join(w->log, w->s, &at, &w->log_at, w->logging ? &skip_to : NULL);
	if (j >= 0 && w->out->n + w->log->memo->b[j].below <= TRACE_MAX_FRAMES) {
		if (w->logging)
			w->log->joined = j;
		*st = join_memo(w, j);
		return true;
	}
	/* Only the main walk takes a run of steps: it logs them for the next
	 * memo (a trial walk's reads would have to be counted as its step's). */
	if (skip_to >= 0 && take_memo_steps(w, w->log_at - 1, (uint32_t)skip_to))
		put_state(w, &at);
	if (w->logging)
		log_step(w, &at);
	return false;
}

static void note_resume(struct walk *w)
{
	w->resume = (struct walk_resume){.pc = w->pc, .sp = w->sp, .fp = w->fp, .n = w->out->n,
					 .top = w->top, .via_vm = w->via_vm, .leaf_return = w->leaf_return};
}

/* A step below the top that is a plain compiled frame (unwind.h) and no
 * join candidate (no boundary of the thread's previous walk in its state) is
 * taken without at_step and step_frame: logged as at_step logs it and
 * walked as step_frame would walk it, so the walk comes out the same (on
 * the recorded runs, traces byte for byte). In deep recursions nearly
 * every step is one (a Jython replay: 6.4M of its 6.9M steps), and the
 * general path's dispatch and bookkeeping were most of their cost.
 * false: not such a step, nothing done but the lookup of pc (which the
 * general path then finds remembered). */
static bool plain_step(struct walk *w, enum step *st)
{
	const struct codemap_hit *h;

	/* A join (or a run of the memo's steps) needs a boundary in the same
	 * state: at this sp, and (the cheapest part of the state to compare)
	 * at this pc. In a recursion most frames sit where the previous walk
	 * had frames too, at other return addresses. */
	if (w->log && w->log->memo && walk_memo_seek(w->log->memo, w->sp, &w->log_at) &&
	    w->log->memo->k[w->log_at - 1].pc == w->pc)
		return false;
	if (!(h = compiled_plain_slot(w)))
		return false;
	if (w->logging) {
		close_step(w);
		log_state(w);
	}
	note_resume(w);
	*st = unwind_compiled_plain(w, h);
	return true;
}

enum step walk_run(struct walk *w)
{
	enum step st = STEP_CALLER;

	for (unsigned frames = 0; st == STEP_CALLER; frames++) {
		if (frames >= TRACE_MAX_FRAMES)
			return walk_fail(w, DECODE_FAIL_DEPTH_LIMIT);
		if (++*w->work > DECODE_WORK_BUDGET)
			return walk_fail(w, DECODE_FAIL_WORK_LIMIT);
		if (!w->top && plain_step(w, &st))
			continue;
		if (w->log && !w->top && at_step(w, &st))
			break;
		note_resume(w);
		st = step_frame(w);
		w->top = false;
	}
	if (w->logging && w->log->joined < 0)
		close_step(w); /* the last step walked (a join closed it already) */
	return st;
}

static void reverse(struct trace *t)
{
	if (t->n < 2)
		return;
	for (struct trace_frame *a = t->frames, *b = t->frames + t->n - 1; a < b; a++, b--) {
		struct trace_frame f = *a;
		*a = *b;
		*b = f;
	}
}

/* A walk through a virtual thread's frozen frames (unwind_chunk.c) is
 * kept only if every frame read from the chunk stands at a call of the
 * frame above it: a chunk read while the continuation was changing it
 * can hold words of frames that are gone. Else the frames above the
 * return barrier are the trace, frozen below. */
static enum step check_chunk_frames(const struct decode_ctx *ctx, struct trace *out, enum step st)
{
	uint32_t from = out->chunk_from;
	int bad;

	if (from == 0 || from > out->n)
		return st;
	bad = trace_bad_caller(ctx->methods, out->frames + from - 1, out->n - (from - 1), false);
	if (bad < 0)
		return st;
	out->n = from;
	out->via_chunk = false;
	out->chunk_rejected = true;
	out->frozen = true;
	return STEP_INCOMPLETE;
}

/* Below an unpacking deopt (unwind.h, deopt_skeleton), a skeletal frame
 * not filled yet may hold the words of an older frame that look valid.
 * The frames are filled oldest first, so the youngest frame whose caller
 * does not call it marks the stale ones: it and the frames above it go,
 * and the trace ends at the frames already filled. */
static void drop_stale_skeletal_frames(const struct decode_ctx *ctx, struct trace *out)
{
	uint32_t from = out->deopt_from - 1, end = from, cut = from;

	while (end < out->n && out->frames[end].type == FRAME_INTERPRETED)
		end++;
	/* the skeleton's frames, and the caller of its oldest */
	if (end < out->n)
		end++;
	for (int at; cut + 1 < end && (at = trace_bad_caller(ctx->methods, out->frames + cut, end - cut, false)) >= 0;)
		cut += (uint32_t)at; /* the caller: the frames above it are stale */
	if (cut == from)
		return;
	memmove(out->frames + from, out->frames + cut, (out->n - cut) * sizeof(out->frames[0]));
	out->n -= cut - from;
}

enum decode_status decode_sample(const struct decode_ctx *ctx, const struct js_sample *s,
				 struct trace *out, int *reason)
{
	uint32_t work = 0;
	struct walk_touch touch = {.lo = UINT64_MAX, .hi = 0};
	struct walk_log *log = ctx->memo ? &ctx->scratch->log : NULL;
	struct walk w = {
		.ctx = ctx,
		.s = s,
		.out = out,
		.pc = s->regs[JS_REG_IP],
		.sp = s->regs[JS_REG_SP],
		.fp = s->regs[JS_REG_BP],
		.top = true,
		.work = &work,
		.touch = &touch,
		.log = log,
		.logging = log != NULL,
	};
	enum step st = STEP_CALLER;

	out->n = 0;
	out->complete = false;
	out->from_image = false;
	out->frozen = false;
	out->via_chunk = false;
	out->chunk_rejected = false;
	out->joined = 0;
	out->deopt_from = 0;
	out->bad_call_known = false;
	out->n_crossings = 0;
	out->top_rule = DECODE_RULE_NONE;
	out->wait = 0;
	out->wait_key = 0;
	*reason = DECODE_FAILURE_NONE;
	if (!ctx->layout->valid) {
		if (!ctx->final) {
			out->wait = WAIT_LAYOUT;
			return DECODE_RETRY;
		}
		*reason = DECODE_FAIL_NO_LAYOUT;
		return DECODE_FAILED;
	}
	if (s->stack_len == 0) {
		/* JVM-internal threads are sampled without their stacks. */
		int role = thread_role_of(s->comm);
		if (role) {
			trace_push(out, (uint32_t)role, FRAME_PSEUDO, -1);
			out->complete = true;
			return DECODE_NOT_JAVA;
		}
		*reason = DECODE_FAIL_EMPTY_STACK;
		return DECODE_FAILED;
	}
	if (log) {
		log->memo = walk_memo_fits(ctx->memo, s, ctx->code, ctx->methods) ? ctx->memo : NULL;
		log->joined = -1;
		log->taken = 0;
		log->nruns = 0;
		log->checked = 0;
		log->differs_at = -1;
		log->n = 0;
		log->hi = 0;
		w.log_at = log->memo ? log->memo->nb : 0;
	}
	st = walk_run(&w);
	if (out->via_chunk && (st == STEP_COMPLETE || st == STEP_INCOMPLETE))
		st = check_chunk_frames(ctx, out, st);
	if (out->deopt_from && !out->via_chunk && (st == STEP_COMPLETE || st == STEP_INCOMPLETE))
		drop_stale_skeletal_frames(ctx, out);
	out->stop_pc = w.pc;
	out->stop_sp = w.sp;
	out->stop_fp = w.fp;
	out->top_rule = (uint8_t)w.rule;
	out->max_read = w.max_read;
	out->work = work;
	out->resume = w.resume;
	switch (st) {
	case STEP_COMPLETE:
		out->complete = true;
		reverse(out);
		if (log && log->joined >= 0)
			out->joined = log->memo->b[log->joined].below;
		if (log)
			out->joined += log->taken;
		/* A walk through frozen frames read heap words, no stack's. */
		if (log && !out->via_chunk && !out->deopt_from)
			walk_memo_update(ctx->memo, log, s, out, ctx->code, ctx->methods);
		return DECODE_RESOLVED;
	case STEP_INCOMPLETE:
		if (out->n == 0)
			break; /* no Java frame at all: treat as a failure below */
		reverse(out);
		return DECODE_INCOMPLETE;
	case STEP_RETRY:
		return DECODE_RETRY;
	case STEP_NO_JAVA:
		if (out->n == 0) {
			int role = thread_role_of(s->comm);
			trace_push(out, role ? (uint32_t)role : PSEUDO_NATIVE, FRAME_PSEUDO, -1);
			out->complete = true;
			return DECODE_NOT_JAVA;
		}
		break;
	default:
		break;
	}
	/* No Java trace. A JVM-internal thread is not a failure: it gets its
	 * role's pseudo frame, also where it runs a stub of the code cache
	 * (the VM thread flushing the instruction cache, say: with native
	 * stacks its samples carry a stack the walk tries first). */
	if (out->n == 0) {
		int role = thread_role_of(s->comm);
		if (role) {
			trace_push(out, (uint32_t)role, FRAME_PSEUDO, -1);
			out->complete = true;
			return DECODE_NOT_JAVA;
		}
		/* A process's first thread outside Java code with no JavaThread
		 * (no anchor): the java launcher's, which loads and starts the JVM
		 * and runs main in a new thread (ContinueInNewThread in the JDK's
		 * java_md.c): native code, not a failed Java walk. */
		if (s->tid == s->pid && !(s->flags & JS_SAMPLE_HAS_ANCHOR) && w.reason == DECODE_FAIL_TOP_IN_NATIVE) {
			trace_push(out, PSEUDO_NATIVE, FRAME_PSEUDO, -1);
			out->complete = true;
			return DECODE_NOT_JAVA;
		}
	}
	*reason = st == STEP_INCOMPLETE ? DECODE_FAIL_BAD_FRAME_POINTER : w.reason;
	out->n = 0;
	return DECODE_FAILED;
}

enum decode_status decode_from_caller(const struct decode_ctx *ctx, const struct js_sample *s,
				      const struct walk_resume *at, struct trace *out)
{
	uint32_t work = 0;
	struct walk_touch touch = {.lo = UINT64_MAX, .hi = 0};
	struct walk w = {
		.ctx = ctx,
		.s = s,
		.out = out,
		.touch = &touch,
		.pc = at->pc,
		.sp = at->sp,
		.fp = at->fp,
		.top = false,
		.via_vm = at->via_vm,
		.leaf_return = at->leaf_return,
		.work = &work,
	};
	struct walk_log *log = ctx->memo ? &ctx->scratch->log : NULL;
	enum step st;

	out->n = 0;
	out->complete = false;
	out->frozen = false;
	out->via_chunk = false;
	out->wait = 0;
	out->n_crossings = 0;
	out->joined = 0;
	if (at->top || !ctx->layout->valid)
		return DECODE_FAILED;
	/* Walking on over a deep stack's older words mostly repeats the
	 * thread's previous complete walk down there: it may join that walk
	 * wherever the words it read are the same in s (a trial's way, no
	 * steps logged). The main walk's log is free by now. */
	if (log && walk_memo_fits(ctx->memo, s, ctx->code, ctx->methods)) {
		log->memo = ctx->memo;
		log->joined = -1;
		log->nruns = 0;
		log->checked = 0;
		log->differs_at = -1;
		log->n = 0;
		w.log = log;
		w.log_at = log->memo->nb;
	}
	st = walk_run(&w);
	out->max_read = w.max_read;
	out->work = work;
	/* No frame at all is a result too: only an entry frame was left. */
	if (st != STEP_COMPLETE)
		return st == STEP_RETRY ? DECODE_RETRY : DECODE_FAILED;
	out->complete = true;
	out->joined = w.joined;
	/* Its crossings are not kept: the frames join another trace. */
	for (uint32_t i = 0; i < out->n; i++)
		out->frames[i].flags &= (uint8_t)~(0xfu << FRAME_CROSSING_SHIFT);
	reverse(out);
	return DECODE_RESOLVED;
}
