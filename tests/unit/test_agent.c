/* SPDX-License-Identifier: GPL-2.0-only */
/* The agent's JVM-free parts: the versioned record store (fetch since N,
 * batching, compaction), the prologue/epilogue recogniser on real
 * HotSpot instruction sequences (captured from JDK 17 and 25 on x86-64),
 * the bytecode and constant-pool readers behind the call-target check, and
 * the size of a compiled method's code. */
#include <stdlib.h>
#include <string.h>

#include "userspace/agent/agent_store.h"
#include "userspace/agent/bytecode_calls.h"
#include "userspace/agent/code_extent.h"
#include "userspace/agent/constant_pool.h"
#include "userspace/agent/frame_states.h"
#include "userspace/common/agent_protocol.h"
#include "check.h"

static uint32_t batch(struct agent_store *s, uint64_t since, size_t max, uint64_t *upto, int *more)
{
	struct wbuf w;
	uint32_t n;

	wbuf_init(&w);
	n = store_write_batch(s, since, max, &w, upto, more);
	wbuf_free(&w);
	return n;
}

static void test_store_versions_and_batches(void)
{
	struct agent_store s;
	uint64_t upto;
	int more, is_new;
	uint8_t payload[100] = {0};

	CHECK(store_init(&s) == 0);
	store_lock(&s);
	uint32_t m1 = store_method_id_locked(&s, 0x1000, 1, &is_new);
	CHECK(is_new && m1 == 1);
	CHECK_EQ(store_method_id_locked(&s, 0x1000, 1, &is_new), 1);
	CHECK(!is_new);
	CHECK_EQ(store_method_id_locked(&s, 0x2000, 0, NULL), 2);
	for (int i = 0; i < 10; i++)
		CHECK_EQ(store_append_locked(&s, JS_REC_CLASS, 0, 0, payload, sizeof(payload)), (uint64_t)i + 1);
	store_unlock(&s);

	CHECK_EQ(batch(&s, 0, 1 << 20, &upto, &more), 10);
	CHECK_EQ(upto, 10);
	CHECK(!more);
	CHECK_EQ(batch(&s, 7, 1 << 20, &upto, &more), 3);
	CHECK_EQ(batch(&s, 10, 1 << 20, &upto, &more), 0);
	CHECK_EQ(upto, 10);
	/* A small limit cuts the batch but always makes progress. */
	CHECK_EQ(batch(&s, 0, 250, &upto, &more), 2);
	CHECK(more);
	CHECK_EQ(upto, 2);
	CHECK_EQ(batch(&s, 0, 1, &upto, &more), 1);
	CHECK_EQ(upto, 1);

	struct pending_method *p;
	size_t n, left;
	store_take_pending(&s, 1, &p, &n, &left);
	CHECK_EQ(n, 1);
	CHECK_EQ(left, 1);
	CHECK(p[0].handle == 0x1000 && p[0].class_id == 1);
	free(p);
	store_take_pending(&s, 10, &p, &n, &left);
	CHECK_EQ(n, 1);
	CHECK_EQ(left, 0);
	CHECK(p[0].method_id == 2);
	free(p);
	store_take_pending(&s, 10, &p, &n, &left);
	CHECK_EQ(n, 0);
	free(p);
	store_destroy(&s);
}

static void test_store_compaction(void)
{
	struct agent_store s;
	uint64_t upto, v_load, v_unload;
	int more;
	uint8_t payload[16] = {0};

	CHECK(store_init(&s) == 0);
	store_lock(&s);
	uint64_t id = store_new_code_id_locked(&s);
	v_load = store_append_locked(&s, JS_REC_CODE_LOAD, id, 0, payload, sizeof(payload));
	store_code_loaded_locked(&s, 0xc0de, id);
	store_append_locked(&s, JS_REC_CLASS, 0, 0, payload, sizeof(payload));
	CHECK_EQ(store_code_unloaded_locked(&s, 0xc0de), id);
	CHECK_EQ(store_code_unloaded_locked(&s, 0xc0de), 0);
	v_unload = store_append_locked(&s, JS_REC_CODE_UNLOAD, id, 1, payload, sizeof(payload));
	store_unlock(&s);
	CHECK(v_load < v_unload);
	CHECK_EQ(s.dead, 2);
	/* Not yet acknowledged: nothing goes. */
	CHECK_EQ(store_compact(&s, v_unload - 1), 0);
	CHECK_EQ(batch(&s, 0, 1 << 20, &upto, &more), 3);
	/* Acknowledged: the load/unload pair goes, the class stays. */
	CHECK_EQ(store_compact(&s, v_unload), 2);
	CHECK_EQ(batch(&s, 0, 1 << 20, &upto, &more), 1);
	CHECK_EQ(s.dead, 0);
	store_destroy(&s);
}

