/* SPDX-License-Identifier: GPL-2.0-only */
/* The decoder on synthetic JVMs and hand-built stack fragments: every frame
 * kind, partial frames, entry frames with and without older Java frames,
 * deoptimized frames, time-versioned code, the failure reasons, and walks
 * joining the thread's previous walk. */
#include <stdlib.h>

#include "daemon/decode/decoder.h"
#include "daemon/decode/stack_bottoms.h"
#include "daemon/decode/stack_fragment.h"
#include "daemon/decode/thread_roles.h"
#include "check.h"
#include "model_builder.h"

#define SB 0x7ffe0000ull /* the sampled sp */
#define STACK_BYTES 4096

#define CALL_STUB 0x10000000ull
#define CALL_STUB_RET (CALL_STUB + 0x80)
#define INTERP 0x10001000ull
#define A 0x10010000ull /* nmethod of Main.run (method 1), helper (2) inlined */
#define BB 0x10020000ull /* nmethod of Main.hot (3), leaf (4) inlined */
#define STUB 0x10030000ull /* a runtime stub with an 8-word frame, no frame-complete offset */
#define UPCALL 0x10040000ull /* an FFM upcall stub (JDK 22+): native code calls Java through it */
#define METHOD5 0x7000ull /* Method* of the interpreted Main.main (5) */
#define CONST5 0x8000ull

static uint8_t stack[STACK_BYTES];

static void put(uint64_t addr, uint64_t v)
{
	memcpy(stack + (addr - SB), &v, 8);
}

static struct js_sample *sample(uint64_t ip, uint64_t bp, uint32_t len, uint64_t t, const char *comm)
{
	struct js_sample *s = calloc(1, sizeof(*s) + len);

	s->time_ns = t;
	s->pid = 1;
	s->tid = 2;
	s->regs[JS_REG_IP] = ip;
	s->regs[JS_REG_SP] = SB;
	s->stack_addr = SB;
	s->regs[JS_REG_BP] = bp;
	s->stack_len = len;
	s->stack_end = len == STACK_BYTES ? SB + STACK_BYTES : 0;
	s->flags = len == STACK_BYTES ? 0 : JS_SAMPLE_STACK_CAPPED;
	snprintf(s->comm, sizeof(s->comm), "%s", comm);
	memcpy(s->stack, stack, len);
	return s;
}

static struct jvm_model model;

static void build_model(void)
{
	static const struct test_scope a_scopes[] = {
		{0x100, 1, {1}, {5}},
		{0x200, 2, {2, 1}, {3, 7}},
	};
	static const struct test_state a_states[] = {
		{0x0, 0x11, JS_FRAME_STATE_NO_FRAME},
		{0x11, 0x18, JS_FRAME_STATE_RBP_PUSHED},
		{0x300, 0x301, JS_FRAME_STATE_RBP_PUSHED},
		{0x301, 0x310, JS_FRAME_STATE_NO_FRAME},
	};
	static const struct test_scope b_scopes[] = {
		{0x80, 1, {3}, {2}},
		{0x150, 2, {4, 3}, {9, 12}},
	};
	const struct test_code codes[] = {
		{.id = 1, .kind = JS_CODE_CALL_STUB, .start = CALL_STUB, .size = 0x100, .frame_size = 0,
		 .frame_complete = -1, .name = "call_stub"},
		{.id = 2, .kind = JS_CODE_INTERPRETER, .start = INTERP, .size = 0x4000, .frame_size = 0,
		 .frame_complete = -1, .name = "Interpreter"},
		{.id = 3, .kind = JS_CODE_NMETHOD, .start = A, .size = 0x400, .frame_size = 6,
		 .frame_complete = 0x20, .stub_offset = 0x380, .orig_pc_offset = 16, .method_id = 1,
		 .scopes = a_scopes, .nscopes = 2, .states = a_states, .nstates = 4},
		{.id = 4, .kind = JS_CODE_NMETHOD, .start = BB, .size = 0x300, .frame_size = 4,
		 .frame_complete = 0x10, .method_id = 3, .scopes = b_scopes, .nscopes = 2, .load_ns = 0},
		{.id = 5, .kind = JS_CODE_STUB, .start = STUB, .size = 0x100, .frame_size = 8,
		 .frame_complete = -1, .name = "counter_overflow Runtime1 stub"},
		{.id = 6, .kind = JS_CODE_STUB, .start = UPCALL, .size = 0x100, .frame_size = 0,
		 .frame_complete = -1, .name = "upcall_stub_(Ljava/lang/Object;)V"},
	};

	jvm_model_init(&model);
	CHECK(tb_apply_layout(&model, CALL_STUB_RET, 0x10000000, 0x20000000) == 0);
	CHECK(model.layout.valid);
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		CHECK(tb_apply_code(&model, &codes[i]) == 0);
	CHECK(tb_apply_class(&model, 1, "Lcom/example/Main;", "Main.java") == 0);
	CHECK(tb_apply_method(&model, 1, 1, 0x7100, 0x8100, 50, "run") == 0);
	CHECK(tb_apply_method(&model, 2, 1, 0x7200, 0x8200, 50, "helper") == 0);
	CHECK(tb_apply_method(&model, 3, 1, 0x7300, 0x8300, 50, "hot") == 0);
	CHECK(tb_apply_method(&model, 4, 1, 0x7400, 0x8400, 50, "leaf") == 0);
	CHECK(tb_apply_method(&model, 5, 1, METHOD5, CONST5, 100, "main") == 0);
}

/* Interpreted Main.main at fp SB+160 called from the call stub, whose entry
 * frame (fp SB+400) has a JavaCallWrapper at SB+600 with an empty anchor. */
