/* The agent's JVM-free parts: the versioned record store (fetch since N,
 * batching, compaction) and the prologue/epilogue recogniser on real
 * HotSpot instruction sequences (captured from JDK 17 and 25 on x86-64). */
#include <stdlib.h>

#include "../../userspace/agent/agent_store.h"
#include "../../userspace/agent/frame_states.h"
#include "../../userspace/common/agent_protocol.h"
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

int main(void)
{
	RUN(test_store_versions_and_batches);
	RUN(test_store_compaction);
	RUN(test_c1_prologue_and_epilogue);
	RUN(test_c2_prologue_and_epilogue);
	RUN(test_c2_rethrow_tail_jump);
	RUN(test_fast_path_before_frame);
	RUN(test_native_wrapper_leave);
	return CHECK_DONE();
}