/* An unloaded class's records leave the log once jsampled has the unload;
 * its method handles are forgotten at once, other classes' stay. */
static void test_store_class_unload(void)
{
	struct agent_store s;
	uint64_t upto, v_unload;
	int more, is_new;
	uint8_t payload[16] = {0};
	const uint32_t gone[] = {1, 77 /* never registered */};
	struct pending_method *p;
	size_t n, left;

	CHECK(store_init(&s) == 0);
	store_lock(&s);
	CHECK_EQ(store_new_class_id_locked(&s), 1);
	CHECK_EQ(store_new_class_id_locked(&s), 2);
	store_append_locked(&s, JS_REC_CLASS, 1, 0, payload, sizeof(payload));
	CHECK_EQ(store_method_id_locked(&s, 0x1000, 1, &is_new), 1);
	store_append_locked(&s, JS_REC_METHOD_REF, 1, 0, payload, sizeof(payload));
	store_append_locked(&s, JS_REC_CLASS, 2, 0, payload, sizeof(payload));
	CHECK_EQ(store_method_id_locked(&s, 0x2000, 2, &is_new), 2);
	store_append_locked(&s, JS_REC_METHOD_REF, 2, 0, payload, sizeof(payload));
	/* First seen without its class (an inlining record), then with it. */
	CHECK_EQ(store_method_id_locked(&s, 0x3000, 0, &is_new), 3);
	CHECK_EQ(store_method_id_locked(&s, 0x3000, 1, &is_new), 3);
	CHECK(!is_new);
	store_append_locked(&s, JS_REC_METHOD, 1, 0, payload, sizeof(payload));
	CHECK_EQ(store_classes_unloaded_locked(&s, NULL, 0, 5), 0);
	v_unload = store_classes_unloaded_locked(&s, gone, 2, 1234);
	CHECK_EQ(v_unload, 6);
	CHECK(!store_has_method_locked(&s, 0x1000));
	CHECK(!store_has_method_locked(&s, 0x3000));
	CHECK(store_has_method_locked(&s, 0x2000));
	store_unlock(&s);
	store_take_pending(&s, 10, &p, &n, &left);
	CHECK_EQ(n, 1); /* class 2's method alone is still to resolve */
	CHECK_EQ(n ? p[0].method_id : 0, 2);
	free(p);
	CHECK_EQ(s.classes_unloaded, 2);

	/* Not yet acknowledged: everything is still there. */
	CHECK_EQ(store_compact(&s, v_unload - 1), 0);
	CHECK_EQ(batch(&s, 0, 1 << 20, &upto, &more), 6);
	/* Acknowledged: class 1's three records and the unload record go. */
	CHECK_EQ(store_compact(&s, v_unload), 4);
	CHECK_EQ(s.log.n, 2);
	CHECK_EQ(s.log.v[0].key, 2);
	CHECK_EQ(s.log.v[1].key, 2);
	CHECK_EQ(s.dead, 0);
	store_destroy(&s);
}

static size_t states(const uint8_t *code, uint32_t size, int32_t frame, int32_t ve, int32_t complete,
		     struct frame_state_range *out)
{
	struct frame_state_input in = {code, size, frame, ve, complete, -1};
	return frame_states_compute(&in, out, 32);
}

