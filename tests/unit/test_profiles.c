/* SPDX-License-Identifier: GPL-2.0-only */
/* Profiles out of a CCT: frames told apart by bci and merged again for
 * display, time slices and windows, and the pprof, page, SVG and diff
 * renderings (pprof read back with protobuf-c). */
#include <stdlib.h>
#include <zlib.h>

#include "profile.pb-c.h"

#include "userspace/profile/cct.h"
#include "userspace/profile/cct_format.h"
#include "userspace/profile/cct_view.h"
#include "userspace/profile/kernel_symbols.h"
#include "check.h"
#include "model_builder.h"

static struct trace_frame F(uint32_t id, uint8_t type, int32_t bci)
{
	return (struct trace_frame){.method_id = id, .type = type, .bci = bci};
}

/* app.Main: main (interpreted) -> work (compiled) -> leaf (inlined into
 * work); lines: bci 0..4 line 10, bci 5.. line 11. */
static void make_model(struct jvm_model *m)
{
	jvm_model_init(m);
	CHECK(tb_apply_class(m, 1, "Lapp/Main;", "Main.java") == 0);
	CHECK(tb_apply_method(m, 1, 1, 0, 0, 0, "main") == 0);
	CHECK(tb_apply_method(m, 2, 1, 0, 0, 0, "work") == 0);
	CHECK(tb_apply_method(m, 3, 1, 0, 0, 0, "leaf") == 0);
}

static char *render(const struct cct *c, const struct jvm_model *m, enum cct_format f, struct slice_window *w,
		    size_t *len)
{
	static struct wbuf out;
	struct profile_source src = {.cct = c, .methods = &m->methods, .window = w, .title = "test",
				     .frequency_hz = 100, .pid = 42};

	wbuf_free(&out);
	wbuf_init(&out);
	CHECK(cct_render_stream(&src, f, &out, -1) == 0);
	if (len)
		*len = out.len;
	wbuf_u8(&out, 0);
	return (char *)out.data;
}

static void test_bci_kept_and_merged(void)
{
	struct cct c, view;
	struct jvm_model m;
	struct trace_frame a[] = {F(1, FRAME_INTERPRETED, 3), F(2, FRAME_COMPILED, 7)};
	struct trace_frame b[] = {F(1, FRAME_INTERPRETED, 6), F(2, FRAME_COMPILED, 7)};

	make_model(&m);
	CHECK(cct_init(&c, 100) == 0);
	CHECK(cct_add(&c, a, 2, 2) == 0);
	CHECK(cct_add(&c, b, 2, 3) == 0);
	CHECK(cct_add(&c, a, 2, 1) == 0);
	CHECK_EQ(c.nodes.n, 5); /* main@3, main@6 and a work under each */
	CHECK(cct_view_build(&c, VIEW_MERGE_BCI, VIEW_JAVA, NULL, &view) == 0);
	CHECK_EQ(view.nodes.n, 3); /* root, main, work */
	CHECK_EQ(view.self.v[2], 6);
	cct_free(&view);
	CHECK(cct_view_build(&c, VIEW_KEEP_BCI, VIEW_JAVA, NULL, &view) == 0);
	CHECK_EQ(view.nodes.n, 5);
	cct_free(&view);
	/* The text renderings show methods, not positions. */
	CHECK_STR(render(&c, &m, CCT_FORMAT_COLLAPSED, NULL, NULL), "app.Main.main_[0];app.Main.work_[j] 6\n");
	cct_free(&c);
	jvm_model_free(&m);
}