static void build_interpreted_and_entry(void)
{
	uint64_t fi = SB + 160, fe = SB + 400, wrapper = SB + 600;

	put(fi - 3 * 8, METHOD5);
	put(fi - 8 * 8, CONST5 + 48 + 17); /* bcp: bci 17 */
	put(fi - 1 * 8, SB + 176);         /* sender sp */
	put(fi, fe);                       /* saved rbp */
	put(fi + 8, CALL_STUB_RET);
	put(fe - 6 * 8, wrapper);
	put(wrapper + 32 + 0, 0); /* anchor: last_Java_sp = 0: bottom of the Java stack */
}

static void expect(const struct trace *t, const uint32_t *ids, const uint8_t *types, const int32_t *bcis,
		   uint32_t n)
{
	CHECK_EQ(t->n, n);
	for (uint32_t i = 0; i < n && i < t->n; i++) {
		CHECK_EQ(t->frames[i].method_id, ids[i]);
		if (types)
			CHECK_EQ(t->frames[i].type, types[i]);
		if (bcis)
			CHECK_EQ((uint64_t)(int64_t)t->frames[i].bci, (uint64_t)(int64_t)bcis[i]);
	}
}

static struct trace tr;
static struct decode_scratch scratch;

/* Decodes s into tr (memo: its thread's previous walk, or NULL), frees s. */
static enum decode_status run_memo(struct js_sample *s, bool final, int *reason, struct walk_memo *memo)
{
	struct decode_ctx ctx = {.layout = &model.layout, .code = &model.code, .methods = &model.methods,
				 .scratch = &scratch, .final = final, .memo = memo};
	enum decode_status st = decode_sample(&ctx, s, &tr, reason);
	free(s);
	return st;
}

static enum decode_status run(struct js_sample *s, bool final, int *reason)
{
	return run_memo(s, final, reason, NULL);
}

/* B's frame (4 words at SB) returning into A's call site 0x100, A's frame
 * (6 words at SB+32) returning into the interpreted Main.main; no rbp saved
 * in B's frame. */
static void build_b_over_a(void)
{
	memset(stack, 0, sizeof(stack));
	build_interpreted_and_entry();
	put(SB + 24, A + 0x100);
	put(SB + 32 + 40, INTERP + 0x500);
	put(SB + 32 + 32, SB + 160);
}

/* The same, with an rbp saved in B's frame. */
static void build_compiled_over_interpreted(void)
{
	build_b_over_a();
	put(SB + 16, 0x1111);
}

static void test_compiled_compiled_interpreted_entry(void)
{
	int reason;

	build_compiled_over_interpreted();
	CHECK_EQ(run(sample(BB + 0x140, 0x2222, STACK_BYTES, 100, "main"), false, &reason), DECODE_RESOLVED);
	CHECK(tr.complete);
	expect(&tr, (uint32_t[]){5, 1, 3, 4},
	       (uint8_t[]){FRAME_INTERPRETED, FRAME_COMPILED, FRAME_COMPILED, FRAME_INLINED},
	       (int32_t[]){17, 5, 12, 9}, 4);
}

static void test_prologue_states(void)
{
	int reason;

	memset(stack, 0, sizeof(stack));
	build_interpreted_and_entry();
	/* Before push rbp: return address at [sp], rbp is still the caller's. */
	put(SB, INTERP + 0x500);
	CHECK_EQ(run(sample(A + 0x5, SB + 160, STACK_BYTES, 100, "main"), false, &reason), DECODE_RESOLVED);
	expect(&tr, (uint32_t[]){5, 1}, (uint8_t[]){FRAME_INTERPRETED, FRAME_COMPILED}, NULL, 2);

	/* After push rbp: saved rbp at [sp], return address at [sp+8]. */
	memset(stack, 0, sizeof(stack));
	build_interpreted_and_entry();
	put(SB, SB + 160);
	put(SB + 8, INTERP + 0x500);
	CHECK_EQ(run(sample(A + 0x12, 0xdead, STACK_BYTES, 100, "main"), false, &reason), DECODE_RESOLVED);
	expect(&tr, (uint32_t[]){5, 1}, (uint8_t[]){FRAME_INTERPRETED, FRAME_COMPILED}, NULL, 2);

	/* Epilogue after pop rbp. */
	memset(stack, 0, sizeof(stack));
	build_interpreted_and_entry();
	put(SB, INTERP + 0x500);
	CHECK_EQ(run(sample(A + 0x305, SB + 160, STACK_BYTES, 100, "main"), false, &reason), DECODE_RESOLVED);
	expect(&tr, (uint32_t[]){5, 1}, (uint8_t[]){FRAME_INTERPRETED, FRAME_COMPILED}, NULL, 2);
}

static void test_incomplete(void)
{
	int reason;
	enum decode_status st;

	build_b_over_a();
	/* Only 200 bytes copied: the interpreted frame's caller is beyond. */
	st = run(sample(BB + 0x140, 0, 200, 100, "main"), false, &reason);
	CHECK_EQ(st, DECODE_INCOMPLETE);
	CHECK(!tr.complete);
	expect(&tr, (uint32_t[]){5, 1, 3, 4}, NULL, NULL, 4);
}

static void test_jni_alternation(void)
{
	int reason;
	uint64_t fe = SB + 400, wrapper = SB + 600, older = SB + 1000, fe2 = SB + 1200, w2 = SB + 1400;

	build_b_over_a();
	/* The entry frame's anchor points at an older compiled frame of A that
	 * called native code at its call site 0x200 (helper inlined). */
	put(wrapper + 32 + 0, older);
	put(wrapper + 32 + 16, 0x3333);
	put(wrapper + 32 + 8, A + 0x200);
	put(older + 40, CALL_STUB_RET);
	put(older + 32, fe2);
	put(fe2 - 6 * 8, w2);
	put(w2 + 32, 0);
	(void)fe;
	CHECK_EQ(run(sample(BB + 0x140, 0, STACK_BYTES, 100, "main"), false, &reason), DECODE_RESOLVED);
	expect(&tr, (uint32_t[]){1, 2, 5, 1, 3, 4},
	       (uint8_t[]){FRAME_COMPILED, FRAME_INLINED, FRAME_INTERPRETED, FRAME_COMPILED, FRAME_COMPILED,
			   FRAME_INLINED},
	       (int32_t[]){7, 3, 17, 5, 12, 9}, 6);
}