static void test_c1_prologue_and_epilogue(void)
{
	/* JDK 17 C1, frame 10 words: IC check, bang, push rbp, mov rbp,rsp,
	 * sub rsp,0x40 ... add rsp,0x40; pop rbp; cmp rsp,[r15+0x340]; ja; ret */
	uint8_t code[96] = {0};
	const uint8_t pro[] = {0x89, 0x84, 0x24, 0x00, 0xc0, 0xfe, 0xff, 0x55, 0x48, 0x8b, 0xec, 0x48, 0x83, 0xec, 0x40};
	const uint8_t epi[] = {0x48, 0x83, 0xc4, 0x40, 0x5d, 0x49, 0x3b, 0xa7, 0x40, 0x03, 0x00, 0x00,
			       0x0f, 0x87, 0x01, 0x00, 0x00, 0x00, 0xc3};
	struct frame_state_range r[32];

	memset(code, 0x90, sizeof(code));
	memcpy(code + 16, pro, sizeof(pro));
	memcpy(code + 60, epi, sizeof(epi));
	size_t n = states(code, sizeof(code), 10, 16, 40, r);
	CHECK_EQ(n, 4);
	CHECK(r[0].start == 0 && r[0].end == 16 + 8 && r[0].state == JS_FRAME_STATE_NO_FRAME);
	CHECK(r[1].start == 24 && r[1].end == 16 + 15 && r[1].state == JS_FRAME_STATE_RBP_PUSHED);
	CHECK(r[2].start == 64 && r[2].end == 65 && r[2].state == JS_FRAME_STATE_RBP_PUSHED);
	CHECK(r[3].start == 65 && r[3].end == 79 && r[3].state == JS_FRAME_STATE_NO_FRAME);

	/* The same bytes with a frame size that does not match the immediates:
	 * nothing is trusted (prologue unknown, no epilogue). */
	n = states(code, sizeof(code), 12, 16, 40, r);
	CHECK_EQ(n, 1);
	CHECK(r[0].state == JS_FRAME_STATE_UNKNOWN && r[0].end == 40);
}

static void test_c2_prologue_and_epilogue(void)
{
	/* JDK 25 C2, frame 4 words: sub rsp,0x18; mov [rsp+0x10],rbp; entry
	 * barrier ...; add rsp,0x10; pop rbp; cmp rsp,[r15+0x28]; ja; ret */
	const uint8_t code[] = {0x48, 0x81, 0xec, 0x18, 0x00, 0x00, 0x00, 0x48, 0x89, 0x6c, 0x24, 0x10,
				0x41, 0x81, 0x7f, 0x20, 0x01, 0x00, 0x00, 0x00, 0x0f, 0x85, 0x26, 0x00,
				0x00, 0x00, 0x48, 0x83, 0xc4, 0x10, 0x5d, 0x49, 0x3b, 0x67, 0x28, 0x0f,
				0x87, 0x01, 0x00, 0x00, 0x00, 0xc3};
	struct frame_state_range r[32];
	size_t n = states(code, sizeof(code), 4, 0, 26, r);

	CHECK_EQ(n, 4);
	CHECK(r[0].start == 0 && r[0].end == 7 && r[0].state == JS_FRAME_STATE_NO_FRAME);
	CHECK(r[1].start == 7 && r[1].end == 12 && r[1].state == JS_FRAME_STATE_RBP_UNSAVED);
	CHECK(r[2].start == 30 && r[2].end == 31 && r[2].state == JS_FRAME_STATE_RBP_PUSHED);
	CHECK(r[3].start == 31 && r[3].end == 42 && r[3].state == JS_FRAME_STATE_NO_FRAME);
}

static void test_jdk11_polling_page_epilogue(void)
{
	/* JDK 11 C2 (HashMap.merge, frame 16 words, bytes read from a running
	 * JDK 11.0.24): add rsp,0x70; pop rbp; mov r10,[r15+0x108];
	 * test eax,[r10]; ret. And the global page's poll: test eax,[rip+d32]. */
	const uint8_t code[] = {0x90, 0x90, 0x90, 0x90, 0x48, 0x83, 0xc4, 0x70, 0x5d, 0x4d, 0x8b, 0x97,
				0x08, 0x01, 0x00, 0x00, 0x41, 0x85, 0x02, 0xc3, 0x90, 0x90, 0x48, 0x83,
				0xc4, 0x70, 0x5d, 0x85, 0x05, 0x00, 0x10, 0x00, 0x00, 0xc3, 0x90, 0x48,
				0x83, 0xc4, 0x70, 0x5d, 0x4d, 0x8b, 0x97, 0x08, 0x01, 0x00, 0x00, 0x90};
	struct frame_state_range r[32];
	size_t n = states(code, sizeof(code), 16, 0, 4, r);

	CHECK_EQ(n, 5); /* the prologue, two epilogues; the last has no test and ret */
	CHECK(r[1].start == 8 && r[1].end == 9 && r[1].state == JS_FRAME_STATE_RBP_PUSHED);
	CHECK(r[2].start == 9 && r[2].end == 20 && r[2].state == JS_FRAME_STATE_NO_FRAME);
	CHECK(r[3].start == 26 && r[3].end == 27 && r[3].state == JS_FRAME_STATE_RBP_PUSHED);
	CHECK(r[4].start == 27 && r[4].end == 34 && r[4].state == JS_FRAME_STATE_NO_FRAME);
}