static void test_slices_and_windows(void)
{
	struct cct c;
	struct jvm_model m;
	struct trace_frame a[] = {F(1, FRAME_INTERPRETED, 0), F(2, FRAME_COMPILED, 0)};
	struct trace_frame b[] = {F(1, FRAME_INTERPRETED, 0), F(3, FRAME_COMPILED, 0)};
	const int64_t t0 = 1700002800; /* on the hour */
	struct slice_window w;

	make_model(&m);
	CHECK(cct_init(&c, 100) == 0);
	cct_slices_set_finest(&c.slices, 10); /* the figures below are for 10-s slices */
	/* work for 30 s, then leaf for 30 s, one sample a second. */
	for (int i = 0; i < 60; i++)
		CHECK(cct_add_at(&c, i < 30 ? a : b, 2, 1, t0 + i) == 0);
	CHECK_EQ(c.slices.v.n, 6);
	w = (struct slice_window){.from_s = t0, .until_s = t0 + 30};
	CHECK_STR(render(&c, &m, CCT_FORMAT_COLLAPSED, &w, NULL), "app.Main.main_[0];app.Main.work_[j] 30\n");
	CHECK_EQ(w.covered_from, t0);
	CHECK_EQ(w.covered_until, t0 + 30);
	w = (struct slice_window){.from_s = t0 + 35, .until_s = t0 + 41};
	CHECK_STR(render(&c, &m, CCT_FORMAT_COLLAPSED, &w, NULL), "app.Main.main_[0];app.Main.leaf_[j] 20\n");
	w = (struct slice_window){.from_s = t0 + 1000, .until_s = t0 + 2000};
	CHECK_STR(render(&c, &m, CCT_FORMAT_COLLAPSED, &w, NULL), "");
	CHECK_EQ(w.covered_until, 0);
	/* A late sample lands in its own (closed) slice. */
	CHECK(cct_add_at(&c, a, 2, 1, t0 + 5) == 0);
	w = (struct slice_window){.from_s = t0, .until_s = t0 + 10};
	CHECK_STR(render(&c, &m, CCT_FORMAT_COLLAPSED, &w, NULL), "app.Main.main_[0];app.Main.work_[j] 11\n");

	/* Ten minutes on, the 10 s slices become minutes; an hour on, hours;
	 * a day on, they go (the tree keeps everything). */
	cct_slices_tidy(&c.slices, t0 + 11 * 60);
	CHECK_EQ(c.slices.v.n, 1);
	CHECK_EQ(c.slices.v.v[0].span_s, 60);
	CHECK_EQ(c.slices.v.v[0].samples, 61);
	w = (struct slice_window){.from_s = t0 + 35, .until_s = t0 + 41}; /* answered by the minute */
	CHECK_STR(render(&c, &m, CCT_FORMAT_COLLAPSED, &w, NULL),
		  "app.Main.main_[0];app.Main.work_[j] 31\napp.Main.main_[0];app.Main.leaf_[j] 30\n");
	cct_slices_tidy(&c.slices, t0 + 2 * 3600);
	CHECK_EQ(c.slices.v.v[0].span_s, 3600);
	cct_slices_tidy(&c.slices, t0 + 26 * 3600);
	CHECK_EQ(c.slices.v.n, 0);
	CHECK_EQ(c.slices.expired_samples, 61);
	CHECK_EQ(c.samples, 61);

	/* The byte cap: oldest slices coarsen, then go. */
	c.max_nodes = 100000;
	c.slices.max_bytes = 4096;
	for (int i = 0; i < 2000; i++) {
		struct trace_frame f[] = {F(1, FRAME_INTERPRETED, i % 500), F(2, FRAME_COMPILED, i)};
		CHECK(cct_add_at(&c, f, 2, 1, t0 + 100000 + i * 10) == 0);
	}
	CHECK(c.slices.bytes <= 4096 + 64 * 16 * 4);
	CHECK(c.slices.expired_samples > 61);
	cct_free(&c);
	jvm_model_free(&m);
}

static Perftools__Profiles__Profile *read_pprof(const char *gz, size_t len)
{
	size_t cap = 1 << 20;
	uint8_t *raw = malloc(cap);
	z_stream z = {0};
	Perftools__Profiles__Profile *p;

	CHECK(inflateInit2(&z, 15 + 16) == Z_OK);
	z.next_in = (Bytef *)gz;
	z.avail_in = (uInt)len;
	z.next_out = raw;
	z.avail_out = (uInt)cap;
	CHECK(inflate(&z, Z_FINISH) == Z_STREAM_END);
	p = perftools__profiles__profile__unpack(NULL, z.total_out, raw);
	inflateEnd(&z);
	free(raw);
	return p;
}

