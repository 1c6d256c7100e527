/* SPDX-License-Identifier: GPL-2.0-only */
/* The calling-context tree and its three renderings. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "userspace/profile/cct.h"
#include "userspace/profile/cct_format.h"
#include "userspace/profile/cct_view.h"
#include "userspace/profile/kernel_symbols.h"
#include "userspace/profile/thread_pools.h"
#include "check.h"
#include "model_builder.h"

static struct trace_frame F(uint32_t id, uint8_t type)
{
	return (struct trace_frame){.method_id = id, .type = type, .bci = -1};
}

static void test_merge_and_render(void)
{
	struct cct c;
	struct jvm_model m;
	struct wbuf out;
	struct trace_frame a[] = {F(1, FRAME_INTERPRETED), F(2, FRAME_COMPILED), F(3, FRAME_INLINED)};
	struct trace_frame b[] = {F(1, FRAME_INTERPRETED), F(2, FRAME_COMPILED)};
	struct trace_frame g[] = {F(PSEUDO_GC, FRAME_PSEUDO)};

	jvm_model_init(&m);
	CHECK(tb_apply_class(&m, 1, "Lapp/Main;", "Main.java") == 0);
	CHECK(tb_apply_method(&m, 1, 1, 0, 0, 0, "main") == 0);
	CHECK(tb_apply_method(&m, 2, 1, 0, 0, 0, "work") == 0);
	CHECK(tb_apply_method(&m, 3, 1, 0, 0, 0, "leaf") == 0);
	CHECK(cct_init(&c, 100) == 0);
	CHECK(cct_add(&c, a, 3, 5) == 0);
	CHECK(cct_add(&c, b, 2, 2) == 0);
	CHECK(cct_add(&c, a, 3, 1) == 0);
	CHECK(cct_add(&c, g, 1, 4) == 0);
	CHECK_EQ(c.samples, 12);
	CHECK_EQ(c.nodes.n, 5); /* root, main, work, leaf, [GC] */

	wbuf_init(&out);
	CHECK(cct_render(&c, &m.methods, CCT_FORMAT_COLLAPSED, &out) == 0);
	wbuf_u8(&out, 0);
	CHECK(strstr((char *)out.data, "app.Main.main_[0];app.Main.work_[j];app.Main.leaf_[i] 6\n") != NULL);
	CHECK(strstr((char *)out.data, "app.Main.main_[0];app.Main.work_[j] 2\n") != NULL);
	CHECK(strstr((char *)out.data, "[GC] 4\n") != NULL);

	wbuf_reset(&out);
	CHECK(cct_render(&c, &m.methods, CCT_FORMAT_TREE, &out) == 0);
	wbuf_u8(&out, 0);
	/* Totals: main 8 (66.67%), heaviest child first. */
	CHECK(strstr((char *)out.data, "         8  66.67%          0    app.Main.main_[0]") != NULL);
	char *main_at = strstr((char *)out.data, "app.Main.main_[0]");
	char *gc_at = strstr((char *)out.data, "[GC]");
	CHECK(main_at && gc_at && main_at < gc_at);

	wbuf_reset(&out);
	CHECK(cct_render(&c, &m.methods, CCT_FORMAT_JSON, &out) == 0);
	wbuf_u8(&out, 0);
	CHECK(strstr((char *)out.data, "\"samples\":12") != NULL);
	CHECK(strstr((char *)out.data, "{\"name\":\"app.Main.leaf\",\"type\":\"inlined\",\"self\":6,\"total\":6,\"children\":[]}") != NULL);
	int depth = 0, min = 0;
	for (char *p = (char *)out.data; *p; p++) {
		depth += (*p == '{' || *p == '[') - (*p == '}' || *p == ']');
		if (depth < min)
			min = depth;
	}
	CHECK_EQ(depth, 0);
	CHECK_EQ(min, 0);
	wbuf_free(&out);
	cct_free(&c);
	jvm_model_free(&m);
}

