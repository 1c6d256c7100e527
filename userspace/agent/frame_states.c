/* SPDX-License-Identifier: GPL-2.0-only */
#include "frame_states.h"

#include <string.h>

static int at(const struct frame_state_input *in, uint32_t pos, const uint8_t *bytes, uint32_t n)
{
	return pos + n <= in->size && memcmp(in->code + pos, bytes, n) == 0;
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static size_t add(struct frame_state_range *out, size_t n, size_t max, uint32_t start, uint32_t end,
		  uint8_t state)
{
	if (n >= max || end <= start)
		return n;
	out[n].start = start;
	out[n].end = end;
	out[n].state = state;
	return n + 1;
}

/* Length of "sub rsp, imm" (48 83 EC ib / 48 81 EC id) at pos when its
 * immediate is exactly imm, or 0. */
static uint32_t sub_rsp(const struct frame_state_input *in, uint32_t pos, int64_t imm)
{
	if (imm > 0 && imm < 0x80 && at(in, pos, (const uint8_t[]){0x48, 0x83, 0xec}, 3) &&
	    pos + 4 <= in->size && in->code[pos + 3] == imm)
		return 4;
	if (imm > 0 && at(in, pos, (const uint8_t[]){0x48, 0x81, 0xec}, 3) && pos + 7 <= in->size &&
	    le32(in->code + pos + 3) == (uint32_t)imm)
		return 7;
	return 0;
}

/* Length of "mov [rsp+disp], rbp" (48 89 6C 24 d8 / 48 89 AC 24 d32) with
 * exactly that displacement, or 0. */
static uint32_t store_rbp(const struct frame_state_input *in, uint32_t pos, int64_t disp)
{
	if (disp >= 0 && disp < 0x80 && at(in, pos, (const uint8_t[]){0x48, 0x89, 0x6c, 0x24}, 4) &&
	    pos + 5 <= in->size && in->code[pos + 4] == disp)
		return 5;
	if (disp >= 0 && at(in, pos, (const uint8_t[]){0x48, 0x89, 0xac, 0x24}, 4) && pos + 8 <= in->size &&
	    le32(in->code + pos + 4) == (uint32_t)disp)
		return 8;
	return 0;
}

/* mov rbp, rsp: 48 89 E5 or 48 8B EC. */
static uint32_t mov_rbp_rsp(const struct frame_state_input *in, uint32_t pos)
{
	if (at(in, pos, (const uint8_t[]){0x48, 0x89, 0xe5}, 3) ||
	    at(in, pos, (const uint8_t[]){0x48, 0x8b, 0xec}, 3))
		return 3;
	return 0;
}

/* The prologue. Everything before the frame is built runs with the return
 * address at [sp]: the inline-cache check before the verified entry, stack
 * bangs, and fast paths that return without a frame. Two shapes build the
 * frame (sizes in bytes, F = frame size including return address and rbp):
 *   C1, native wrappers: push rbp; [mov rbp, rsp;] sub rsp, F-16
 *   C2:                  sub rsp, F-8; mov [rsp+F-16], rbp
 * The immediates must match the frame size exactly, which rules out chance
 * byte matches. From the end of that sequence the frame is complete (though
 * HotSpot's frame-complete offset comes later, after the entry barrier). */
static size_t prologue(const struct frame_state_input *in, struct frame_state_range *out, size_t n,
		       size_t max)
{
	uint32_t complete = (uint32_t)in->frame_complete_offset;
	uint32_t from = in->verified_entry_offset > 0 ? (uint32_t)in->verified_entry_offset : 0;
	int64_t f = (int64_t)in->frame_size_words * 8;

	if (in->frame_complete_offset <= 0 || complete > in->size)
		return n;
	for (uint32_t pos = from; pos < complete; pos++) {
		uint32_t len, k;

		if (in->code[pos] == 0x55) { /* push rbp */
			k = pos + 1;
			k += mov_rbp_rsp(in, k);
			len = sub_rsp(in, k, f - 16);
			if (len || (f == 16 && k <= complete)) {
				n = add(out, n, max, 0, pos + 1, JS_FRAME_STATE_NO_FRAME);
				return add(out, n, max, pos + 1, k + len, JS_FRAME_STATE_RBP_PUSHED);
			}
		}
		len = sub_rsp(in, pos, f - 8);
		if (len && (k = store_rbp(in, pos + len, f - 16)) != 0) {
			n = add(out, n, max, 0, pos + len, JS_FRAME_STATE_NO_FRAME);
			return add(out, n, max, pos + len, pos + len + k, JS_FRAME_STATE_RBP_UNSAVED);
		}
	}
	return add(out, n, max, 0, complete, JS_FRAME_STATE_UNKNOWN);
}

/* After the frame is gone: the return safepoint poll and ret. JDK 16+
 * compares sp with the thread's poll word (cmp rsp, [r15+d8/d32]; ja slow
 * path); JDK 10-15 touch the thread's polling page (mov r10, [r15+d8/d32];
 * test eax, [r10]), older ones the global page (test eax, [rip+d32]).
 * Returns the offset just past the ret, or 0 if what follows is not that. */
static uint32_t poll_and_ret(const struct frame_state_input *in, uint32_t pos)
{
	uint32_t load = 0, cmp = 0;

	/* Methods marked @ReservedStackAccess (java.util.concurrent's locks)
	 * check the reserved stack zone first (MacroAssembler::
	 * reserved_stack_check): cmp rsp,[r15+d]; jb over a slow path that
	 * calls the VM and jumps away; the poll and ret follow the jump's
	 * target. The frame is gone all along. */
	if (at(in, pos, (const uint8_t[]){0x49, 0x3b, 0xa7}, 3))
		cmp = 7;
	else if (at(in, pos, (const uint8_t[]){0x49, 0x3b, 0x67}, 3))
		cmp = 4;
	if (cmp && at(in, pos + cmp, (const uint8_t[]){0x0f, 0x82}, 2) && pos + cmp + 6 <= in->size) {
		uint32_t next = pos + cmp + 6, target = next + le32(in->code + pos + cmp + 2);
		return target > next && target < in->size ? poll_and_ret(in, target) : 0;
	}
	if (cmp && at(in, pos + cmp, (const uint8_t[]){0x72}, 1) && pos + cmp + 2 <= in->size) {
		uint32_t next = pos + cmp + 2, target = next + in->code[pos + cmp + 1];
		return target > next && target < in->size ? poll_and_ret(in, target) : 0;
	}

	if (at(in, pos, (const uint8_t[]){0x49, 0x3b, 0xa7}, 3))
		pos += 7;
	else if (at(in, pos, (const uint8_t[]){0x49, 0x3b, 0x67}, 3))
		pos += 4;
	else if (at(in, pos, (const uint8_t[]){0x4d, 0x8b, 0x97}, 3))
		load = 7;
	else if (at(in, pos, (const uint8_t[]){0x4d, 0x8b, 0x57}, 3))
		load = 4;
	else if (at(in, pos, (const uint8_t[]){0x85, 0x05}, 2))
		return at(in, pos + 6, (const uint8_t[]){0xc3}, 1) ? pos + 7 : 0;
	if (load)
		return at(in, pos + load, (const uint8_t[]){0x41, 0x85, 0x02, 0xc3}, 4) ? pos + load + 4 : 0;
	if (at(in, pos, (const uint8_t[]){0x0f, 0x87}, 2))
		pos += 6;
	else if (at(in, pos, (const uint8_t[]){0x77}, 1))
		pos += 2;
	return at(in, pos, (const uint8_t[]){0xc3}, 1) ? pos + 1 : 0;
}

/* After the frame is gone, a tail jump instead of a return: C2 leaves a
 * method that rethrows an exception with its epilogue and a "jmp rel32" to
 * the rethrow stub (OptoRuntime::rethrow_stub), which then runs with this
 * method's return address at [sp]. Returns the offset past the jump, or 0. */
static uint32_t tail_jump(const struct frame_state_input *in, uint32_t pos)
{
	return at(in, pos, (const uint8_t[]){0xe9}, 1) && pos + 5 <= in->size ? pos + 5 : 0;
}

/* Epilogues: "add rsp, N; pop rbp" with N the frame size less ret and rbp
 * (C1 and C2), or "pop rbp" alone for two-word frames, or "leave" (native
 * wrappers), each followed by the return poll and ret, or (after add and
 * pop, whose immediates already matched the frame size) by a tail jump. */
static size_t epilogues(const struct frame_state_input *in, struct frame_state_range *out, size_t n,
			size_t max)
{
	uint32_t begin = in->frame_complete_offset > 0 ? (uint32_t)in->frame_complete_offset : 0;
	uint32_t end = in->stub_offset > 0 && (uint32_t)in->stub_offset <= in->size ?
			       (uint32_t)in->stub_offset : in->size;
	int64_t pop_bytes = (int64_t)in->frame_size_words * 8 - 16;

	if (in->frame_size_words < 2)
		return n;
	for (uint32_t i = begin; i < end && n < max; i++) {
		uint32_t pop_at = 0, ret_end;
		const uint8_t *c = in->code + i;

		if (pop_bytes > 0 && pop_bytes < 0x80 && at(in, i, (const uint8_t[]){0x48, 0x83, 0xc4}, 3) &&
		    i + 4 < end && c[3] == pop_bytes && c[4] == 0x5d)
			pop_at = i + 4;
		else if (pop_bytes >= 0x80 && at(in, i, (const uint8_t[]){0x48, 0x81, 0xc4}, 3) &&
			 i + 7 < end && le32(c + 3) == (uint32_t)pop_bytes && c[7] == 0x5d)
			pop_at = i + 7;
		else if (c[0] == 0x5d && pop_bytes == 0 && poll_and_ret(in, i + 1))
			pop_at = i;
		else if (c[0] == 0xc9 && (ret_end = poll_and_ret(in, i + 1)) != 0) {
			n = add(out, n, max, i + 1, ret_end, JS_FRAME_STATE_NO_FRAME); /* after leave */
			i = ret_end - 1;
			continue;
		}
		if (!pop_at)
			continue;
		ret_end = poll_and_ret(in, pop_at + 1);
		if (!ret_end && c[0] == 0x48)
			ret_end = tail_jump(in, pop_at + 1);
		if (!ret_end)
			continue; /* not followed by a return: not an epilogue */
		n = add(out, n, max, pop_at, pop_at + 1, JS_FRAME_STATE_RBP_PUSHED);
		n = add(out, n, max, pop_at + 1, ret_end, JS_FRAME_STATE_NO_FRAME);
		i = ret_end - 1;
	}
	return n;
}

size_t frame_states_compute(const struct frame_state_input *in, struct frame_state_range *out,
			    size_t max)
{
	size_t n = 0;

	if (!in->code || in->size == 0 || in->frame_size_words < 2)
		return 0;
	n = prologue(in, out, n, max);
	return epilogues(in, out, n, max);
}
