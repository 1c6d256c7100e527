/* SPDX-License-Identifier: GPL-2.0-only */
/* A process's allocation and lock trees from its agent's EVENTS records:
 * the weights that undo the sampling, the paths (oldest frame first, the
 * class last), pprof's two values, and records that are malformed or
 * out of bounds (refused, counted, never applied past the bad event). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/process/event_profiles.h"
#include "userspace/common/agent_protocol.h"
#include "userspace/profile/cct_format.h"
#include "userspace/profile/cct_view.h"
#include "check.h"
#include "model_builder.h"

static const struct event_caps caps = {.max_nodes = 1000, .max_bytes = 1u << 20};

static void header(struct wbuf *w, uint64_t alloc, uint64_t lock, uint32_t count)
{
	wbuf_u64(w, alloc);
	wbuf_u64(w, lock);
	wbuf_u64(w, 3); /* dropped by the rate cap */
	wbuf_u64(w, 2); /* for want of buffer */
	wbuf_u64(w, 1); /* without a stack */
	wbuf_u32(w, count);
}

static void event(struct wbuf *w, uint8_t kind, uint64_t value, uint32_t class_id, const uint32_t *ids, uint16_t depth)
{
	wbuf_u8(w, kind);
	wbuf_u8(w, 0);
	wbuf_u16(w, depth);
	wbuf_u32(w, 1234);
	wbuf_u64(w, 5000000000ull);
	wbuf_u64(w, value);
	wbuf_u32(w, class_id);
	for (uint16_t i = 0; i < depth; i++) {
		wbuf_u32(w, ids[i]);
		wbuf_i32(w, (int32_t)i);
	}
}

static uint64_t tree_total(const struct cct *c)
{
	uint64_t t = 0;
	for (size_t i = 0; c && i < c->nodes.n; i++)
		t += c->self.v[i];
	return t;
}

static void test_weights(void)
{
	uint64_t a, b;

	/* Every event: what it weighed, once. */
	event_weights(100, 0, &a, &b);
	CHECK_EQ(a, 100);
	CHECK_EQ(b, 1);
	/* An object of the interval's size is sampled with p = 1 - 1/e. */
	event_weights(524288, 524288, &a, &b);
	CHECK_EQ(a, (uint64_t)llround(524288 / (1 - exp(-1.0))));
	CHECK_EQ(b, 2);
	/* A small one stands for about interval / size objects of its size. */
	event_weights(16, 524288, &a, &b);
	CHECK(a >= 524288 && a <= 524288 + 16);
	CHECK(b >= 32768 && b <= 32769);
	/* Nothing weighs nothing (and no division by zero). */
	event_weights(0, 524288, &a, &b);
	CHECK_EQ(a, 0);
}

static void test_class_names(void)
{
	char out[128];

	event_class_name("[B", out, sizeof(out));
	CHECK_STR(out, "byte[]");
	event_class_name("[[J", out, sizeof(out));
	CHECK_STR(out, "long[][]");
	event_class_name("[Ljava.lang.String;", out, sizeof(out));
	CHECK_STR(out, "java.lang.String[]");
	event_class_name("java.util.HashMap$Node", out, sizeof(out));
	CHECK_STR(out, "java.util.HashMap$Node");
	event_class_name("[", out, sizeof(out));
	CHECK_STR(out, "[]");
	event_class_name("[Q", out, 4);
	CHECK(strlen(out) < 4);
}