static void test_deoptimized_caller(void)
{
	int reason;

	memset(stack, 0, sizeof(stack));
	build_interpreted_and_entry();
	/* B returns into A's deopt handler (stub section); A saved the real pc
	 * at its sp + orig_pc_offset. */
	put(SB + 24, A + 0x390);
	put(SB + 32 + 16, A + 0x100);
	put(SB + 32 + 40, INTERP + 0x500);
	put(SB + 32 + 32, SB + 160);
	CHECK_EQ(run(sample(BB + 0x140, 0, STACK_BYTES, 100, "main"), false, &reason), DECODE_RESOLVED);
	expect(&tr, (uint32_t[]){5, 1, 3, 4}, NULL, (int32_t[]){17, 5, 12, 9}, 4);
}

/* A's frame (6 words) at sp a, called from the interpreted main. */
static void put_a_frame(uint64_t a)
{
	put(a + 40, INTERP + 0x500);
	put(a + 32, SB + 160);
}

static void test_shifted_frame(void)
{
	int reason;

	/* An intrinsic in B pushed two words: B's frame starts at SB+16. */
	memset(stack, 0, sizeof(stack));
	build_interpreted_and_entry();
	put(SB + 24, 0x5555);
	put(SB + 16 + 24, A + 0x100);
	put_a_frame(SB + 48);
	CHECK_EQ(run(sample(BB + 0x140, 0, STACK_BYTES, 100, "main"), false, &reason), DECODE_RESOLVED);
	CHECK_EQ(tr.top_rule, DECODE_RULE_SHIFTED_FRAME);
	expect(&tr, (uint32_t[]){5, 1, 3, 4}, NULL, (int32_t[]){17, 5, 12, 9}, 4);

	/* A second shift that validates into another trace: a guess, so the
	 * sample fails. */
	put(SB + 48 + 24, A + 0x200);
	put_a_frame(SB + 80);
	CHECK_EQ(run(sample(BB + 0x140, 0, STACK_BYTES, 100, "main"), false, &reason), DECODE_FAILED);
}

static void test_rbp_framed_stub(void)
{
	int reason;

	/* A Runtime1 stub saving registers: rbp = sp + 6 words frames it, and
	 * a stale call site of B lower down must not win. */
	memset(stack, 0, sizeof(stack));
	build_interpreted_and_entry();
	put(SB + 8, BB + 0x80);
	put(SB + 48, SB + 160);
	put(SB + 56, A + 0x100);
	put_a_frame(SB + 64);
	CHECK_EQ(run(sample(STUB + 0x20, SB + 48, STACK_BYTES, 100, "main"), false, &reason), DECODE_RESOLVED);
	CHECK_EQ(tr.top_rule, DECODE_RULE_STUB_FRAME);
	expect(&tr, (uint32_t[]){5, 1}, NULL, NULL, 2);
	CHECK_EQ(tr.frames[1].bci, 5);
}

static void test_anchor_without_pc_at_sp(void)
{
	int reason;
	struct js_sample *s;

	/* A C2 runtime stub back from its VM call: the anchor holds sp only,
	 * and sp is the interrupted sp. */
	memset(stack, 0, sizeof(stack));
	build_interpreted_and_entry();
	put(SB + 48, 0x4444);
	put(SB + 56, A + 0x100);
	put_a_frame(SB + 64);
	s = sample(STUB + 0x40, 0x4444, STACK_BYTES, 100, "main");
	s->flags |= JS_SAMPLE_HAS_ANCHOR;
	s->anchor_sp = SB;
	CHECK_EQ(run(s, false, &reason), DECODE_RESOLVED);
	expect(&tr, (uint32_t[]){5, 1}, NULL, NULL, 2);
	CHECK_EQ(tr.frames[1].bci, 5);
}

/* The role of a thread name as the kernel gives it: 16 bytes (each in a
 * buffer of exactly that size: ASan sees any read past it), a NUL within
 * them except for a name of 16 characters or more. */
static int role_of_name(const char *name, size_t len)
{
	char *comm = calloc(1, 16);
	int role;

	memcpy(comm, name, len < 16 ? len : 16);
	role = thread_role_of(comm);
	free(comm);
	return role;
}