static void test_reserved_stack_check_epilogue(void)
{
	/* JDK 17 C2, a @ReservedStackAccess method (ReentrantReadWriteLock's
	 * ReadLock.unlock, frame 6 words; the bytes up to the slow path read
	 * from a running JDK 17): add rsp,0x20; pop rbp; cmp rsp,[r15+0x3b8];
	 * jb over the slow path (mov rdi,r15; test esp,0xf; je; sub rsp,8;
	 * call; add rsp,8; jmp); then the return poll and ret. */
	const uint8_t code[] = {0x90, 0x90, 0x90, 0x90, 0x48, 0x83, 0xc4, 0x20, 0x5d, 0x49, 0x3b, 0xa7, 0xb8, 0x03,
				0x00, 0x00, 0x0f, 0x82, 0x21, 0x00, 0x00, 0x00, 0x49, 0x8b, 0xff, 0xf7, 0xc4, 0x0f,
				0x00, 0x00, 0x00, 0x0f, 0x84, 0x12, 0x00, 0x00, 0x00, 0x48, 0x83, 0xec, 0x08, 0xe8,
				0x96, 0xbf, 0x3c, 0x14, 0x48, 0x83, 0xc4, 0x08, 0xe9, 0x05, 0x00, 0x00, 0x00, 0x49,
				0x3b, 0xa7, 0x40, 0x03, 0x00, 0x00, 0x0f, 0x87, 0x01, 0x00, 0x00, 0x00, 0xc3};
	struct frame_state_range r[32];
	size_t n = states(code, sizeof(code), 6, 0, 4, r);

	CHECK_EQ(n, 3);
	CHECK(r[1].start == 8 && r[1].end == 9 && r[1].state == JS_FRAME_STATE_RBP_PUSHED);
	CHECK(r[2].start == 9 && r[2].end == 69 && r[2].state == JS_FRAME_STATE_NO_FRAME);
}

static void test_c2_rethrow_tail_jump(void)
{
	/* C2 rethrow: the epilogue then "jmp rel32" to the rethrow stub, no
	 * return poll. A jmp after a pop whose add does not match is not one. */
	const uint8_t code[] = {0x48, 0x83, 0xec, 0x18, 0x48, 0x89, 0x6c, 0x24, 0x10, 0x90, 0x90, 0x90,
				0x48, 0x83, 0xc4, 0x10, 0x5d, 0xe9, 0x00, 0x10, 0x00, 0x00, 0x90, 0x90,
				0x48, 0x83, 0xc4, 0x20, 0x5d, 0xe9, 0x00, 0x10, 0x00, 0x00};
	struct frame_state_range r[32];
	size_t n = states(code, sizeof(code), 4, 0, 9, r);

	CHECK_EQ(n, 4);
	CHECK(r[2].start == 16 && r[2].end == 17 && r[2].state == JS_FRAME_STATE_RBP_PUSHED);
	CHECK(r[3].start == 17 && r[3].end == 22 && r[3].state == JS_FRAME_STATE_NO_FRAME);
}

static void test_fast_path_before_frame(void)
{
	/* A verified entry that returns without a frame before building one
	 * (intrinsic fast path), then bang + push rbp + sub. */
	const uint8_t code[] = {0x48, 0x8b, 0x06, 0xa8, 0x02, 0x0f, 0x85, 0x0d, 0x00, 0x00, 0x00, 0xc3,
				0x89, 0x84, 0x24, 0x00, 0xc0, 0xfe, 0xff, 0x55, 0x48, 0x8b, 0xec, 0x48,
				0x83, 0xec, 0x40, 0x90, 0x90, 0x90};
	struct frame_state_range r[32];
	size_t n = states(code, sizeof(code), 10, 0, 27, r);

	CHECK_EQ(n, 2);
	CHECK(r[0].start == 0 && r[0].end == 20 && r[0].state == JS_FRAME_STATE_NO_FRAME);
	CHECK(r[1].start == 20 && r[1].end == 27 && r[1].state == JS_FRAME_STATE_RBP_PUSHED);
}