static void test_node_cap(void)
{
	struct cct c;
	struct trace_frame path[20];

	CHECK(cct_init(&c, 10) == 0);
	for (uint32_t i = 0; i < 20; i++)
		path[i] = F(i + 1, FRAME_COMPILED);
	CHECK(cct_add(&c, path, 20, 1) == 0);
	CHECK(c.nodes.n <= 11);
	CHECK_EQ(c.overflow_samples, 1);
	CHECK(cct_add(&c, path, 20, 1) == 0); /* lands in the same [other] node */
	CHECK(c.nodes.n <= 11);
	CHECK_EQ(c.samples, 2);
	CHECK_EQ(c.nodes.v[c.nodes.n - 1].method_id, PSEUDO_OVERFLOW);
	CHECK_EQ(c.self.v[c.nodes.n - 1], 2);
	cct_free(&c);
}

/* A node keeps a bci in 24 bits: the largest a bytecode has (65,535) and
 * the negative ones stay, one past the bits (only a lying agent's) is kept
 * as unknown, so the same trace still finds the same node. */
static void test_bci_bits(void)
{
	struct cct c;
	const int32_t kept[] = {-1, 0, 65535, (1 << 23) - 1, -(1 << 23)};
	struct trace_frame path[2] = {F(1, FRAME_COMPILED), F(2, FRAME_COMPILED)};

	CHECK(cct_init(&c, 100) == 0);
	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
		path[1].bci = kept[i];
		CHECK(cct_add(&c, path, 2, 1) == 0);
		CHECK_EQ(c.nodes.v[c.nodes.n - 1].bci, kept[i]);
	}
	uint32_t n = (uint32_t)c.nodes.n;
	path[1].bci = 1 << 23;
	CHECK(cct_add(&c, path, 2, 1) == 0);
	CHECK_EQ(c.nodes.n, n); /* the node of bci -1 */
	path[1].bci = INT32_MIN;
	CHECK(cct_add(&c, path, 2, 1) == 0);
	CHECK_EQ(c.nodes.n, n);
	CHECK_EQ(c.self.v[2], 3);
	CHECK_EQ(c.samples, 7);
	cct_free(&c);
}

static void test_names_are_safe_for_collapsed(void)
{
	struct cct c;
	struct jvm_model m;
	struct wbuf out;
	struct trace_frame a[] = {F(1, FRAME_COMPILED)};

	jvm_model_init(&m);
	CHECK(tb_apply_class(&m, 1, "Lweird;name with space;", "") == 0);
	CHECK(tb_apply_method(&m, 1, 1, 0, 0, 0, "m") == 0);
	CHECK(cct_init(&c, 100) == 0);
	CHECK(cct_add(&c, a, 1, 3) == 0);
	wbuf_init(&out);
	CHECK(cct_render(&c, &m.methods, CCT_FORMAT_COLLAPSED, &out) == 0);
	wbuf_u8(&out, 0);
	/* One frame, then one space and the count. */
	char *line = (char *)out.data;
	CHECK(strchr(line, ';') == NULL);
	CHECK(strchr(line, ' ') == strrchr(line, ' '));
	CHECK(strstr(line, " 3\n") != NULL);
	wbuf_free(&out);
	cct_free(&c);
	jvm_model_free(&m);
}

/* Whichever way a lookup finds a child (the node after its parent, the
 * parent's last child, the children map), the tree is the same: random
 * traces over few methods and bcis, from several threads, land each in the
 * node of exactly its own path, and every distinct prefix is one node. */
#define RT_N 3000
#define RT_DEPTH 7
/* Field by field: a frame's padding bytes are not part of its value. */
static bool same_prefix(const struct trace_frame *a, const struct trace_frame *b, uint32_t n)
{
	for (uint32_t d = 0; d < n; d++)
		if (a[d].method_id != b[d].method_id || a[d].type != b[d].type || a[d].bci != b[d].bci)
			return false;
	return true;
}