static void test_thread_roles(void)
{
	static const struct {
		const char *name;
		size_t len;
		int role;
	} names[] = {
		{"GC Thread#3", 11, PSEUDO_GC},
		{"G1 Refine#0", 11, PSEUDO_GC},
		{"Shenandoah Con", 14, PSEUDO_GC},
		{"C1 CompilerThre", 15, PSEUDO_JIT},
		{"VM Thread", 9, PSEUDO_VM},
		{"jsampled-agent", 14, PSEUDO_AGENT},
		{"C2 CompilerThread0", 18, PSEUDO_JIT}, /* as long as comm holds, without its NUL */
		{"main", 4, 0},
		{"", 0, 0},
		{"GC", 2, 0},            /* shorter than a prefix it begins: "GC" is not "GC " */
		{"GC\0Thread#0", 11, 0}, /* bytes past the name's end do not count */
		{"VM Threads pool", 15, PSEUDO_VM}, /* a Java thread named with a prefix of the JVM's */
		{"vm thread", 9, 0},
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		CHECK_EQ(role_of_name(names[i].name, names[i].len), names[i].role);
}

static void test_failures(void)
{
	int reason;

	memset(stack, 0, sizeof(stack));
	/* A pc in the code cache that no blob covers: wait, then fail. */
	CHECK_EQ(run(sample(0x10050000, 0, STACK_BYTES, 100, "main"), false, &reason), DECODE_RETRY);
	CHECK_EQ(run(sample(0x10050000, 0, STACK_BYTES, 100, "main"), true, &reason), DECODE_FAILED);
	CHECK_EQ(reason, DECODE_FAIL_UNKNOWN_CODE);

	/* Native code on a Java thread without a frame anchor: a broken rbp
	 * chain and no return address into Java in a partial copy is a
	 * failure; in a copy of the whole stack it means there is no Java
	 * frame, as does an rbp chain that ends at once (rbp 0, as clone()
	 * leaves it). And on a GC thread. */
	CHECK_EQ(run(sample(0x400000, 0x1234, STACK_BYTES / 2, 100, "main"), true, &reason), DECODE_FAILED);
	CHECK_EQ(reason, DECODE_FAIL_TOP_IN_NATIVE);
	CHECK_EQ(run(sample(0x400000, 0x1234, STACK_BYTES, 100, "main"), true, &reason), DECODE_NOT_JAVA);
	CHECK_EQ(tr.frames[0].method_id, PSEUDO_NATIVE);
	CHECK_EQ(run(sample(0x400000, 0, STACK_BYTES, 100, "main"), true, &reason), DECODE_NOT_JAVA);
	CHECK_EQ(tr.frames[0].method_id, PSEUDO_NATIVE);
	/* A whole copy with an untouched page copied as zeros (a hole) is
	 * still whole; one that an unreadable page ended is not. */
	struct js_sample *holed = sample(0x400000, 0x1234, STACK_BYTES, 100, "main");
	holed->flags |= JS_SAMPLE_STACK_FAULT | JS_SAMPLE_STACK_HOLE;
	CHECK_EQ(run(holed, true, &reason), DECODE_NOT_JAVA);
	CHECK_EQ(tr.frames[0].method_id, PSEUDO_NATIVE);
	/* A word into the code cache is no Java frame (the VM's start-up
	 * leaves stub addresses in its frames); the call stub's return
	 * address, where every thread's first Java frame returns, is. */
	put(SB + 40, CALL_STUB + 0x10);
	CHECK_EQ(run(sample(0x400000, 0x1234, STACK_BYTES, 100, "main"), true, &reason), DECODE_NOT_JAVA);
	put(SB + 48, CALL_STUB_RET);
	CHECK_EQ(run(sample(0x400000, 0x1234, STACK_BYTES, 100, "main"), true, &reason), DECODE_FAILED);
	CHECK_EQ(reason, DECODE_FAIL_TOP_IN_NATIVE);
	put(SB + 48, 0); /* nor does a return into an FFM upcall stub */
	put(SB + 56, UPCALL + 0x40);
	CHECK_EQ(run(sample(0x400000, 0x1234, STACK_BYTES, 100, "main"), true, &reason), DECODE_FAILED);
	CHECK_EQ(reason, DECODE_FAIL_TOP_IN_NATIVE);
	memset(stack, 0, sizeof(stack));
	struct js_sample *faulted = sample(0x400000, 0x1234, STACK_BYTES, 100, "main");
	faulted->flags |= JS_SAMPLE_STACK_FAULT;
	CHECK_EQ(run(faulted, true, &reason), DECODE_FAILED);
	CHECK_EQ(reason, DECODE_FAIL_TOP_IN_NATIVE);
	CHECK_EQ(run(sample(0x400000, 0, STACK_BYTES, 100, "GC Thread#0"), true, &reason), DECODE_NOT_JAVA);
	CHECK_EQ(tr.n, 1);
	CHECK_EQ(tr.frames[0].method_id, PSEUDO_GC);
	CHECK_EQ(run(sample(0x400000, 0, STACK_BYTES, 100, "C2 CompilerThre"), true, &reason),
		 DECODE_NOT_JAVA);
	CHECK_EQ(tr.frames[0].method_id, PSEUDO_JIT);

	/* A return address into nowhere. */
	put(SB + 24, 0x400000);
	CHECK_EQ(run(sample(BB + 0x140, 0, STACK_BYTES, 100, "main"), true, &reason), DECODE_FAILED);
	CHECK_EQ(reason, DECODE_FAIL_BAD_RETURN_ADDRESS);

	/* A return address into compiled code that is not a call site. */
	put(SB + 24, A + 0x104);
	CHECK_EQ(run(sample(BB + 0x140, 0, STACK_BYTES, 100, "main"), true, &reason), DECODE_FAILED);
	CHECK_EQ(reason, DECODE_FAIL_NOT_A_CALL_SITE);

	/* An interpreted frame whose Method* nobody reported. */
	memset(stack, 0, sizeof(stack));
	put(SB + 160 - 24, 0x9999);
	CHECK_EQ(run(sample(INTERP + 0x10, SB + 160, STACK_BYTES, 100, "main"), false, &reason), DECODE_RETRY);
	CHECK_EQ(run(sample(INTERP + 0x10, SB + 160, STACK_BYTES, 100, "main"), true, &reason), DECODE_FAILED);
	CHECK_EQ(reason, DECODE_FAIL_INTERP_BAD_METHOD);

	/* A frame pointer below sp. */
	CHECK_EQ(run(sample(INTERP + 0x10, SB - 64, STACK_BYTES, 100, "main"), true, &reason), DECODE_FAILED);
	CHECK_EQ(reason, DECODE_FAIL_BAD_FRAME_POINTER);

	/* An empty copy. */
	CHECK_EQ(run(sample(BB + 0x140, 0, 0, 100, "main"), true, &reason), DECODE_FAILED);
	CHECK_EQ(reason, DECODE_FAIL_EMPTY_STACK);
}

/* Code replaced at the same address: a sample decodes against what was live
 * at its timestamp. */
static void test_time_versioned_code(void)
{
	static const struct test_scope c_scopes[] = {{0x150, 1, {5}, {1}}};
	const struct test_code c = {.id = 9, .kind = JS_CODE_NMETHOD, .start = BB, .size = 0x300,
				    .frame_size = 4, .frame_complete = 0x10, .method_id = 5,
				    .scopes = c_scopes, .nscopes = 1, .load_ns = 2000};
	int reason;

	CHECK(tb_apply_unload(&model, 4, 1000) == 0);
	CHECK(tb_apply_code(&model, &c) == 0);
	build_b_over_a();
	CHECK_EQ(run(sample(BB + 0x140, 0, STACK_BYTES, 500, "main"), false, &reason), DECODE_RESOLVED);
	CHECK_EQ(tr.frames[tr.n - 1].method_id, 4); /* the old code: leaf inlined into hot */
	CHECK_EQ(run(sample(BB + 0x140, 0, STACK_BYTES, 3000, "main"), false, &reason), DECODE_RESOLVED);
	CHECK_EQ(tr.frames[tr.n - 1].method_id, 5); /* the new code */
	CHECK_EQ(codemap_prune(&model.code, 1500), 1);
}

static struct trace bottom;

static struct decode_ctx image_ctx(void)
{
	return (struct decode_ctx){.layout = &model.layout, .code = &model.code, .methods = &model.methods,
				   .scratch = &scratch, .final = true};
}

/* Decodes s and gives it to the thread's stack image (freeing s); traces
 * that waited go to sink. */
static enum bottom_outcome take_to(struct stack_bottoms *b, struct js_sample *s, enum decode_status *st,
				   const struct bottom_sink *sink)
{
	struct decode_ctx ctx = image_ctx();
	int reason;
	enum bottom_outcome o;

	*st = decode_sample(&ctx, s, &tr, &reason);
	o = stack_bottoms_take(b, &ctx, s, *st, &tr, &bottom, sink);
	free(s);
	return o;
}

static enum bottom_outcome take(struct stack_bottoms *b, struct js_sample *s, enum decode_status *st)
{
	return take_to(b, s, st, NULL);
}

/* A copy that ends mid-stack borrows the rest from the thread's image of
 * an earlier, deeper-copied sample; not when the words where it ends
 * differ, when the thread was seen above what the image vouches for, or
 * when the sample is older than the image. */
static void test_stack_image_completion(void)
{
	struct stack_bottoms b;
	struct js_sample *s;
	enum decode_status st;
	const uint32_t ids[] = {5, 1, 3, 4};
	const int32_t bcis[] = {17, 5, 12, 9};

	stack_bottoms_init(&b, 1 << 20);
	build_b_over_a();
	/* No image yet: incomplete. */
	CHECK_EQ(take(&b, sample(BB + 0x140, 0, 300, 100, "main"), &st), BOTTOM_NO_IMAGE);
	CHECK_EQ(st, DECODE_INCOMPLETE);
	/* A whole copy of a stack as deep as the copy limit starts the image. */
	s = sample(BB + 0x140, 0, STACK_BYTES, 300, "main");
	s->flags |= JS_SAMPLE_STACK_CAPPED;
	CHECK_EQ(take(&b, s, &st), BOTTOM_NONE); /* decoded or not, its words count */
	CHECK(b.bytes > STACK_BYTES); /* the words, and the image's own size */
	size_t words_at = b.bytes;
	/* The cut copy is completed: the same trace as the whole one. */
	s = sample(BB + 0x140, 0, 300, 300, "main");
	s->stack_end = SB + STACK_BYTES;
	CHECK_EQ(take(&b, s, &st), BOTTOM_COMPLETED);
	CHECK(tr.complete && tr.from_image);
	expect(&tr, ids, NULL, bcis, 4);
	/* Older than the image: neither completed nor learnt from. */
	s = sample(BB + 0x140, 0, 300, 250, "main");
	s->stack_end = SB + STACK_BYTES;
	CHECK_EQ(take(&b, s, &st), BOTTOM_NO_IMAGE);
	/* The words where the copy ends changed: no completion, and the image
	 * is dropped. */
	put(SB + 192, 0x5555);
	s = sample(BB + 0x140, 0, 300, 400, "main");
	s->stack_end = SB + STACK_BYTES;
	CHECK_EQ(take(&b, s, &st), BOTTOM_MISMATCH);
	CHECK(!tr.complete);
	CHECK(b.bytes == words_at - STACK_BYTES); /* the words went */
	s = sample(BB + 0x140, 0, 300, 500, "main");
	s->stack_end = SB + STACK_BYTES;
	CHECK_EQ(take(&b, s, &st), BOTTOM_NO_IMAGE);

	/* A thread seen above the top of its image's words since (its sp at
	 * the entry frame): a later cut copy cannot reach what the image
	 * still vouches for. */
	put(SB + 192, 0);
	s = sample(BB + 0x140, 0, STACK_BYTES, 600, "main");
	s->flags |= JS_SAMPLE_STACK_CAPPED;
	CHECK_EQ(take(&b, s, &st), BOTTOM_NONE);
	s = sample(INTERP + 0x40, SB + 160, STACK_BYTES, 700, "main");
	s->stack_addr = s->regs[JS_REG_SP] = SB + 152;
	memmove(s->stack, s->stack + 152, STACK_BYTES - 152);
	s->stack_len = STACK_BYTES - 152;
	CHECK_EQ(take(&b, s, &st), BOTTOM_NONE); /* decoded or not, its words count */
	s = sample(BB + 0x140, 0, 300, 800, "main");
	s->stack_end = SB + STACK_BYTES;
	CHECK_EQ(take(&b, s, &st), BOTTOM_NO_IMAGE);
	CHECK(!tr.complete);

	/* Limits: an image larger than the process's budget is refused. */
	stack_bottoms_free(&b);
	stack_bottoms_init(&b, 1024);
	s = sample(BB + 0x140, 0, STACK_BYTES, 900, "main");
	s->flags |= JS_SAMPLE_STACK_CAPPED;
	CHECK_EQ(take(&b, s, &st), BOTTOM_NONE);
	CHECK(b.refused == 1 && b.bytes == 0);
	stack_bottoms_free(&b);
}

/* A deep sample about to be held for code takes its thread's image's
 * words below its fragment along, when the image vouches for them, and is
 * then decoded whole, however late; not when the words where it ends
 * differ, when it is no deep sample, or when the whole would be too long. */
static void test_stack_image_held(void)
{
	struct stack_bottoms b;
	struct js_sample *s, *buf = NULL;
	const struct js_sample *whole;
	size_t buf_size = 0;
	enum decode_status st;
	struct decode_ctx ctx = image_ctx();
	const uint32_t ids[] = {5, 1, 3, 4};
	const int32_t bcis[] = {17, 5, 12, 9};
	int reason;

	stack_bottoms_init(&b, 1 << 20);
	build_b_over_a();
	s = sample(BB + 0x140, 0, STACK_BYTES, 300, "main");
	s->flags |= JS_SAMPLE_STACK_CAPPED;
	CHECK_EQ(take(&b, s, &st), BOTTOM_NONE); /* starts the image */
	s = sample(BB + 0x140, 0, 300, 350, "main");
	s->stack_end = SB + STACK_BYTES;
	s->flags |= JS_SAMPLE_STACK_CAPPED;
	whole = stack_bottoms_extend(&b, s, 1 << 16, &buf, &buf_size);
	CHECK(whole != s && whole == buf);
	CHECK_EQ(whole->stack_len, STACK_BYTES);
	CHECK_EQ(whole->time_ns, 350);
	CHECK(memcmp(whole->stack, stack, STACK_BYTES) == 0);
	CHECK_EQ(b.extended, 1);
	/* A newer sample changes the image; the held one still decodes whole. */
	CHECK_EQ(take(&b, sample(BB + 0x140, 0, STACK_BYTES, 400, "main"), &st), BOTTOM_NONE);
	CHECK_EQ(decode_sample(&ctx, whole, &tr, &reason), DECODE_RESOLVED);
	expect(&tr, ids, NULL, bcis, 4);
	/* Too long for the queue, or no deep sample: as it is. */
	CHECK(stack_bottoms_extend(&b, s, 256, &buf, &buf_size) == s);
	s->flags &= ~JS_SAMPLE_STACK_CAPPED;
	CHECK(stack_bottoms_extend(&b, s, 1 << 16, &buf, &buf_size) == s);
	s->flags |= JS_SAMPLE_STACK_CAPPED;
	/* The words where it ends are not the image's. */
	s->stack[299] ^= 1;
	CHECK(stack_bottoms_extend(&b, s, 1 << 16, &buf, &buf_size) == s);
	CHECK_EQ(b.extended, 1);
	free(s);
	free(buf);
	stack_bottoms_free(&b);
}

/* A thread's image goes after STACK_BOTTOM_IDLE_SAMPLES samples in a row
 * whose copies reached its bottom (a capped one starts the count again), so
 * such samples stop being copied into it; when the thread runs deep again,
 * its next whole copy starts a new one. */
static void test_stack_image_idles(void)
{
	struct stack_bottoms b;
	struct js_sample *s;
	enum decode_status st;
	uint64_t t = 100;

	stack_bottoms_init(&b, 1 << 20);
	build_b_over_a();
	s = sample(BB + 0x140, 0, STACK_BYTES, t++, "main");
	s->flags |= JS_SAMPLE_STACK_CAPPED;
	CHECK_EQ(take(&b, s, &st), BOTTOM_NONE);
	CHECK(b.bytes > STACK_BYTES);
	for (uint32_t i = 1; i < STACK_BOTTOM_IDLE_SAMPLES; i++) {
		CHECK_EQ(take(&b, sample(BB + 0x140, 0, STACK_BYTES, t++, "main"), &st), BOTTOM_NONE);
		if (i == STACK_BOTTOM_IDLE_SAMPLES / 2) { /* a capped copy: the count starts again */
			s = sample(BB + 0x140, 0, STACK_BYTES, t++, "main");
			s->flags |= JS_SAMPLE_STACK_CAPPED;
			CHECK_EQ(take(&b, s, &st), BOTTOM_NONE);
		}
	}
	CHECK_EQ(b.idled, 0);
	CHECK(b.bytes > STACK_BYTES);
	for (uint32_t i = 0; i <= STACK_BOTTOM_IDLE_SAMPLES / 2; i++)
		CHECK_EQ(take(&b, sample(BB + 0x140, 0, STACK_BYTES, t++, "main"), &st), BOTTOM_NONE);
	CHECK_EQ(b.idled, 1);
	CHECK_EQ(b.bytes, 0);
	/* Deep again: a cut copy finds no image, the next whole copy starts
	 * one, and the cut copy after it is completed from it. */
	s = sample(BB + 0x140, 0, 300, t++, "main");
	s->stack_end = SB + STACK_BYTES;
	CHECK_EQ(take(&b, s, &st), BOTTOM_NO_IMAGE);
	CHECK_EQ(take(&b, sample(BB + 0x140, 0, STACK_BYTES, t++, "main"), &st), BOTTOM_NONE);
	CHECK(b.bytes > STACK_BYTES);
	s = sample(BB + 0x140, 0, 300, t++, "main");
	s->stack_end = SB + STACK_BYTES;
	CHECK_EQ(take(&b, s, &st), BOTTOM_COMPLETED);
	CHECK(tr.complete && tr.from_image);
	stack_bottoms_free(&b);
}

/* A walk on over a longer copy (a stack image) joins the thread's previous
 * complete walk where the words it reads there are the same, and takes the
 * frames the walk would have found. Here it goes on from A's frame: its
 * first step (nothing pushed above it yet) is walked, main's is joined. */
static void test_walk_on_joins(void)
{
	struct walk_reuse reuse;
	struct decode_ctx ctx = image_ctx();
	const struct walk_resume at_a = {.pc = A + 0x100, .sp = SB + 32, .fp = 0x1111};
	struct js_sample *s;
	int reason;

	walk_reuse_init(&reuse, WALK_REUSE_PROCESS_BYTES);
	ctx.memo = walk_reuse_of(&reuse, 2);
	CHECK(ctx.memo != NULL);
	build_compiled_over_interpreted();
	s = sample(BB + 0x140, 0x2222, STACK_BYTES, 100, "main");
	CHECK_EQ(decode_sample(&ctx, s, &tr, &reason), DECODE_RESOLVED);
	free(s);
	s = sample(BB + 0x140, 0x2222, STACK_BYTES, 200, "main");
	for (int with_memo = 1; with_memo >= 0; with_memo--) {
		struct decode_ctx c = ctx;

		if (!with_memo)
			c.memo = NULL;
		CHECK_EQ(decode_from_caller(&c, s, &at_a, &bottom), DECODE_RESOLVED);
		expect(&bottom, (uint32_t[]){5, 1}, NULL, (int32_t[]){17, 5}, 2);
		CHECK_EQ(bottom.joined, with_memo ? 1u : 0u);
	}
	/* Where main's words differ, nothing is joined. */
	put(SB + 160 - 8 * 8, CONST5 + 48 + 18);
	free(s);
	s = sample(BB + 0x140, 0x2222, STACK_BYTES, 300, "main");
	CHECK_EQ(decode_from_caller(&ctx, s, &at_a, &bottom), DECODE_RESOLVED);
	expect(&bottom, (uint32_t[]){5, 1}, NULL, (int32_t[]){18, 5}, 2);
	CHECK_EQ(bottom.joined, 0u);
	free(s);
	walk_reuse_free(&reuse);
}

/* What a sink was last given. */
static struct {
	int n;
	enum bottom_outcome how;
	struct trace tr;
} settled;

static void on_settle(void *ctx, const struct js_sample *s, enum bottom_outcome how, struct trace *t)
{
	(void)ctx;
	CHECK_EQ(s->stack_len, 0u);
	settled.n++;
	settled.how = how;
	settled.tr = *t;
}

/* A gap-filling window [lo, hi) of the stack, copied at time t (freed). */
static bool fill(struct stack_bottoms *b, uint64_t lo, uint64_t hi, uint64_t t, uint32_t flags,
		 const struct bottom_sink *sink)
{
	struct js_sample *s = calloc(1, sizeof(*s) + (hi - lo));
	struct decode_ctx ctx = image_ctx();
	bool ok;

	s->time_ns = t;
	s->pid = 1;
	s->tid = 2;
	s->regs[JS_REG_IP] = BB + 0x140;
	s->regs[JS_REG_SP] = SB;
	s->stack_addr = lo;
	s->stack_len = (uint32_t)(hi - lo);
	s->stack_end = SB + STACK_BYTES;
	s->flags = JS_SAMPLE_FILL | JS_SAMPLE_STACK_CAPPED | flags;
	memcpy(s->stack, stack + (lo - SB), hi - lo);
	ok = stack_bottoms_fill(b, &ctx, s, &bottom, sink);
	free(s);
	return ok;
}

/* A cut trace with nothing yet to complete it from waits for a later
 * sample: completed when a later copy shows the rest while the thread was
 * not seen above where the cut copy ended; settled incomplete once it was,
 * or when no more samples come. Gap-filling windows of one tick start an
 * image of their own and complete the sample that follows them. */
static void test_stack_image_waits(void)
{
	const struct bottom_sink sink = {.settle = on_settle};
	const uint32_t ids[] = {5, 1, 3, 4};
	const int32_t bcis[] = {17, 5, 12, 9};
	struct stack_bottoms b;
	struct js_sample *s;
	enum decode_status st;

	stack_bottoms_init(&b, 1 << 20);
	memset(&settled, 0, sizeof(settled));
	build_b_over_a();
	s = sample(BB + 0x140, 0, 300, 100, "main");
	s->stack_end = SB + STACK_BYTES;
	CHECK_EQ(take_to(&b, s, &st, &sink), BOTTOM_DEFERRED);
	CHECK(b.pending == 1 && settled.n == 0);
	s = sample(BB + 0x140, 0, STACK_BYTES, 200, "main");
	s->flags |= JS_SAMPLE_STACK_CAPPED;
	CHECK_EQ(take_to(&b, s, &st, &sink), BOTTOM_NONE);
	CHECK(settled.n == 1 && settled.how == BOTTOM_COMPLETED && b.pending == 0);
	CHECK(settled.tr.complete && settled.tr.from_image);
	expect(&settled.tr, ids, NULL, bcis, 4);

	/* Seen shallower (sp at the entry frame) since: the frames the cut
	 * copy ended in have returned. */
	s = sample(INTERP + 0x40, SB + 160, STACK_BYTES, 300, "main");
	s->stack_addr = s->regs[JS_REG_SP] = SB + 152;
	memmove(s->stack, s->stack + 152, STACK_BYTES - 152);
	s->stack_len = STACK_BYTES - 152;
	take_to(&b, s, &st, &sink);
	s = sample(BB + 0x140, 0, 300, 400, "main");
	s->stack_end = SB + STACK_BYTES;
	CHECK_EQ(take_to(&b, s, &st, &sink), BOTTOM_DEFERRED);
	s = sample(INTERP + 0x40, SB + 160, STACK_BYTES, 500, "main");
	s->stack_addr = s->regs[JS_REG_SP] = SB + 152;
	memmove(s->stack, s->stack + 152, STACK_BYTES - 152);
	s->stack_len = STACK_BYTES - 152;
	take_to(&b, s, &st, &sink);
	CHECK(settled.n == 2 && settled.how == BOTTOM_NO_IMAGE && !settled.tr.complete && b.pending == 0);
	CHECK(settled.tr.n > 0 && !settled.tr.from_image);

	/* No more samples: what waits is settled as it is. */
	s = sample(BB + 0x140, 0, 300, 600, "main");
	s->stack_end = SB + STACK_BYTES;
	CHECK_EQ(take_to(&b, s, &st, &sink), BOTTOM_DEFERRED);
	stack_bottoms_flush(&b, &sink);
	CHECK(settled.n == 3 && settled.how == BOTTOM_NO_IMAGE && b.pending == 0);

	/* Windows of one tick: the top one is an image of its own, the next
	 * joins it (one of another tick does not), and the sample completes. */
	CHECK(fill(&b, SB + 200, SB + STACK_BYTES, 700, JS_SAMPLE_FILL_TOP, &sink));
	CHECK(!fill(&b, SB + 20, SB + 200 + 256, 650, 0, &sink));
	CHECK(fill(&b, SB + 20, SB + 200 + 256, 700, 0, &sink));
	s = sample(BB + 0x140, 0, 300, 700, "main");
	s->stack_end = SB + STACK_BYTES;
	CHECK_EQ(take_to(&b, s, &st, &sink), BOTTOM_COMPLETED);
	expect(&tr, ids, NULL, bcis, 4);
	/* A window that does not reach the one above it is refused. */
	CHECK(fill(&b, SB + 200, SB + STACK_BYTES, 800, JS_SAMPLE_FILL_TOP, &sink));
	CHECK(!fill(&b, SB + 20, SB + 180, 800, 0, &sink));
	stack_bottoms_free(&b);
}

/* A thread's next walk takes the rest of its previous one from the first
 * step in the same state where the words that walk read from there on are
 * the same (or, where a word deeper down differs, the run of steps down to
 * it): words it did not read (a spill slot of a compiled frame, the
 * rbp a compiled frame saved for a compiled caller, which is no frame
 * pointer) may have changed, and so may the bci of the frame above; a word
 * it read (an interpreted frame's bcp) may not. */
static void test_walk_joins_over_unread_words(void)
{
	struct walk_reuse reuse;
	struct walk_memo *memo;
	int reason;

	walk_reuse_init(&reuse, WALK_REUSE_PROCESS_BYTES);
	build_compiled_over_interpreted();
	put(SB + 40, 0xaaaa); /* in A's frame, read by no walk */
	memo = walk_reuse_of(&reuse, 2);
	CHECK(memo != NULL);
	CHECK_EQ(run_memo(sample(BB + 0x140, 0x2222, STACK_BYTES, 100, "main"), false, &reason, memo), DECODE_RESOLVED);
	CHECK_EQ(tr.joined, 0u);
	expect(&tr, (uint32_t[]){5, 1, 3, 4}, NULL, (int32_t[]){17, 5, 12, 9}, 4);

	/* Elsewhere in B, other values in the unread words: A's step on is
	 * the previous walk's (main and run). */
	put(SB + 16, 0x3333);
	put(SB + 40, 0xbbbb);
	CHECK_EQ(run_memo(sample(BB + 0x60, 0x2222, STACK_BYTES, 200, "main"), false, &reason, memo), DECODE_RESOLVED);
	CHECK_EQ(tr.joined, 2u);
	expect(&tr, (uint32_t[]){5, 1, 3}, NULL, (int32_t[]){17, 5, 2}, 3);

	/* main has moved on to bci 18: no join to the root any more, and the
	 * steps that read main's frame are walked again; the step above them
	 * read what it read before, so its frame is taken all the same (a
	 * recursion that came back through another call site deep down). */
	put(SB + 160 - 8 * 8, CONST5 + 48 + 18);
	CHECK_EQ(run_memo(sample(BB + 0x140, 0x2222, STACK_BYTES, 300, "main"), false, &reason, memo), DECODE_RESOLVED);
	CHECK_EQ(tr.joined, 1u);
	expect(&tr, (uint32_t[]){5, 1, 3, 4}, NULL, (int32_t[]){18, 5, 12, 9}, 4);
	walk_reuse_free(&reuse);
}

/* Fragment reads are bounded whatever addresses a lying sample holds: a
 * copy claimed at address 0 read near 2^64 (the sum wrapped, and the read
 * landed 8 bytes before the copy), or past a stack end near 2^64. */
static void test_fragment_reads_cannot_wrap(void)
{
	struct js_sample *s = calloc(1, sizeof(*s) + 64);
	uint64_t v = 0;

	s->stack_addr = 0;
	s->stack_len = 64;
	CHECK(frag_read_u64(s, 0xfffffffffffffff8ull, &v) != FRAG_OK);
	CHECK(frag_read_u64(s, 56, &v) == FRAG_OK);
	CHECK(frag_read_u64(s, 64, &v) == FRAG_BEYOND);
	s->stack_addr = 0xffffffffffffff00ull;
	s->stack_end = 0xfffffffffffffff8ull;
	CHECK(frag_read_u64(s, 0xfffffffffffffff8ull, &v) == FRAG_INVALID);
	CHECK(frag_read_u64(s, 0xfffffffffffffff0ull, &v) == FRAG_BEYOND);
	free(s);
}

int main(void)
{
	build_model();
	RUN(test_compiled_compiled_interpreted_entry);
	RUN(test_prologue_states);
	RUN(test_incomplete);
	RUN(test_stack_image_completion);
	RUN(test_stack_image_held);
	RUN(test_stack_image_idles);
	RUN(test_walk_on_joins);
	RUN(test_stack_image_waits);
	RUN(test_fragment_reads_cannot_wrap);
	RUN(test_walk_joins_over_unread_words);
	RUN(test_jni_alternation);
	RUN(test_deoptimized_caller);
	RUN(test_shifted_frame);
	RUN(test_rbp_framed_stub);
	RUN(test_anchor_without_pc_at_sp);
	RUN(test_thread_roles);
	RUN(test_failures);
	RUN(test_time_versioned_code);
	jvm_model_free(&model);
	return CHECK_DONE();
}
