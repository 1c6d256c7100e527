/* SPDX-License-Identifier: GPL-2.0-only */
/* A thread interrupted outside Java code (in a JNI method, the VM, libc or
 * the kernel). HotSpot records the last Java frame of such a thread in
 * JavaThread::_anchor when it leaves Java code; the BPF program copies that
 * anchor into the sample at sample time (the paper had to leave
 * "breadcrumbs" on the stack because it read VM state too late, ICPE'14
 * section 2.3). The walk resumes at that frame, skipping the native frames
 * above it. */
#include <string.h>

#include "unwind.h"

/* Frames followed along the chain before giving up (deep VM code, such
 * as class loading inside class loading, stays well within). */
#define CHAIN_FRAMES 256

/* Follows the rbp chain from the walk's fp without moving the walk: the
 * first return address into the code cache (*ret, with the sp and saved
 * rbp of its frame), CHAIN_NONE if the chain ends in a zero rbp first, or
 * CHAIN_BROKEN. libjvm keeps frame pointers, and every way from Java code
 * into native code (JNI wrappers, runtime stubs, the interpreter) frames
 * itself with rbp, so a native frame is checked before its saved rbp is
 * followed and Java code is found at its transition. clone() clears rbp at
 * a thread's start, so a zero rbp ends a chain with no Java frame in it. */
enum chain_end { CHAIN_JAVA, CHAIN_NONE, CHAIN_BROKEN };

static enum chain_end follow_chain(const struct walk *w, uint64_t *ret, uint64_t *sp, uint64_t *saved)
{
	uint64_t fp = w->fp;

	for (int i = 0; i < CHAIN_FRAMES; i++) {
		if (fp == 0)
			return CHAIN_NONE;
		if (fp < w->sp || (fp & 7) || !frame_words_at(w, fp + 16, ret, saved))
			return CHAIN_BROKEN;
		if (walk_in_code_cache(w, *ret)) {
			*sp = fp + 16;
			return CHAIN_JAVA;
		}
		if (*saved != 0 && *saved <= fp)
			return CHAIN_BROKEN;
		fp = *saved;
	}
	return CHAIN_BROKEN;
}

/* Whether word v of a thread's stack could be where its first Java frame
 * returns: HotSpot enters Java through the call stub (JavaCalls::
 * call_helper), whose return address the layout gives, or (JDK 22+)
 * through an FFM upcall stub. Without the layout, any word pointing into
 * the code cache counts. A word in code the map does not know at the
 * sample's time does not: most start-up samples taken before the agent
 * hold such words (24 of the 26 below), and a thread entered by an upcall
 * stub not reported yet, native code calling Java before any agent was
 * there, is rarer than VM start-up in every JVM. */
static bool may_enter_java(const struct walk *w, uint64_t v)
{
	const struct code_blob *b;

	if (!walk_in_code_cache(w, v))
		return false;
	if (!w->ctx->layout->valid || !w->ctx->layout->call_stub_return)
		return true;
	if (v == w->ctx->layout->call_stub_return)
		return true;
	b = codemap_find(w->ctx->code, v, w->s->time_ns);
	return b && b->name && strncmp(b->name, "upcall_stub", 11) == 0;
}

/* The whole stack was copied (up to the end of the thread's stack) and no
 * word of it is where a first Java frame would return (may_enter_java):
 * the thread has no Java frame. For threads whose native code does not
 * keep frame pointers (glibc's, ld.so's, libjvm's in part). Other words
 * pointing into the code cache do not count: the VM's start-up leaves
 * such words in its frames (26 of a JDK 25 1-s JVM's start-up samples
 * failed on them); a stray copy of the call stub's return address above
 * sp only makes the sample fail as before. */