static const char *function_name(const Perftools__Profiles__Profile *p, uint64_t id)
{
	for (size_t i = 0; i < p->n_function; i++)
		if (p->function[i]->id == id)
			return p->string_table[p->function[i]->name];
	return "?";
}

static void test_pprof(void)
{
	struct cct c;
	struct jvm_model m;
	/* work@7 (line 11) with leaf@2 (line 10) inlined into it. */
	struct trace_frame a[] = {F(1, FRAME_INTERPRETED, 6), F(2, FRAME_COMPILED, 7), F(3, FRAME_INLINED, 2)};
	struct trace_frame g[] = {F(PSEUDO_GC, FRAME_PSEUDO, -1)};
	Perftools__Profiles__Profile *p;
	size_t len;
	char *gz;

	make_model(&m);
	CHECK(cct_init(&c, 100) == 0);
	CHECK(cct_add(&c, a, 3, 5) == 0);
	CHECK(cct_add(&c, g, 1, 2) == 0);
	gz = render(&c, &m, CCT_FORMAT_PPROF, NULL, &len);
	p = read_pprof(gz, len);
	CHECK(p != NULL);
	if (!p)
		goto out;
	CHECK_EQ(p->n_sample_type, 2);
	CHECK_STR(p->string_table[p->sample_type[0]->type], "samples");
	CHECK_STR(p->string_table[p->sample_type[1]->unit], "nanoseconds");
	CHECK_EQ(p->period, 10000000); /* 100 Hz */
	int64_t total = 0;
	const Perftools__Profiles__Sample *java = NULL;
	for (size_t i = 0; i < p->n_sample; i++) {
		total += p->sample[i]->value[0];
		CHECK_EQ(p->sample[i]->value[1], p->sample[i]->value[0] * 10000000);
		CHECK_STR(p->string_table[p->sample[i]->label[0]->key], "pid");
		CHECK_EQ(p->sample[i]->label[0]->num, 42);
		if (p->sample[i]->n_location_id == 2)
			java = p->sample[i];
	}
	CHECK_EQ(total, 7); /* every sample of the tree */
	CHECK(java != NULL);
	if (java) {
		/* Leaf first: the compiled frame (leaf inlined into work), then main. */
		const Perftools__Profiles__Location *top = NULL;
		for (size_t i = 0; i < p->n_location; i++)
			if (p->location[i]->id == java->location_id[0])
				top = p->location[i];
		CHECK(top && top->n_line == 2);
		if (top && top->n_line == 2) {
			CHECK_STR(function_name(p, top->line[0]->function_id), "app.Main.leaf");
			CHECK_EQ(top->line[0]->line, 10);
			CHECK_STR(function_name(p, top->line[1]->function_id), "app.Main.work");
			CHECK_EQ(top->line[1]->line, 11);
		}
	}
	for (size_t i = 0; i < p->n_function; i++)
		if (strcmp(p->string_table[p->function[i]->name], "app.Main.main") == 0) {
			CHECK_STR(p->string_table[p->function[i]->filename], "app/Main.java");
			CHECK_EQ(p->function[i]->start_line, 10);
		}
	perftools__profiles__profile__free_unpacked(p, NULL);
out:
	cct_free(&c);
	jvm_model_free(&m);
}

/* Frames named by a host-wide symbol id (native, kernel, thread pool) and
 * Java methods named by their JVM's method id are two namespaces: a symbol
 * whose id equals a method's must not lend that method its name. */