static void test_native_wrapper_leave(void)
{
	/* push rbp; mov rbp,rsp; sub rsp,0x40 ... leave; ret */
	uint8_t code[64];
	struct frame_state_range r[32];

	memset(code, 0x90, sizeof(code));
	memcpy(code, (uint8_t[]){0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec, 0x40}, 8);
	code[40] = 0xc9;
	code[41] = 0xc3;
	size_t n = states(code, sizeof(code), 10, 0, 8, r);
	CHECK_EQ(n, 3);
	CHECK(r[2].start == 41 && r[2].end == 42 && r[2].state == JS_FRAME_STATE_NO_FRAME);
}

/* Every invoke instruction, past a padded tableswitch, a lookupswitch and
 * a wide iinc; truncated bytecode does not parse. */
static void test_bytecode_calls(void)
{
	static const uint8_t code[] = {
		0x2a,                         /* 0 aload_0 */
		0xb6, 0x00, 0x06,             /* 1 invokevirtual #6 */
		0x03,                         /* 4 iconst_0 */
		0xaa, 0, 0,                   /* 5 tableswitch, 2 bytes of padding */
		0, 0, 0, 30, 0, 0, 0, 0, 0, 0, 0, 1, /* default, low 0, high 1 */
		0, 0, 0, 30, 0, 0, 0, 30,     /* two offsets */
		0x03,                         /* 28 iconst_0 */
		0xab, 0, 0,                   /* 29 lookupswitch, 2 bytes of padding */
		0, 0, 0, 20, 0, 0, 0, 1,      /* default, one pair */
		0, 0, 0, 7, 0, 0, 0, 20,
		0xc4, 0x84, 0x00, 0x01, 0x00, 0x01, /* 48 wide iinc */
		0xb9, 0x00, 0x0d, 0x01, 0x00, /* 54 invokeinterface #13 */
		0xba, 0x00, 0x0e, 0x00, 0x00, /* 59 invokedynamic #14 */
		0xb8, 0x01, 0x02,             /* 64 invokestatic #258 */
		0xb1,                         /* 67 return */
	};
	struct bytecode_call calls[8];

	CHECK_EQ(bytecode_calls(code, sizeof(code), calls, 8), 4);
	CHECK_EQ(calls[0].bci, 1);
	CHECK_EQ(calls[0].opcode, OP_INVOKEVIRTUAL);
	CHECK_EQ(calls[0].cp_index, 6);
	CHECK_EQ(calls[1].bci, 54);
	CHECK_EQ(calls[1].opcode, OP_INVOKEINTERFACE);
	CHECK_EQ(calls[1].cp_index, 13);
	CHECK_EQ(calls[2].bci, 59);
	CHECK_EQ(calls[2].opcode, OP_INVOKEDYNAMIC);
	CHECK_EQ(calls[3].bci, 64);
	CHECK_EQ(calls[3].cp_index, 258);
	/* More calls than room: counted, not written past max. */
	CHECK_EQ(bytecode_calls(code, sizeof(code), calls, 1), 4);
	/* Cut inside the tableswitch, inside the last invoke. */
	CHECK_EQ(bytecode_calls(code, 20, calls, 8), -1);
	CHECK_EQ(bytecode_calls(code, sizeof(code) - 2, calls, 8), -1);
}

/* A constant pool as GetConstantPool gives it: a method ref names its
 * method by name and descriptor; MethodHandle's polymorphic methods, an
 * invokedynamic, a long's second slot and non-method entries name none. */
static size_t put_utf8(uint8_t *p, const char *s)
{
	size_t n = strlen(s);

	p[0] = 1;
	p[1] = (uint8_t)(n >> 8);
	p[2] = (uint8_t)n;
	memcpy(p + 3, s, n);
	return 3 + n;
}

static size_t put_ref(uint8_t *p, uint8_t tag, uint16_t a, uint16_t b)
{
	p[0] = tag;
	p[1] = (uint8_t)(a >> 8);
	p[2] = (uint8_t)a;
	p[3] = (uint8_t)(b >> 8);
	p[4] = (uint8_t)b;
	return tag == 7 ? 3 : 5;
}