static void test_random_traces_find_their_nodes(void)
{
	static struct trace_frame tr[RT_N][RT_DEPTH];
	static uint32_t len[RT_N];
	struct cct c;
	uint32_t prefixes = 0;
	unsigned seed = 12345;

	CHECK(cct_init(&c, 1u << 20) == 0);
	for (int i = 0; i < RT_N; i++) {
		len[i] = 1 + (uint32_t)(rand_r(&seed) % RT_DEPTH);
		for (uint32_t d = 0; d < len[i]; d++)
			tr[i][d] = (struct trace_frame){.method_id = 1 + (uint32_t)(rand_r(&seed) % 4),
							.type = FRAME_INTERPRETED, .bci = rand_r(&seed) % 3};
		CHECK(cct_add_sample(&c, tr[i], len[i], 0, (uint32_t)(rand_r(&seed) % 5)) == 0);
	}
	for (int i = 0; i < RT_N; i++) {
		uint32_t node = 0, same = 0;

		for (uint32_t d = 0; d < len[i]; d++) {
			uint32_t next = cct_child(&c, node, tr[i][d].method_id, tr[i][d].type, tr[i][d].bci, 0);
			CHECK(next != 0);
			CHECK_EQ(c.nodes.v[next].parent, node);
			node = next;
		}
		for (int j = 0; j < RT_N; j++)
			same += len[j] == len[i] && same_prefix(tr[j], tr[i], len[i]);
		CHECK_EQ(c.self.v[node], same);
		/* prefix d+1 of trace i is new if no earlier trace has it */
		for (uint32_t d = 0; d < len[i]; d++) {
			bool seen = false;
			for (int j = 0; j < i && !seen; j++)
				seen = len[j] > d && same_prefix(tr[j], tr[i], d + 1);
			prefixes += !seen;
		}
	}
	CHECK_EQ(c.nodes.n, prefixes + 1);
	CHECK_EQ(c.samples, RT_N);
	/* Only children not made right after their parent are in the map
	 * (the others are found as the next node). */
	uint32_t apart = 0;
	for (uint32_t i = 1; i < c.nodes.n; i++)
		apart += c.nodes.v[i].parent + 1 != i;
	CHECK(apart > 0 && apart < c.nodes.n - 1);
	CHECK_EQ(c.children.count, apart);
	cct_free(&c);
}

/* A tree past big_alloc's threshold (nodes, counts and children map on
 * their own mappings, grown by mremap) keeps every node and count. */
static void test_big_tree(void)
{
	enum { N = 200000, FANOUT = 500 };
	struct cct c;

	CHECK(cct_init(&c, 1u << 20) == 0);
	for (int round = 0; round < 2; round++)
		for (uint32_t i = 0; i < N; i++) {
			struct trace_frame t[] = {F(i / FANOUT + 1, FRAME_INTERPRETED), F(i + 1, FRAME_COMPILED)};
			CHECK(cct_add(&c, t, 2, 1) == 0);
		}
	CHECK_EQ(c.nodes.n, 1 + N / FANOUT + N);
	CHECK(c.nodes.cap * sizeof(*c.nodes.v) >= 2u << 20);
	CHECK_EQ(c.samples, 2 * N);
	uint64_t leaves = 0;
	for (size_t k = 1; k < c.nodes.n; k++)
		if (c.nodes.v[k].type == FRAME_COMPILED) {
			CHECK_EQ(c.self.v[k], 2);
			CHECK_EQ(c.nodes.v[c.nodes.v[k].parent].method_id, (c.nodes.v[k].method_id - 1) / FANOUT + 1);
			leaves++;
		}
	CHECK_EQ(leaves, N);
	cct_free(&c);
}

/* Checks what every tree holds after any prune: nodes after their
 * parents, each found by a lookup under its parent, every sample in some
 * node, the [other] nodes' samples counted as overflow. */
static void check_tree_whole(struct cct *c)
{
	uint64_t sum = 0, other = 0;
	bool *below_other = calloc(c->nodes.n, sizeof(*below_other));

	CHECK(below_other != NULL);
	for (uint32_t j = 0; j < c->nodes.n && below_other; j++) {
		const struct cct_node *nd = &c->nodes.v[j];
		bool is_other = nd->type == FRAME_PSEUDO && nd->method_id == PSEUDO_OVERFLOW;

		sum += c->self.v[j];
		if (!j)
			continue;
		CHECK(nd->parent < j);
		below_other[j] = is_other || below_other[nd->parent];
		if (below_other[j])
			other += c->self.v[j];
		if (!is_other)
			CHECK_EQ(cct_child(c, nd->parent, nd->method_id, nd->type, nd->bci, 0), j);
	}
	CHECK_EQ(sum, c->samples);
	CHECK_EQ(other, c->overflow_samples);
	free(below_other);
}