static void test_pprof_symbol_and_method_ids(void)
{
	struct cct c;
	struct jvm_model m;
	uint32_t sym = kernel_symbols_intern("native_read_fn");
	struct trace_frame a[] = {F(sym + 1, FRAME_INTERPRETED, 0), F(sym, FRAME_C, -1)};
	struct trace_frame b[] = {F(sym + 1, FRAME_INTERPRETED, 0), F(sym, FRAME_COMPILED, 0)};
	Perftools__Profiles__Profile *p;
	bool java = false, native = false;

	jvm_model_init(&m);
	CHECK(tb_apply_class(&m, 1, "Lapp/Main;", "Main.java") == 0);
	CHECK(tb_apply_method(&m, sym + 1, 1, 0, 0, 0, "main") == 0);
	/* the Java method of the symbol's id */
	CHECK(tb_apply_method(&m, sym, 1, 0, 0, 0, "javaWork") == 0);
	CHECK(cct_init(&c, 100) == 0);
	CHECK(cct_add(&c, a, 2, 3) == 0); /* the symbol first: its name is made first */
	CHECK(cct_add(&c, b, 2, 4) == 0);
	struct profile_source src = {.cct = &c, .methods = &m.methods, .frequency_hz = 100, .pid = 42,
				     .view = VIEW_MIXED};
	struct wbuf out;

	wbuf_init(&out);
	CHECK(cct_render_stream(&src, CCT_FORMAT_PPROF, &out, -1) == 0);
	p = read_pprof((const char *)out.data, out.len);
	CHECK(p != NULL);
	for (size_t i = 0; p && i < p->n_function; i++) {
		java |= strcmp(p->string_table[p->function[i]->name], "app.Main.javaWork") == 0;
		native |= strcmp(p->string_table[p->function[i]->name], "native_read_fn") == 0;
	}
	CHECK(java);
	CHECK(native);
	if (p)
		perftools__profiles__profile__free_unpacked(p, NULL);
	wbuf_free(&out);
	cct_free(&c);
	jvm_model_free(&m);
}

static void test_page_svg_and_diff(void)
{
	struct cct before, after;
	struct jvm_model m;
	struct trace_frame a[] = {F(1, FRAME_INTERPRETED, 0), F(2, FRAME_COMPILED, 0)};
	struct trace_frame b[] = {F(1, FRAME_INTERPRETED, 0), F(3, FRAME_COMPILED, 0)};
	struct wbuf out;
	char *s;

	make_model(&m);
	CHECK(cct_init(&before, 100) == 0);
	CHECK(cct_init(&after, 100) == 0);
	CHECK(cct_add(&before, a, 2, 90) == 0);
	CHECK(cct_add(&before, b, 2, 10) == 0);
	CHECK(cct_add(&after, a, 2, 20) == 0);
	CHECK(cct_add(&after, b, 2, 80) == 0);
	s = render(&after, &m, CCT_FORMAT_PAGE, NULL, NULL);
	CHECK(strncmp(s, "{\"title\":\"test\"", 15) == 0);
	CHECK(strstr(s, "\"names\":[\"[root]\",\"app.Main.main\",\"app.Main.work\",\"app.Main.leaf\"]"));
	CHECK(strstr(s, "\"root\":[0,0,100,0,[[1,1,100,0,[[3,2,80,80,[]],[2,2,20,20,[]]]]]]"));
	CHECK(strstr(s, "\"diff\":null,\"live\":null}"));
	s = render(&after, &m, CCT_FORMAT_HTML, NULL, NULL);
	CHECK(strstr(s, "<html") && strstr(s, "\"app.Main.leaf\"") && !strstr(s, "/*JSAMPLED_DATA*/null"));
	s = render(&after, &m, CCT_FORMAT_SVG, NULL, NULL);
	CHECK(strstr(s, "<svg") && strstr(s, "data-n=\"app.Main.leaf\"") && strstr(s, "</svg>"));

	struct profile_source base = {.cct = &before, .methods = &m.methods, .title = "before"};
	struct profile_source target = {.cct = &after, .methods = &m.methods, .title = "after"};
	wbuf_init(&out);
	CHECK(cct_diff_stream(&base, &target, CCT_FORMAT_TEXT, &out, -1) == 0);
	wbuf_u8(&out, 0);
	s = (char *)out.data;
	/* leaf grew from 10% to 80%, work shrank from 90% to 20%. */
	CHECK(strstr(s, "+70.00pp   10.00%   80.00%  app.Main.leaf\n"));
	CHECK(strstr(s, "-70.00pp   90.00%   20.00%  app.Main.work\n"));
	CHECK(strstr(s, "+70.00pp") < strstr(s, "app.Main.main"));
	wbuf_reset(&out);
	CHECK(cct_diff_stream(&base, &target, CCT_FORMAT_PAGE, &out, -1) == 0);
	wbuf_u8(&out, 0);
	s = (char *)out.data;
	CHECK(strstr(s, "[3,2,80,80,[],10,10]") && strstr(s, "\"diff\":{\"base_title\":\"before\",\"base_total\":100"));
	wbuf_free(&out);
	cct_free(&before);
	cct_free(&after);
	jvm_model_free(&m);
}

