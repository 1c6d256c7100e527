/* SPDX-License-Identifier: GPL-2.0-only */
/* Builds agent records (agent_protocol.h) the way the agent serializes
 * them, to feed jsampled's parsers and decoder with synthetic JVMs. */
#ifndef JSAMPLED_TEST_MODEL_BUILDER_H
#define JSAMPLED_TEST_MODEL_BUILDER_H

#include <stdint.h>

#include "daemon/decode/jvm_model.h"
#include "userspace/common/agent_protocol.h"
#include "userspace/common/wire.h"

struct test_scope {
	uint32_t pc_offset;
	uint8_t depth;
	uint32_t methods[4]; /* innermost first */
	int32_t bcis[4];
};

struct test_state {
	uint32_t start, end;
	uint8_t state;
};

struct test_code {
	uint64_t id;
	uint8_t kind;
	uint64_t start;
	uint32_t size;
	uint64_t load_ns;
	int32_t frame_size;
	int32_t frame_complete;
	int32_t stub_offset;
	int32_t orig_pc_offset;
	uint32_t method_id;
	const char *name;
	const struct test_scope *scopes;
	uint32_t nscopes;
	const struct test_state *states;
	uint32_t nstates;
};

static inline void tb_code_load(struct wbuf *w, const struct test_code *c)
{
	wbuf_u64(w, c->id);
	wbuf_u8(w, c->kind);
	wbuf_u8(w, 0);
	wbuf_u16(w, 0);
	wbuf_u64(w, c->start);
	wbuf_u32(w, c->size);
	wbuf_u64(w, c->load_ns);
	wbuf_u64(w, 0);
	wbuf_i32(w, c->frame_size);
	wbuf_i32(w, c->frame_complete);
	wbuf_i32(w, -1);
	wbuf_i32(w, c->stub_offset ? c->stub_offset : -1);
	wbuf_i32(w, c->orig_pc_offset ? c->orig_pc_offset : -1);
	wbuf_i32(w, -1);
	wbuf_i32(w, 4);
	wbuf_u32(w, c->method_id);
	wbuf_str(w, c->name ? c->name : "");
	wbuf_u32(w, c->nscopes);
	for (uint32_t i = 0; i < c->nscopes; i++) {
		wbuf_u32(w, c->scopes[i].pc_offset);
		wbuf_u8(w, c->scopes[i].depth);
		for (int d = 0; d < c->scopes[i].depth; d++) {
			wbuf_u32(w, c->scopes[i].methods[d]);
			wbuf_i32(w, c->scopes[i].bcis[d]);
		}
	}
	wbuf_u32(w, c->nstates);
	for (uint32_t i = 0; i < c->nstates; i++) {
		wbuf_u32(w, c->states[i].start);
		wbuf_u32(w, c->states[i].end);
		wbuf_u8(w, c->states[i].state);
	}
}

static inline int tb_apply_code(struct jvm_model *m, const struct test_code *c)
{
	struct wbuf w;
	int r;

	wbuf_init(&w);
	tb_code_load(&w, c);
	r = jvm_model_apply_record(m, JS_REC_CODE_LOAD, w.data, w.len);
	wbuf_free(&w);
	return r;
}

static inline int tb_apply_unload(struct jvm_model *m, uint64_t id, uint64_t when)
{
	struct wbuf w;
	int r;

	wbuf_init(&w);
	wbuf_u64(&w, id);
	wbuf_u64(&w, when);
	r = jvm_model_apply_record(m, JS_REC_CODE_UNLOAD, w.data, w.len);
	wbuf_free(&w);
	return r;
}

static inline int tb_apply_class(struct jvm_model *m, uint32_t id, const char *sig, const char *src)
{
	struct wbuf w;
	int r;

	wbuf_init(&w);
	wbuf_u32(&w, id);
	wbuf_str(&w, sig);
	wbuf_str(&w, src);
	r = jvm_model_apply_record(m, JS_REC_CLASS, w.data, w.len);
	wbuf_free(&w);
	return r;
}

