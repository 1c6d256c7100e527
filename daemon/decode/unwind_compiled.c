/* SPDX-License-Identifier: GPL-2.0-only */
/* Compiled frames (nmethods and native wrappers), walked by frame size.
 *
 * CodeBlob::_frame_size counts words from the frame's sp up to and
 * including the return address, so sender_sp = sp + size*8, the return pc
 * is at sender_sp-8 and the caller's rbp was saved at sender_sp-16 (C1, C2
 * and native wrappers all push rbp in the prologue, with or without
 * PreserveFramePointer: docs/hotspot.md). rbp itself is not
 * used as a frame pointer: without PreserveFramePointer it is a general
 * register in compiled code. */
#include <string.h>

#include "unwind.h"

#include "userspace/common/agent_protocol.h"

/* jsreplay --explain: the descriptors around a pc (a return address that
 * is no call site, or an interrupted pc), innermost method and bci of each,
 * and which are stray (stray_scopes.h): to tell a wrong return address from
 * missing debug information, or see why a top pc took the scope it took. */
static void explain_nearest_scopes(const struct walk *w, const struct code_blob *b, uint64_t pc)
{
	uint32_t off = (uint32_t)(pc - b->start), lo = 0, hi = b->npcs;
	FILE *f = w->ctx->explain;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (b->pcs[mid].pc_offset < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	fprintf(f, "    %u scopes in the blob; around +%#x:\n", b->npcs, off);
	for (uint32_t i = lo >= 4 ? lo - 4 : 0; i < b->npcs && i < lo + 4; i++) {
		const struct pc_scope *sc = &b->pcs[i];
		char name[256] = "";

		if (sc->depth && w->ctx->methods)
			method_table_name(w->ctx->methods, b->frames[sc->first].method_id, name, sizeof(name));
		fprintf(f, "      +%#x depth %u %s@%d%s\n", sc->pc_offset, sc->depth, name,
			sc->depth ? b->frames[sc->first].bci : -1, sc->stray ? " stray" : "");
	}
}

/* jsreplay --explain: every version of code that ever held pc, to tell a
 * return address into code the map had not caught up with. */
static void explain_versions(FILE *f, const struct codemap *m, uint64_t pc, uint64_t t)
{
	for (size_t i = 0; i < m->blobs.n; i++) {
		const struct code_blob *c = m->blobs.v[i];

		if (pc < c->start || pc >= c->start + c->size)
			continue;
		fprintf(f, "    version id %llu kind %d: loaded %+lld us, unloaded %+lld us from the sample; %s at +%#llx\n",
			(unsigned long long)c->id, c->kind, ((long long)c->load_ns - (long long)t) / 1000,
			c->unload_ns == CODE_LIVE ? 0ll : ((long long)c->unload_ns - (long long)t) / 1000,
			code_blob_scope(c, pc, true) ? "a call site" : "no call site",
			(unsigned long long)(pc - c->start));
	}
	/* Its neighbours: code the map placed around pc, at any time. */
	for (size_t i = 0; i < m->blobs.n; i++) {
		const struct code_blob *c = m->blobs.v[i];

		if (c->start + c->size + 4096 <= pc || c->start >= pc + 4096 || (pc >= c->start && pc < c->start + c->size))
			continue;
		fprintf(f, "    near: id %llu kind %d at %+lld size %#x method #%u: loaded %+lld us, unloaded %+lld us\n",
			(unsigned long long)c->id, c->kind, (long long)c->start - (long long)pc, c->size, c->method_id,
			((long long)c->load_ns - (long long)t) / 1000,
			c->unload_ns == CODE_LIVE ? 0ll : ((long long)c->unload_ns - (long long)t) / 1000);
	}
}

enum step emit_compiled_frames(struct walk *w, const struct code_blob *b, bool exact)
{
	const struct pc_scope *sc = walk_scope(w, b, w->pc, exact);
	uint8_t root_type = b->kind == JS_CODE_NATIVE_WRAPPER ? FRAME_NATIVE : FRAME_COMPILED;

	if (w->top && !exact && w->ctx->explain && b->npcs)
		explain_nearest_scopes(w, b, w->pc);

	if (!sc) {
		/* Native wrappers have no descriptors; a top pc after the last
		 * descriptor (stub section, epilogue) still lies in the method. */
		if (exact && b->kind == JS_CODE_NMETHOD && b->npcs > 0) {
			if (w->ctx->explain) {
				explain_nearest_scopes(w, b, w->pc);
				explain_versions(w->ctx->explain, w->ctx->code, w->pc, w->s->time_ns);
			}
			return walk_fail(w, DECODE_FAIL_NOT_A_CALL_SITE);
		}
		if (walk_push(w, b->method_id, root_type, -1) != 0)
			return walk_fail(w, DECODE_FAIL_DEPTH_LIMIT);
		return STEP_CALLER;
	}
	for (uint8_t d = 0; d < sc->depth; d++) {
		const struct scope_frame *f = &b->frames[sc->first + d];
		uint8_t type = d + 1 == sc->depth ? root_type : FRAME_INLINED;

		if (walk_push(w, f->method_id, type, f->bci) != 0)
			return walk_fail(w, DECODE_FAIL_DEPTH_LIMIT);
	}
	return STEP_CALLER;
}

/* The top frame is not in place (prologue, epilogue): the method is being
 * entered or left, so it is the root method alone, and its caller is found
 * from the return address at [sp] or, once rbp is pushed, at [sp+8]
 * (ICPE'14 section 2.3, with ranges the agent computed from the code). */
static enum step unwind_partial(struct walk *w, const struct code_blob *b, int state)
{
	bool pushed = state == JS_FRAME_STATE_RBP_PUSHED;

	if (walk_push(w, b->method_id,
		       b->kind == JS_CODE_NATIVE_WRAPPER ? FRAME_NATIVE : FRAME_COMPILED, -1) != 0)
		return walk_fail(w, DECODE_FAIL_DEPTH_LIMIT);
	/* The frame so far: the return address, and the caller's rbp below it
	 * once pushed. */
	return walk_pop_frame(w, w->sp + (pushed ? 16 : 8), pushed);
}

/* The top pc lies in the nmethod's stub section: a static-call stub on the
 * way to a callee (its return address is a call site of this same method,
 * which the walk reaches next) or the return-poll stub after the frame was
 * popped. Either way the return address is at [sp]. */
static enum step unwind_stub_section(struct walk *w, const struct code_blob *b)
{
	uint64_t ret;
	enum step st;

	if ((st = walk_read(w, w->sp, &ret)) != STEP_CALLER)
		return st;
	if (!(ret >= b->start && ret < b->start + b->size) &&
	    walk_push(w, b->method_id, FRAME_COMPILED, -1) != 0)
		return walk_fail(w, DECODE_FAIL_DEPTH_LIMIT);
	return walk_to_caller(w, ret, w->sp + 8, w->fp);
}

/* The top frame's return address leads to a compiled call site that names
 * another method than the frame runs: a stale return address, the frame is
 * shifted (its intrinsic pushed words). */
/* Two tries' frames agree: the same frames, whichever entry of the
 * crossings table each try's entry frames took. */
static bool same_frames(const struct trace_frame *a, const struct trace_frame *b, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (a[i].method_id != b[i].method_id || a[i].type != b[i].type || a[i].bci != b[i].bci ||
		    (a[i].flags & FRAME_FLAG_VIA_VM) != (b[i].flags & FRAME_FLAG_VIA_VM))
			return false;
	return true;
}

static bool calls_another_method(struct walk *w, const struct code_blob *b, uint64_t ret)
{
	const struct code_blob *c = walk_find_code(w, ret);
	const struct pc_scope *sc;

	/* Nor does a Java method return into a stub (StubRoutines' arraycopy,
	 * a Runtime1 slow path: they call the VM, never Java): only into
	 * callers, the interpreter, the call stub, the deopt blob, or the
	 * stubs of stub_java_returns_into. */
	if (c && c->kind == JS_CODE_STUB && !stub_java_returns_into(c))
		return true;
	/* A native method's wrapper calls its C function, which reaches Java
	 * again only through the call stub - except Continuation.enterSpecial
	 * (JDK 21+), whose wrapper calls Continuation.enter itself. */
	if (c && c->kind == JS_CODE_NATIVE_WRAPPER) {
		const struct method_info *m = method_table_get(w->ctx->methods, c->method_id);
		return !(m && method_name(m) && strcmp(method_name(m), "enterSpecial") == 0);
	}
	if (!c || c->kind != JS_CODE_NMETHOD || !(sc = walk_scope(w, c, ret, true)) || !sc->depth)
		return false;
	return method_table_calls(w->ctx->methods, c->frames[sc->first].method_id, c->frames[sc->first].bci,
				  b->method_id) == 0;
}

/* C2 intrinsics save registers on the stack inside a method's body
 * (string indexOf and compare, for one, push their string registers), so
 * sp can lie a few words below the frame. When the frame-size walk from
 * the top frame finds no return address, try the positions shifted up,
 * each validated by the walk on from it. (Not down: the frame's own spill
 * area holds stale return addresses of earlier calls that validate.) Two candidates that validate
 * into different traces (a recursive caller's own return address further
 * up, say) are a guess, not an answer: then the sample fails. Two that give
 * the same trace agree (an OSR frame keeps a stale copy of the interpreter
 * frame's return address below its real one). */
#define MAX_PUSHED_WORDS 6

static bool try_shifted_frame(struct walk *w, const struct code_blob *b, enum step *st)
{
	const struct walk orig = *w;
	const uint32_t n0 = w->out->n;
	struct trace_frame *first_found = w->ctx->scratch->first;
	struct walk found = orig;
	uint32_t found_n = 0;
	enum step found_st = STEP_FAIL, r;
	int nfound = 0;

	for (int k = 1; k <= MAX_PUSHED_WORDS; k++) {
		uint64_t sender_sp = orig.sp + (uint64_t)((int64_t)b->frame_size_words + k) * 8, ret, saved_fp;
		struct walk t = orig;

		if (!frame_words_at(&orig, sender_sp, &ret, &saved_fp))
			break;
		w->out->n = n0; /* a try writes frames only when it validates */
		if (calls_another_method(w, b, ret) || !walk_try_caller(&t, ret, sender_sp, saved_fp, &r))
			continue;
		if (r == STEP_RETRY) {
			*w = t;
			*st = r;
			return true;
		}
		if (nfound == 1) {
			if (t.out->n == found_n && same_frames(first_found, &t.out->frames[n0], found_n - n0))
				continue; /* the same trace: they agree */
			nfound++;
			break;
		}
		nfound = 1;
		memcpy(first_found, &t.out->frames[n0], (t.out->n - n0) * sizeof(first_found[0]));
		found = t;
		found_st = r;
		found_n = t.out->n;
	}
	if (nfound != 1) {
		w->out->n = n0;
		return false;
	}
	*w = found;
	w->out->n = found_n;
	memcpy(&w->out->frames[n0], first_found, (found_n - n0) * sizeof(first_found[0]));
	*st = found_st;
	return true;
}

/* C2's string indexOf intrinsic (x86 SSE4.2) copies a short string that
 * ends near a page end onto the stack, pushes its string registers, and
 * keeps the frame's own sp at [sp] while it searches, until "pop rsp"
 * (C2_MacroAssembler::string_indexof). So in a method named indexOf, a
 * word at sp pointing a little above sp is where the frame starts: the
 * frame-size walk from sp would read a stale return address of an earlier
 * call at that depth, one that may well name a call site. At most two
 * copies (16 bytes and a register each), three registers and the saved sp. */
#define INDEXOF_MAX_MOVED 80

static bool indexof_moved_sp(struct walk *w, const struct code_blob *b, uint64_t *frame_sp)
{
	const struct pc_scope *sc;
	const struct method_info *m;
	uint64_t v;

	if (walk_peek(w, w->sp, &v) != FRAG_OK || v <= w->sp || v > w->sp + INDEXOF_MAX_MOVED || (v & 7))
		return false;
	if (!(sc = walk_scope(w, b, w->pc, false)) || !sc->depth)
		return false;
	m = method_table_get(w->ctx->methods, b->frames[sc->first].method_id);
	if (!m || !method_name(m) || strcmp(method_name(m), "indexOf") != 0)
		return false;
	*frame_sp = v;
	return true;
}

/* One step further: the caller that ret leads to (a compiled frame of a
 * known size) must itself be called by the call site above it. A stale
 * return address to a call site of the right name (an earlier call of an
 * override) passes the first check, not this one. */
static bool caller_called_wrongly(struct walk *w, uint64_t ret, uint64_t sender_sp)
{
	const struct code_blob *c = walk_find_code(w, ret);
	uint64_t ret2;

	if (!c || c->kind != JS_CODE_NMETHOD || c->frame_size_words <= 0 || !walk_scope(w, c, ret, true) ||
	    walk_peek(w, sender_sp + (uint64_t)c->frame_size_words * 8 - 8, &ret2) != FRAG_OK)
		return false;
	return calls_another_method(w, c, ret2);
}

/* Whether a frame at pc (a return address) has no use for its rbp: compiled
 * frames are walked by their size, never through rbp (which C1 and C2 use
 * as a general register unless -XX:+PreserveFramePointer), and the callee
 * saved whatever the register held then, a value that changes from call to
 * call. Such a caller gets fp 0, so the walk does not depend on that word
 * (the thread's next walk may join this one over it: walk_reuse.h;
 * docs/hotspot.md, section 1). */
static bool fp_dead_in(struct walk *w, uint64_t pc)
{
	const struct code_blob *c;

	if (pc == w->ctx->layout->call_stub_return)
		return false;
	c = walk_find_code(w, pc);
	if (!c)
		return false;
	uint8_t kind = codemap_slot_kind(w->found_slot, c, pc);
	return kind == JS_CODE_NMETHOD || kind == JS_CODE_NATIVE_WRAPPER;
}

static bool in_stub_section(const struct code_blob *b, uint64_t pc)
{
	return b->stub_offset > 0 && pc >= b->start + (uint64_t)b->stub_offset;
}

const struct codemap_hit *compiled_plain_slot(struct walk *w)
{
	const struct code_blob *b;
	const struct codemap_hit *h;

	if (w->top || w->via_vm || w->leaf_return || w->ctx->explain || w->pc == w->ctx->layout->call_stub_return)
		return NULL;
	/* The slot knows (codemap_plain_slow, once per slot) whether pc is in
	 * an nmethod or native wrapper of known frame size, outside its stub
	 * section, at an exact scope with frames: what unwind_compiled needs
	 * to take the frame by its size. */
	if (!(b = walk_find_code(w, w->pc)) || !(h = codemap_plain_step(w->ctx->code, w->found_slot, b, w->pc)))
		return NULL;
	return w->out->n + h->depth <= TRACE_MAX_FRAMES ? h : NULL;
}

enum step unwind_compiled_plain(struct walk *w, const struct codemap_hit *h)
{
	struct trace_frame *f = &w->out->frames[w->out->n];
	const struct scope_frame *from = h->frames;
	uint64_t sender_sp = w->sp + (uint64_t)h->frame_size_words * 8, ret, saved_fp = 0;
	enum step st;

	/* emit_compiled_frames: the inline chain, innermost first, the
	 * blob's own method last */
	for (uint32_t d = 0; d < h->depth; d++)
		f[d] = (struct trace_frame){.method_id = from[d].method_id, .type = FRAME_INLINED, .bci = from[d].bci};
	f[h->depth - 1].type = h->kind == JS_CODE_NATIVE_WRAPPER ? FRAME_NATIVE : FRAME_COMPILED;
	w->out->n += h->depth;
	/* unwind_compiled below the top */
	if ((st = walk_read(w, sender_sp - 8, &ret)) != STEP_CALLER)
		return st;
	if (!fp_dead_in(w, ret) && (st = walk_read(w, sender_sp - 16, &saved_fp)) != STEP_CALLER)
		return st;
	return walk_to_caller(w, ret, sender_sp, saved_fp);
}

enum step unwind_compiled(struct walk *w, const struct code_blob *b)
{
	uint64_t sender_sp, ret, saved_fp;
	bool rbp_unsaved = false;
	enum step st;

	/* Method handle intrinsics (invokeBasic, linkTo*) are compiled as
	 * frameless native wrappers that jump to their target: the return
	 * address is at [sp] wherever they are interrupted. */
	if (w->top && b->frame_size_words == 0) {
		w->rule = DECODE_RULE_PARTIAL_FRAME;
		return unwind_partial(w, b, JS_FRAME_STATE_NO_FRAME);
	}
	if (w->top) {
		int state = code_blob_frame_state(b, w->pc);

		w->rule = DECODE_RULE_COMPILED;
		if (state == JS_FRAME_STATE_UNKNOWN)
			return walk_fail(w, DECODE_FAIL_PROLOGUE);
		if (state == JS_FRAME_STATE_NO_FRAME || state == JS_FRAME_STATE_RBP_PUSHED) {
			w->rule = DECODE_RULE_PARTIAL_FRAME;
			return unwind_partial(w, b, state);
		}
		rbp_unsaved = state == JS_FRAME_STATE_RBP_UNSAVED;
		if (b->nstates == 0 && b->frame_complete_offset >= 0 &&
		    w->pc < b->start + (uint64_t)b->frame_complete_offset)
			return walk_fail(w, DECODE_FAIL_PROLOGUE); /* no ranges from the agent */
		if (in_stub_section(b, w->pc)) {
			w->rule = DECODE_RULE_STUB_SECTION;
			return unwind_stub_section(w, b);
		}
	} else if (in_stub_section(b, w->pc) && b->orig_pc_offset >= 0) {
		/* A return address into the stub section is the deopt handler
		 * HotSpot patched in; the real pc was saved in the frame. */
		uint64_t orig;
		if ((st = walk_read(w, w->sp + (uint64_t)b->orig_pc_offset, &orig)) != STEP_CALLER)
			return st;
		if (orig < b->start || orig >= b->start + (uint64_t)b->stub_offset)
			return walk_fail(w, DECODE_FAIL_NOT_A_CALL_SITE);
		w->pc = orig;
	}
	if (b->frame_size_words <= 0)
		return walk_fail(w, DECODE_FAIL_UNKNOWN_FRAME_SIZE);
	if (w->leaf_return && walk_scope(w, b, w->pc, true))
		w->leaf_return = false; /* a real call site after all */
	st = emit_compiled_frames(w, b, !w->top && !w->leaf_return);
	w->leaf_return = false;
	if (st != STEP_CALLER)
		return st;
	sender_sp = w->sp + (uint64_t)b->frame_size_words * 8;
	if (!w->top) {
		/* Below the top only the return address matters here: the
		 * caller's rbp is read only for a caller that uses it. */
		if ((st = walk_read(w, sender_sp - 8, &ret)) != STEP_CALLER)
			return st;
		saved_fp = 0;
		if (!fp_dead_in(w, ret) && (st = walk_read(w, sender_sp - 16, &saved_fp)) != STEP_CALLER)
			return st;
		return walk_to_caller(w, ret, sender_sp, saved_fp);
	}
	if (b->kind == JS_CODE_NMETHOD && !rbp_unsaved) {
		uint64_t frame_sp, moved_sender_sp;

		if (indexof_moved_sp(w, b, &frame_sp)) {
			moved_sender_sp = frame_sp + (uint64_t)b->frame_size_words * 8;
			if (frame_words_at(w, moved_sender_sp, &ret, &saved_fp) && !calls_another_method(w, b, ret) &&
			    walk_try_caller(w, ret, moved_sender_sp, fp_dead_in(w, ret) ? 0 : saved_fp, &st)) {
				w->rule = DECODE_RULE_SHIFTED_FRAME;
				return st;
			}
		}
	}
	/* Just after C2's "sub rsp", the caller's rbp is still in the register. */
	saved_fp = w->fp;
	if ((st = walk_frame_words(w, sender_sp, &ret, rbp_unsaved ? NULL : &saved_fp)) != STEP_CALLER)
		return st;
	if (w->top && w->ctx->explain && !walk_in_code_cache(w, ret)) {
		/* The words the frame should span, and a few above. */
		for (uint64_t a = w->sp; a < sender_sp + 64; a += 8) {
			uint64_t v;
			if (walk_peek(w, a, &v) == FRAG_OK)
				fprintf(w->ctx->explain, "    [sp+%#llx] %#llx%s\n", (unsigned long long)(a - w->sp),
					(unsigned long long)v, walk_in_code_cache(w, v) ? "  (code)" : "");
		}
	}
	if (w->top && !rbp_unsaved && b->kind == JS_CODE_NMETHOD) {
		bool stale = walk_in_code_cache(w, ret) &&
			     (calls_another_method(w, b, ret) || caller_called_wrongly(w, ret, sender_sp));

		if ((stale || !walk_in_code_cache(w, ret)) && try_shifted_frame(w, b, &st)) {
			w->rule = DECODE_RULE_SHIFTED_FRAME;
			return st;
		}
		/* The frame is not where its size says (a prologue or slow path
		 * the frame states do not cover): look for the real return
		 * address, each candidate validated, rather than follow one
		 * known to be stale. */
		if (stale)
			return unwind_scan(w, DECODE_FAIL_NOT_A_CALL_SITE);
	}
	/* A native method's wrapper past its frame (after "leave" on its way
	 * out, or in a slow path that tears the frame down first) leaves its
	 * return address below the frame size: look for it, validated. */
	if (w->top && b->kind == JS_CODE_NATIVE_WRAPPER &&
	    (!walk_in_code_cache(w, ret) || calls_another_method(w, b, ret)))
		return unwind_scan(w, DECODE_FAIL_BAD_RETURN_ADDRESS);
	return walk_to_caller(w, ret, sender_sp, fp_dead_in(w, ret) ? 0 : saved_fp);
}