/* Samples that ended in a frame of method_id, wherever in the tree. */
static uint64_t method_self(const struct cct *c, uint32_t method_id)
{
	uint64_t sum = 0;

	for (uint32_t j = 1; j < c->nodes.n; j++)
		if (c->nodes.v[j].method_id == method_id && c->nodes.v[j].type != FRAME_PSEUDO)
			sum += c->self.v[j];
	return sum;
}

/* A path: hot ones share a prefix and end in one of HOT leaves; cold ones
 * go on below a hot prefix with frames no other path has. */
#define PR_DEPTH 8
static uint32_t prune_path(struct trace_frame *t, uint32_t hot, uint32_t cold)
{
	for (uint32_t d = 0; d < PR_DEPTH; d++)
		t[d] = (struct trace_frame){.method_id = 1 + d, .type = FRAME_COMPILED, .bci = (int32_t)(d < 4 ? 0 : hot)};
	if (!cold)
		return PR_DEPTH;
	for (uint32_t d = 0; d < 4; d++)
		t[PR_DEPTH + d] = (struct trace_frame){.method_id = 100 + d, .type = FRAME_INTERPRETED,
						       .bci = (int32_t)(cold * 4 + d)};
	if (cold % 2 == 0)
		return PR_DEPTH + 4;
	/* in the kernel on top of its Java frames (hidden in the Java view) */
	t[PR_DEPTH + 4] = (struct trace_frame){.method_id = 900 + cold % 7, .type = FRAME_KERNEL, .bci = -1};
	return PR_DEPTH + 5;
}

/* A full tree that may prune keeps its hot paths, with every sample they
 * had, while new cold paths keep coming: the cold ones pruned land in
 * [other] nodes under their hot prefix, in the tree and in its time
 * slices alike. Without pruning (test_node_cap) they all would, once full. */
static void test_prune_keeps_the_sampled_paths(void)
{
	enum { HOT = 5, COLD = 3000 };
	struct cct c;
	struct trace_frame t[PR_DEPTH + 5];
	uint64_t hot_samples[HOT] = {0}, *window;
	struct slice_window w = {.from_s = 1, .until_s = 1000};

	CHECK(cct_init(&c, 2000) == 0);
	cct_enable_pruning(&c);
	for (uint32_t i = 1; i <= COLD; i++) {
		uint32_t h = i % HOT, n = prune_path(t, h, 0);

		CHECK(cct_add_sample(&c, t, n, 1 + (int64_t)i / 50, i % 3) == 0);
		hot_samples[h]++;
		n = prune_path(t, h, i);
		CHECK(cct_add_sample(&c, t, n, 1 + (int64_t)i / 50, i % 3) == 0);
	}
	CHECK(c.prunes >= 2);
	CHECK(c.pruned_nodes > 0);
	CHECK(c.nodes.n <= 2000 + 50);
	CHECK_EQ(c.samples, 2 * COLD);
	check_tree_whole(&c);
	/* The hot leaves, each with all of its samples, in the tree and the
	 * slices; the slices count every sample once. */
	window = calloc(c.nodes.n, sizeof(*window));
	CHECK(window != NULL);
	cct_slices_window(&c.slices, window, c.nodes.n, &w);
	CHECK_EQ(w.samples, 2 * COLD);
	uint64_t in_window = 0;
	for (uint32_t j = 0; j < c.nodes.n; j++) {
		CHECK(window[j] <= c.self.v[j]);
		in_window += window[j];
	}
	CHECK_EQ(in_window, 2 * COLD);
	for (uint32_t h = 0; h < HOT; h++) {
		uint32_t node = 0, n = prune_path(t, h, 0);

		for (uint32_t d = 0; d < n && node != UINT32_MAX; d++)
			node = cct_child(&c, node, t[d].method_id, t[d].type, t[d].bci, 0);
		CHECK(node != 0);
		CHECK_EQ(c.self.v[node], hot_samples[h]);
		CHECK_EQ(window[node], hot_samples[h]);
	}
	/* The cold paths pruned: in [other] nodes under the hot prefix, by
	 * their method (a method node that a later prune drops in turn goes
	 * into its [other] node itself); the newest, since the last prune, on
	 * paths of their own. */
	CHECK(c.overflow_samples > 0 && c.overflow_samples < COLD);
	CHECK_EQ(method_self(&c, PR_DEPTH), COLD);
	/* In the Java view (kernel frames hidden) each cold sample ended in
	 * method 103, pruned or not, but for those in [other] nodes without a
	 * method (a method node dropped by a later prune: few). */
	struct cct view;
	uint64_t methodless = 0;
	CHECK(cct_view_build(&c, VIEW_MERGE_BCI, VIEW_JAVA, NULL, &view) == 0);
	for (uint32_t j = 1; j < view.nodes.n; j++)
		if (view.nodes.v[j].type == FRAME_PSEUDO && view.nodes.v[j].method_id == PSEUDO_OVERFLOW)
			methodless += view.self.v[j];
	CHECK_EQ(method_self(&view, 103) + methodless, COLD);
	CHECK(methodless * 10 < c.overflow_samples);
	CHECK_EQ(view.overflow_samples, c.overflow_samples);
	cct_free(&view);
	free(window);
	cct_free(&c);
}