static inline int tb_apply_method(struct jvm_model *m, uint32_t id, uint32_t class_id, uint64_t method_ptr,
				  uint64_t const_method, uint32_t code_size, const char *name)
{
	struct wbuf w;
	int r;

	wbuf_init(&w);
	wbuf_u32(&w, id);
	wbuf_u32(&w, class_id);
	wbuf_u64(&w, method_ptr);
	wbuf_u64(&w, const_method);
	wbuf_u32(&w, code_size);
	wbuf_u32(&w, 0);
	wbuf_str(&w, name);
	wbuf_str(&w, "()V");
	wbuf_u32(&w, 2);
	wbuf_u32(&w, 0);
	wbuf_u32(&w, 10);
	wbuf_u32(&w, 5);
	wbuf_u32(&w, 11);
	wbuf_i32(&w, -1); /* call sites unknown */
	r = jvm_model_apply_record(m, JS_REC_METHOD, w.data, w.len);
	wbuf_free(&w);
	return r;
}

static inline int tb_apply_class_unload(struct jvm_model *m, uint64_t when, const uint32_t *ids, uint32_t n)
{
	struct wbuf w;
	int r;

	wbuf_init(&w);
	wbuf_u64(&w, when);
	wbuf_u32(&w, n);
	for (uint32_t i = 0; i < n; i++)
		wbuf_u32(&w, ids[i]);
	r = jvm_model_apply_record(m, JS_REC_CLASS_UNLOAD, w.data, w.len);
	wbuf_free(&w);
	return r;
}

/* The JDK 17 x86-64 layout the agent reports (frame_x86.hpp). */
static inline int tb_apply_layout(struct jvm_model *m, uint64_t call_stub_return, uint64_t code_low,
				  uint64_t code_high)
{
	static const struct {
		const char *name;
		int64_t v;
	} facts[] = {
		{JS_LAYOUT_JAVA_VERSION_MAJOR, 17},
		{JS_LAYOUT_INTERP_SENDER_SP_OFFSET, -1},
		{JS_LAYOUT_INTERP_LAST_SP_OFFSET, -2},
		{JS_LAYOUT_INTERP_METHOD_OFFSET, -3},
		{JS_LAYOUT_INTERP_LOCALS_OFFSET, -7},
		{JS_LAYOUT_INTERP_BCP_OFFSET, -8},
		{JS_LAYOUT_ENTRY_CALL_WRAPPER_OFFSET, -6},
		{JS_LAYOUT_CALL_WRAPPER_ANCHOR, 32},
		{JS_LAYOUT_ANCHOR_SP, 0},
		{JS_LAYOUT_ANCHOR_PC, 8},
		{JS_LAYOUT_ANCHOR_FP, 16},
		{JS_LAYOUT_CONST_METHOD_SIZE, 48},
	};
	struct wbuf w;
	int r;

	wbuf_init(&w);
	wbuf_u16(&w, sizeof(facts) / sizeof(facts[0]) + 3);
	for (size_t i = 0; i < sizeof(facts) / sizeof(facts[0]); i++) {
		wbuf_str(&w, facts[i].name);
		wbuf_i64(&w, facts[i].v);
	}
	wbuf_str(&w, JS_LAYOUT_CALL_STUB_RETURN);
	wbuf_i64(&w, (int64_t)call_stub_return);
	wbuf_str(&w, JS_LAYOUT_CODE_CACHE_LOW);
	wbuf_i64(&w, (int64_t)code_low);
	wbuf_str(&w, JS_LAYOUT_CODE_CACHE_HIGH);
	wbuf_i64(&w, (int64_t)code_high);
	r = jvm_model_apply_record(m, JS_REC_VM_LAYOUT, w.data, w.len);
	wbuf_free(&w);
	return r;
}

#endif