static void test_paths_and_pprof(void)
{
	struct jvm_model m;
	struct event_profiles e = {0};
	struct name_refs names;
	struct wbuf w, out;
	const uint32_t stack[] = {11, 12, 13}; /* leaf first: 11 allocates, called by 12, called by 13 */

	jvm_model_init(&m);
	name_refs_init(&names);
	CHECK_EQ(tb_apply_class(&m, 5, "[I", ""), 0);
	CHECK_EQ(tb_apply_class(&m, 6, "LApp;", "App.java"), 0);
	for (uint32_t id = 11; id <= 13; id++)
		CHECK_EQ(tb_apply_method(&m, id, 6, 0x1000 * id, 0x2000 * id, 10, id == 11 ? "alloc" : "caller"), 0);
	wbuf_init(&w);
	header(&w, 0, 1000, 3);
	event(&w, JS_EVENT_ALLOC, 4096, 5, stack, 3);
	event(&w, JS_EVENT_ALLOC, 4096, 5, stack, 3);
	event(&w, JS_EVENT_MONITOR, 5000, 6, stack, 2);
	CHECK_EQ(event_profiles_apply(&e, &caps, &m.methods, &names, 0, w.data, w.len), 0);
	CHECK_EQ(e.alloc_events, 2);
	CHECK_EQ(e.monitor_events, 1);
	CHECK_EQ(e.agent_dropped, 6);
	CHECK_EQ(tree_total(e.tree[EVENT_ALLOC_BYTES]), 8192);
	CHECK_EQ(tree_total(e.tree[EVENT_ALLOC_OBJECTS]), 2);
	CHECK_EQ(tree_total(e.tree[EVENT_LOCK_COUNT]), 1);
	CHECK(tree_total(e.tree[EVENT_LOCK_DELAY]) > 5000); /* 5 us sampled at 1 us: p < 1 */

	/* The path: oldest frame first, the class last. */
	const struct cct *c = e.tree[EVENT_ALLOC_BYTES];
	wbuf_init(&out);
	CHECK_EQ(cct_render_stream(&(struct profile_source){.cct = c, .methods = &m.methods, .view = VIEW_WALL},
				   CCT_FORMAT_COLLAPSED, &out, -1), 0);
	wbuf_u8(&out, 0);
	CHECK(strstr((char *)out.data, "App.caller;App.caller;App.alloc;int[] 8192") != NULL);
	if (!strstr((char *)out.data, "App.caller;App.caller;App.alloc;int[] 8192"))
		fprintf(stderr, "  collapsed: %s\n", (char *)out.data);

	/* pprof: both values on the one sample, named as Go's heap profile. */
	wbuf_reset(&out);
	CHECK_EQ(cct_render_stream(&(struct profile_source){.cct = c, .cct2 = e.tree[EVENT_ALLOC_OBJECTS],
							      .methods = &m.methods, .view = VIEW_WALL,
							      .values = VALUES_ALLOC, .interval = 524288,
							      .profile_type = "alloc"},
				   CCT_FORMAT_PPROF, &out, -1), 0);
	CHECK(out.len > 20 && out.data[0] == 0x1f && out.data[1] == 0x8b);
	wbuf_free(&out);

	/* Malformed: an unknown kind, a method id of 0, a record cut short,
	 * a depth past the limit. Refused and counted; what came before the
	 * bad event stays. */
	uint64_t before = tree_total(e.tree[EVENT_ALLOC_BYTES]);
	const uint32_t bad_ids[] = {11, 0};
	struct {
		uint8_t kind;
		const uint32_t *ids;
		uint16_t depth;
		size_t cut;
	} bad[] = {
		{.kind = 9, .ids = stack, .depth = 3},
		{.kind = JS_EVENT_ALLOC, .ids = bad_ids, .depth = 2},
		{.kind = JS_EVENT_ALLOC, .ids = stack, .depth = 3, .cut = 5},
		{.kind = JS_EVENT_ALLOC, .ids = stack, .depth = 0},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		wbuf_reset(&w);
		header(&w, 524288, 0, 2);
		event(&w, JS_EVENT_ALLOC, 100, 5, stack, 3); /* good, applied */
		event(&w, bad[i].kind, 100, 5, bad[i].ids, bad[i].depth);
		CHECK_EQ(event_profiles_apply(&e, &caps, &m.methods, &names, 0, w.data, w.len - bad[i].cut), -1);
	}
	CHECK_EQ(e.malformed, 4);
	CHECK(tree_total(e.tree[EVENT_ALLOC_BYTES]) > before);
	/* A depth over JS_MAX_EVENT_DEPTH, whatever follows. */
	wbuf_reset(&w);
	header(&w, 524288, 0, 1);
	wbuf_u8(&w, JS_EVENT_ALLOC);
	wbuf_u8(&w, 0);
	wbuf_u16(&w, JS_MAX_EVENT_DEPTH + 1);
	CHECK_EQ(event_profiles_apply(&e, &caps, &m.methods, &names, 0, w.data, w.len), -1);
	/* A count that promises more than the record holds. */
	wbuf_reset(&w);
	header(&w, 524288, 0, 1000000);
	CHECK_EQ(event_profiles_apply(&e, &caps, &m.methods, &names, 0, w.data, w.len), -1);
	CHECK_EQ(e.malformed, 6);
	CHECK(event_profiles_bytes(&e) > 0);

	wbuf_free(&w);
	event_profiles_free(&e);
	CHECK(e.tree[0] == NULL);
	name_refs_release(&names);
	jvm_model_free(&m);
}

int main(void)
{
	RUN(test_weights);
	RUN(test_class_names);
	RUN(test_paths_and_pprof);
	return CHECK_DONE();
}