static bool whole_stack_without_code_address(const struct walk *w)
{
	const struct js_sample *s = w->s;
	/* An unreadable page ended the copy, unless it was copied as zeros
	 * (JS_SAMPLE_STACK_HOLE: every such page then was): a page of the
	 * stack the thread never touched, which holds no return address
	 * (HotSpot 25's main thread starting the VM leaves one: with it, 51 of
	 * a 1-s JVM's 93 start-up samples before its agent failed). */
	bool cut_by_fault = (s->flags & JS_SAMPLE_STACK_FAULT) && !(s->flags & JS_SAMPLE_STACK_HOLE);

	if (!s->stack_end || cut_by_fault ||
	    (s->flags & (JS_SAMPLE_STACK_CAPPED | JS_SAMPLE_COPY_TRIMMED | JS_SAMPLE_HELD_TRIMMED |
			 JS_SAMPLE_STACK_END_UNKNOWN)) ||
	    s->stack_addr > s->stack_end || s->stack_end - s->stack_addr > s->stack_len)
		return false;
	walk_touch_range(w, s->stack_addr, s->stack_addr + s->stack_len);
	for (uint32_t off = (uint32_t)((8 - (s->stack_addr & 7)) & 7); off + 8 <= s->stack_len; off += 8) {
		uint64_t v;

		memcpy(&v, s->stack + off, 8);
		if (may_enter_java(w, v))
			return false;
	}
	return true;
}

bool walk_chain_has_no_java(const struct walk *w)
{
	uint64_t ret, sp, saved;

	if (w->s->flags & JS_SAMPLE_HAS_ANCHOR)
		return false;
	switch (follow_chain(w, &ret, &sp, &saved)) {
	case CHAIN_NONE:
		return true;
	case CHAIN_BROKEN:
		return whole_stack_without_code_address(w);
	default:
		return false;
	}
}

/* No anchor was read: the JVM's layout came after the sample (a JVM
 * sampled since its exec, before its agent). The rbp chain of the native
 * frames leads to the last Java frame (validated by walking on from it),
 * or shows there is none: the launcher, or the VM starting up. */
static enum step unwind_frame_chain(struct walk *w)
{
	uint64_t ret, sp, saved;
	enum step st;

	switch (follow_chain(w, &ret, &sp, &saved)) {
	case CHAIN_NONE:
		return STEP_NO_JAVA;
	case CHAIN_JAVA:
		if (walk_try_caller(w, ret, sp, saved, &st)) {
			w->rule = DECODE_RULE_FRAME_CHAIN;
			return st;
		}
		break;
	default:
		if (whole_stack_without_code_address(w))
			return STEP_NO_JAVA;
		break;
	}
	return unwind_scan(w, DECODE_FAIL_TOP_IN_NATIVE);
}

enum step unwind_anchor(struct walk *w)
{
	const struct js_sample *s = w->s;
	uint64_t pc = s->anchor_pc;
	enum step st;

	if (!(s->flags & JS_SAMPLE_HAS_ANCHOR))
		return unwind_frame_chain(w);
	if (s->anchor_sp == 0) {
		/* An empty anchor outside Java code: a thread in native code or
		 * the VM that has no Java frame at all (launcher, attach, VM
		 * start/exit) - unless it is "in Java", i.e. a leaf call from
		 * compiled code that does not set the anchor: then the caller
		 * is found by a validated scan. */
		if (walk_thread_has_no_java(w))
			return STEP_NO_JAVA;
		return unwind_scan(w, DECODE_FAIL_TOP_IN_NATIVE);
	}
	if (s->anchor_sp < w->sp || (s->anchor_sp & 7) || !frag_in_stack(s, s->anchor_sp))
		return walk_fail(w, DECODE_FAIL_BAD_FRAME_POINTER);
	/* A zero last_Java_pc means the return address sits just below sp
	 * (HotSpot's frame(sp, fp) reads it from sp[-1]). If sp is the
	 * interrupted sp itself, the thread is back in the code that set the
	 * anchor (a C2 runtime stub between its VM call and the reset): that
	 * frame's pc is the interrupted pc, and the word below sp is gone. */
	if (pc == 0 && s->anchor_sp == w->sp) {
		pc = w->pc;
		w->leaf_return = true; /* not a return address */
	} else if (pc == 0 && (st = walk_read(w, s->anchor_sp - 8, &pc)) != STEP_CALLER)
		return st;
	w->rule = DECODE_RULE_ANCHOR;
	return walk_to_caller(w, pc, s->anchor_sp, s->anchor_fp);
}