/* Under a byte cap (the daemon's: big arrays, a children map that must
 * grow) a pruned tree finds room again: between prunes, new paths get
 * nodes of their own instead of [other]. */
static void test_prune_makes_room_under_a_byte_cap(void)
{
	enum { COLD = 400000 };
	struct cct c;
	struct trace_frame t[PR_DEPTH + 5];
	uint64_t refused = 0;

	CHECK(cct_init(&c, 1u << 30) == 0);
	cct_set_caps(&c, 1u << 30, 8u << 20);
	cct_enable_pruning(&c);
	for (uint32_t i = 1; i <= COLD; i++) {
		uint64_t prunes = c.prunes, other = c.overflow_samples;
		uint32_t n = prune_path(t, i % 5, i);

		CHECK(cct_add_sample(&c, t, n, 0, i % 3) == 0);
		refused += c.prunes == prunes && c.overflow_samples > other;
	}
	CHECK(c.prunes >= 3);
	CHECK(cct_bytes(&c) <= (8u << 20) + (4u << 20));
	/* Each prune lets one path through to [other] first (it finds the
	 * tree full), not every path after the tree first filled. */
	CHECK(refused <= c.prunes);
	check_tree_whole(&c);
	cct_free(&c);
}

/* A tree whose nodes all have many samples cannot make room by pruning: it
 * tries once, then stays full (new paths in [other]) instead of pruning
 * on every sample. */
static void test_prune_gives_up_on_a_hot_tree(void)
{
	struct cct c;
	struct trace_frame t[PR_DEPTH + 5];

	CHECK(cct_init(&c, 1500) == 0);
	cct_enable_pruning(&c);
	for (uint32_t i = 0; c.nodes.n < 1500 && i < 2000; i++) {
		struct trace_frame leaf[2] = {F(1, FRAME_COMPILED), F(10 + i, FRAME_COMPILED)};
		CHECK(cct_add(&c, leaf, 2, 5000) == 0);
	}
	for (uint32_t i = 1; i <= 500; i++) {
		uint32_t n = prune_path(t, 0, i);
		CHECK(cct_add_sample(&c, t, n, 0, 0) == 0);
	}
	CHECK_EQ(c.prunes, 1);
	CHECK_EQ(c.pruned_nodes, 0);
	CHECK(c.overflow_samples > 0);
	check_tree_whole(&c);
	cct_free(&c);
}

/* The node a root-first path leads to in c; 0 if there is none. */
static uint32_t path_node(struct cct *c, const struct trace_frame *path, uint32_t n)
{
	uint32_t node = 0;

	for (uint32_t i = 0; i < n && (i == 0 || node); i++)
		node = cct_child(c, node, path[i].method_id, path[i].type, -1, 0);
	return node == UINT32_MAX ? 0 : node;
}