static void test_constant_pool_targets(void)
{
	uint8_t b[256];
	size_t n = 0;
	struct constant_pool cp;
	uint32_t run = method_name_hash("run", 3, "()V", 3);

	n += put_utf8(b + n, "app/Foo");                       /* 1 */
	n += put_ref(b + n, 7, 1, 0);                           /* 2 Class app/Foo */
	n += put_utf8(b + n, "run");                            /* 3 */
	n += put_utf8(b + n, "()V");                            /* 4 */
	n += put_ref(b + n, 12, 3, 4);                          /* 5 NameAndType run ()V */
	n += put_ref(b + n, 10, 2, 5);                          /* 6 Methodref app/Foo.run()V */
	memcpy(b + n, "\x05\0\0\0\0\0\0\0\x2a", 9), n += 9;    /* 7, 8 Long 42 */
	n += put_utf8(b + n, "java/lang/invoke/MethodHandle");  /* 9 */
	n += put_ref(b + n, 7, 9, 0);                           /* 10 Class MethodHandle */
	n += put_ref(b + n, 12, 3, 4);                          /* 11 NameAndType run ()V */
	n += put_ref(b + n, 10, 10, 11);                        /* 12 Methodref MethodHandle.run */
	n += put_ref(b + n, 11, 2, 5);                          /* 13 InterfaceMethodref */
	n += put_ref(b + n, 18, 0, 5);                          /* 14 InvokeDynamic */
	n += put_ref(b + n, 9, 2, 5);                           /* 15 Fieldref */

	CHECK_EQ(constant_pool_parse(&cp, 16, b, n), 0);
	CHECK_EQ(constant_pool_call_target(&cp, 6, OP_INVOKEVIRTUAL), run);
	CHECK_EQ(constant_pool_call_target(&cp, 13, OP_INVOKEINTERFACE), run);
	CHECK_EQ(constant_pool_call_target(&cp, 12, OP_INVOKEVIRTUAL), 0);
	CHECK_EQ(constant_pool_call_target(&cp, 14, OP_INVOKEDYNAMIC), 0);
	CHECK_EQ(constant_pool_call_target(&cp, 15, OP_INVOKEVIRTUAL), 0);
	CHECK_EQ(constant_pool_call_target(&cp, 7, OP_INVOKESTATIC), 0);
	CHECK_EQ(constant_pool_call_target(&cp, 8, OP_INVOKESTATIC), 0);
	CHECK_EQ(constant_pool_call_target(&cp, 0, OP_INVOKESTATIC), 0);
	CHECK_EQ(constant_pool_call_target(&cp, 999, OP_INVOKESTATIC), 0);
	CHECK(method_name_hash("run", 3, "(I)V", 4) != run);
	constant_pool_free(&cp);

	/* More entries than bytes, an unknown tag, a cut UTF-8 entry. */
	CHECK_EQ(constant_pool_parse(&cp, 17, b, n), -1);
	b[0] = 2;
	CHECK_EQ(constant_pool_parse(&cp, 16, b, n), -1);
	b[0] = 1;
	CHECK_EQ(constant_pool_parse(&cp, 2, b, 5), -1);
	CHECK_EQ(constant_pool_parse(&cp, 0, b, n), -1);
}

/* JDK 11's CompiledMethodLoad reports the instructions without the stub
 * section that follows them (its exception and deopt handlers): the code
 * runs on to the blob's code end. JDK 17+ reports both. */
static void test_code_size_takes_the_stub_section(void)
{
	const uint64_t start = 0x7f9078bb3440, end = start + 0x540;

	CHECK_EQ(code_extent(start, 0x4c0, 0x4c0, start, end), 0x540);        /* JDK 11 */
	CHECK_EQ(code_extent(start, 0x540, 0x4c0, start, end), 0x540);        /* JDK 17+ */
	CHECK_EQ(code_extent(start, 0x4c0, 0x4c0, start + 0x40, end), 0x4c0); /* another blob's code */
	CHECK_EQ(code_extent(start, 0x4c0, -1, start, end), 0x4c0);           /* stubs unknown */
	CHECK_EQ(code_extent(start, 0x4c0, 0x400, start, end), 0x4c0);        /* not where the stubs begin */
	CHECK_EQ(code_extent(start, 0x4c0, 0x4c0, start, start + 0x4c0), 0x4c0); /* no stubs */
}

int main(void)
{
	RUN(test_store_versions_and_batches);
	RUN(test_store_compaction);
	RUN(test_store_class_unload);
	RUN(test_c1_prologue_and_epilogue);
	RUN(test_c2_prologue_and_epilogue);
	RUN(test_jdk11_polling_page_epilogue);
	RUN(test_reserved_stack_check_epilogue);
	RUN(test_c2_rethrow_tail_jump);
	RUN(test_fast_path_before_frame);
	RUN(test_native_wrapper_leave);
	RUN(test_bytecode_calls);
	RUN(test_constant_pool_targets);
	RUN(test_code_size_takes_the_stub_section);
	return CHECK_DONE();
}