/* An open slice logs its samples and folds them into sorted counts a
 * batch at a time: several batches' samples, with counts above one and
 * nodes past 2^22 (every radix digit), come out summed per node, sorted,
 * once each, in windows as in the slice, with the bytes accounted. */
static void test_slice_batches(void)
{
	enum { NODES = 700, SAMPLES = 3 * SLICE_PENDING_BATCH + 123 };
	static uint64_t want[NODES];
	struct cct_slices s;
	struct slice_window w = {.from_s = 0, .until_s = INT64_MAX};
	uint64_t *got = calloc(NODES, sizeof(*got)), total = 0;
	const int64_t t0 = 1700002800;
	size_t bytes = 0;

	CHECK(got != NULL);
	cct_slices_init(&s);
	for (uint32_t i = 0; i < SAMPLES; i++) {
		uint32_t k = (i * 7919u) % NODES;
		uint64_t count = i % 11 == 0 ? 3 : 1;

		want[k] += count;
		total += count;
		CHECK(cct_slices_add(&s, t0, (k % 7 == 0 ? 5000000u : 0u) + k, count) == 0);
	}
	CHECK_EQ(s.v.n, 1);
	CHECK(s.v.v[0].open);
	CHECK(s.v.v[0].counts.n > 0);                      /* batches were folded */
	CHECK(s.v.v[0].pending.n < SLICE_PENDING_BATCH);   /* the rest waits */
	CHECK_EQ(s.v.v[0].samples, total);
	cct_slices_window(&s, got, NODES, &w);
	for (uint32_t k = 0; k < NODES; k++)
		CHECK_EQ(got[k], k % 7 ? want[k] : 0); /* the high nodes are past n */
	/* Closed (past the open ones), it is one sorted array of them all. */
	for (int i = 1; i <= 2; i++)
		CHECK(cct_slices_add(&s, t0 + i * SLICE_FINEST_S, 1, 1) == 0);
	CHECK(!s.v.v[0].open);
	CHECK_EQ(s.v.v[0].pending.n, 0);
	CHECK_EQ(s.v.v[0].counts.n, NODES);
	for (size_t i = 0; i < s.v.v[0].counts.n; i++) {
		const struct slice_count *c = &s.v.v[0].counts.v[i];
		uint32_t k = c->node >= 5000000u ? c->node - 5000000u : c->node;

		CHECK(i == 0 || c->node > s.v.v[0].counts.v[i - 1].node);
		CHECK(k < NODES && (k % 7 == 0) == (c->node >= 5000000u));
		CHECK_EQ(c->count, want[k]);
	}
	for (size_t i = 0; i < s.v.n; i++)
		bytes += (s.v.v[i].counts.cap + s.v.v[i].pending.cap) * sizeof(struct slice_count);
	CHECK_EQ(s.bytes, bytes);
	cct_slices_free(&s);
	free(got);
}

int main(void)
{
	RUN(test_bci_kept_and_merged);
	RUN(test_slices_and_windows);
	RUN(test_slice_batches);
	RUN(test_pprof);
	RUN(test_pprof_symbol_and_method_ids);
	RUN(test_page_svg_and_diff);
	return CHECK_DONE();
}