/* A virtual thread's frames under its carrier's (and the [virtual thread]
 * frame between them, process_samples.c): by default each view moves them
 * to one root, wherever the thread was mounted; --view carrier keeps them
 * below their carriers. */
static void test_virtual_threads_rooted_or_under_their_carriers(void)
{
	const struct trace_frame vt = F(PSEUDO_VTHREAD, FRAME_PSEUDO);
	struct trace_frame on_a[] = {F(1, FRAME_COMPILED), F(2, FRAME_COMPILED), vt, F(10, FRAME_COMPILED),
				     F(11, FRAME_INLINED)};
	struct trace_frame on_b[] = {F(3, FRAME_INTERPRETED), F(2, FRAME_COMPILED), vt, F(10, FRAME_COMPILED),
				     F(11, FRAME_INLINED)};
	struct trace_frame carrier_own[] = {F(3, FRAME_INTERPRETED), F(12, FRAME_COMPILED)};
	struct trace_frame rooted[] = {vt, F(10, FRAME_COMPILED), F(11, FRAME_INLINED)};
	struct cct c, view;
	uint32_t node;

	CHECK_EQ(cct_view_parse("java"), VIEW_JAVA);
	CHECK_EQ(cct_view_parse("mixed"), VIEW_MIXED);
	CHECK_EQ(cct_view_parse("carrier"), VIEW_CARRIER);
	CHECK_EQ(cct_view_parse("mixed,carrier"), VIEW_MIXED | VIEW_CARRIER);
	CHECK_EQ(cct_view_parse("carrier,mixed"), VIEW_MIXED | VIEW_CARRIER);
	CHECK_EQ(cct_view_parse("carriers"), -1);
	CHECK_EQ(cct_view_parse(""), -1);
	CHECK_EQ(cct_view_parse(NULL), -1);

	CHECK(cct_init(&c, 100) == 0);
	CHECK(cct_add(&c, on_a, 5, 3) == 0);
	CHECK(cct_add(&c, on_b, 5, 2) == 0);
	CHECK(cct_add(&c, carrier_own, 2, 1) == 0);

	/* Java view: one [virtual thread] root with all 5; the carrier frames
	 * only with their own sample; no empty carrier path left. */
	CHECK(cct_view_build(&c, VIEW_MERGE_BCI, VIEW_JAVA, NULL, &view) == 0);
	CHECK_EQ(view.samples, 6);
	node = path_node(&view, rooted, 3);
	CHECK(node != 0);
	if (node)
		CHECK_EQ(view.self.v[node], 5);
	CHECK_EQ(path_node(&view, on_a, 1), 0);
	CHECK_EQ(path_node(&view, on_b, 3), 0);
	node = path_node(&view, carrier_own, 2);
	CHECK(node != 0);
	if (node)
		CHECK_EQ(view.self.v[node], 1);
	CHECK_EQ(view.nodes.n, 6); /* root, [virtual thread], 10, 11, 3, 12 */
	cct_free(&view);

	/* Carrier view: the tree as inserted. */
	CHECK(cct_view_build(&c, VIEW_MERGE_BCI, VIEW_CARRIER, NULL, &view) == 0);
	CHECK_EQ(view.samples, 6);
	CHECK_EQ(path_node(&view, rooted, 1), 0);
	node = path_node(&view, on_a, 5);
	CHECK(node != 0);
	if (node)
		CHECK_EQ(view.self.v[node], 3);
	node = path_node(&view, on_b, 5);
	CHECK(node != 0);
	if (node)
		CHECK_EQ(view.self.v[node], 2);
	cct_free(&view);
	cct_free(&c);
}

/* Profile types: off-CPU paths hang below the root's [off-CPU] node
 * (process_samples.c). The cpu view leaves them out, offcpu shows only
 * them from the root, wall both, merged path by path; a virtual thread
 * off CPU is rooted like one on CPU. */
static void test_profile_types_split_at_the_off_cpu_node(void)
{
	const struct trace_frame off = F(PSEUDO_OFFCPU, FRAME_PSEUDO), vt = F(PSEUDO_VTHREAD, FRAME_PSEUDO);
	struct trace_frame running[] = {F(1, FRAME_COMPILED), F(2, FRAME_COMPILED)};
	struct trace_frame waiting[] = {off, F(1, FRAME_COMPILED), F(2, FRAME_COMPILED)};
	struct trace_frame parked[] = {off, F(3, FRAME_COMPILED), vt, F(10, FRAME_COMPILED)};
	struct trace_frame rooted[] = {vt, F(10, FRAME_COMPILED)};
	struct cct c, view;
	uint32_t node;

	CHECK_EQ(cct_profile_type_parse("cpu"), 0);
	CHECK_EQ(cct_profile_type_parse("offcpu"), VIEW_OFFCPU);
	CHECK_EQ(cct_profile_type_parse("wall"), VIEW_WALL);
	CHECK_EQ(cct_profile_type_parse("off"), -1);
	CHECK_EQ(cct_profile_type_parse(NULL), -1);
	CHECK_STR(cct_profile_type_name(VIEW_MIXED), "cpu");
	CHECK_STR(cct_profile_type_name(VIEW_OFFCPU | VIEW_CARRIER), "offcpu");
	CHECK_STR(cct_profile_type_name(VIEW_WALL), "wall");

	CHECK(cct_init(&c, 100) == 0);
	CHECK(cct_add(&c, running, 2, 2) == 0);
	CHECK(cct_add(&c, waiting, 3, 5) == 0);
	CHECK(cct_add(&c, parked, 4, 7) == 0);

	CHECK(cct_view_build(&c, VIEW_MERGE_BCI, VIEW_JAVA, NULL, &view) == 0);
	CHECK_EQ(view.samples, 2);
	CHECK_EQ(view.nodes.n, 3); /* root, 1, 2 */
	cct_free(&view);

	CHECK(cct_view_build(&c, VIEW_MERGE_BCI, VIEW_OFFCPU, NULL, &view) == 0);
	CHECK_EQ(view.samples, 12);
	node = path_node(&view, running, 2);
	CHECK(node != 0);
	if (node)
		CHECK_EQ(view.self.v[node], 5);
	node = path_node(&view, rooted, 2);
	CHECK(node != 0);
	if (node)
		CHECK_EQ(view.self.v[node], 7);
	CHECK_EQ(path_node(&view, &off, 1), 0);
	cct_free(&view);

	CHECK(cct_view_build(&c, VIEW_MERGE_BCI, VIEW_WALL, NULL, &view) == 0);
	CHECK_EQ(view.samples, 14);
	node = path_node(&view, running, 2);
	CHECK(node != 0);
	if (node)
		CHECK_EQ(view.self.v[node], 7);
	cct_free(&view);

	/* Carrier view of the off-CPU samples: below the carrier's frame. */
	CHECK(cct_view_build(&c, VIEW_MERGE_BCI, VIEW_OFFCPU | VIEW_CARRIER, NULL, &view) == 0);
	node = path_node(&view, parked + 1, 3);
	CHECK(node != 0);
	if (node)
		CHECK_EQ(view.self.v[node], 7);
	cct_free(&view);
	cct_free(&c);
}

/* Thread pools: a thread's name with its digit runs as '*'; a selector is
 * a glob of pool names or a thread's own name. A view of some pools
 * leaves the others' paths out; VIEW_THREADS starts each path at its
 * pool; otherwise the pools' paths merge. */
static void test_thread_pools(void)
{
	char pool[THREAD_POOL_NAME_MAX];
	struct cct c, view;
	uint32_t node;

	thread_pool_name("http-nio-8080-exec-12", pool, sizeof(pool));
	CHECK_STR(pool, "http-nio-*-exec-*");
	thread_pool_name("main", pool, sizeof(pool));
	CHECK_STR(pool, "main");
	thread_pool_name("GC Thread#0", pool, sizeof(pool));
	CHECK_STR(pool, "GC Thread#*");
	thread_pool_name("0123456789", pool, 3);
	CHECK_STR(pool, "*");
	thread_pool_name("abcdef", pool, 4);
	CHECK_STR(pool, "abc");
	CHECK(thread_pool_selected("http-nio-*", "http-nio-*-exec-*"));
	CHECK(thread_pool_selected("http-nio-8080-exec-3", "http-nio-*-exec-*"));
	CHECK(thread_pool_selected("http-nio-*-exec-*", "http-nio-*-exec-*"));
	CHECK(!thread_pool_selected("http-nio-8080-exec", "http-nio-*-exec-*"));
	CHECK(!thread_pool_selected("main", "mainly"));

	uint32_t a = kernel_symbols_intern("pool-*-thread-*"), b = kernel_symbols_intern("main");
	struct trace_frame ta = {.method_id = a, .type = FRAME_THREAD, .bci = -1};
	struct trace_frame tb = {.method_id = b, .type = FRAME_THREAD, .bci = -1};
	struct trace_frame off = {.method_id = PSEUDO_OFFCPU, .type = FRAME_PSEUDO, .bci = -1};
	struct trace_frame in_a[] = {ta, F(1, FRAME_COMPILED), F(2, FRAME_COMPILED)};
	struct trace_frame in_b[] = {tb, F(1, FRAME_COMPILED), F(2, FRAME_COMPILED)};
	struct trace_frame off_b[] = {off, tb, F(1, FRAME_COMPILED), F(3, FRAME_COMPILED)};
	struct trace_frame merged[] = {F(1, FRAME_COMPILED), F(2, FRAME_COMPILED)};

	CHECK(a && b);
	CHECK(cct_init(&c, 100) == 0);
	CHECK(cct_add(&c, in_a, 3, 2) == 0);
	CHECK(cct_add(&c, in_b, 3, 5) == 0);
	CHECK(cct_add(&c, off_b, 4, 7) == 0);

	/* Every pool, merged: no thread node. */
	CHECK(cct_view_build(&c, VIEW_MERGE_BCI, VIEW_WALL, NULL, &view) == 0);
	CHECK_EQ(view.samples, 14);
	node = path_node(&view, merged, 2);
	CHECK(node != 0);
	if (node)
		CHECK_EQ(view.self.v[node], 7);
	CHECK_EQ(path_node(&view, &ta, 1), 0);
	cct_free(&view);
	/* One pool, by a thread's name. */
	CHECK(cct_view_build_threads(&c, VIEW_MERGE_BCI, VIEW_JAVA, NULL, "pool-3-thread-1", &view) == 0);
	CHECK_EQ(view.samples, 2);
	cct_free(&view);
	CHECK(cct_view_build_threads(&c, VIEW_MERGE_BCI, VIEW_WALL, NULL, "ma*", &view) == 0);
	CHECK_EQ(view.samples, 12);
	cct_free(&view);
	CHECK(cct_view_build_threads(&c, VIEW_MERGE_BCI, VIEW_WALL, NULL, "nothing", &view) == 0);
	CHECK_EQ(view.samples, 0);
	cct_free(&view);
	/* By pool: each path under its pool, the off-CPU ones too. */
	CHECK(cct_view_build(&c, VIEW_MERGE_BCI, VIEW_WALL | VIEW_THREADS, NULL, &view) == 0);
	node = path_node(&view, in_a, 3);
	CHECK(node != 0);
	if (node)
		CHECK_EQ(view.self.v[node], 2);
	node = path_node(&view, off_b + 1, 3);
	CHECK(node != 0);
	if (node)
		CHECK_EQ(view.self.v[node], 7);
	cct_free(&view);
	cct_free(&c);
}

int main(void)
{
	RUN(test_merge_and_render);
	RUN(test_big_tree);
	RUN(test_node_cap);
	RUN(test_bci_bits);
	RUN(test_names_are_safe_for_collapsed);
	RUN(test_random_traces_find_their_nodes);
	RUN(test_prune_keeps_the_sampled_paths);
	RUN(test_prune_makes_room_under_a_byte_cap);
	RUN(test_prune_gives_up_on_a_hot_tree);
	RUN(test_virtual_threads_rooted_or_under_their_carriers);
	RUN(test_profile_types_split_at_the_off_cpu_node);
	RUN(test_thread_pools);
	return CHECK_DONE();
}
