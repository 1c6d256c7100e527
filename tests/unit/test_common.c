/* Shared building blocks: the bounded wire reader/writer, the u64 map
 * (against a reference model), the held-sample queue and the string pool. */
#include <stdlib.h>

#include "../../daemon/sample_queue.h"
#include "../../daemon/string_pool.h"
#include "../../daemon/trace.h"
#include "../../userspace/common/big_alloc.h"
#include "../../userspace/common/u64_map.h"
#include "../../userspace/common/wire.h"
#include "../../daemon/safe_text.h"
#include "check.h"

static void test_wire_roundtrip(void)
{
	struct wbuf w;
	struct rbuf r;
	char s[8];

	wbuf_init(&w);
	wbuf_u8(&w, 0xab);
	wbuf_u16(&w, 0xbeef);
	wbuf_u32(&w, 0xdeadbeef);
	wbuf_u64(&w, 0x0123456789abcdefull);
	wbuf_i32(&w, -5);
	wbuf_str(&w, "hello");
	wbuf_str(&w, NULL);
	wbuf_printf(&w, "%d-%s", 42, "x");
	rbuf_init(&r, w.data, w.len);
	CHECK_EQ(rbuf_u8(&r), 0xab);
	CHECK_EQ(rbuf_u16(&r), 0xbeef);
	CHECK_EQ(rbuf_u32(&r), 0xdeadbeef);
	CHECK_EQ(rbuf_u64(&r), 0x0123456789abcdefull);
	CHECK(rbuf_i32(&r) == -5);
	rbuf_str_copy(&r, s, sizeof(s));
	CHECK_STR(s, "hello");
	rbuf_str_copy(&r, s, sizeof(s));
	CHECK_STR(s, "");
	CHECK(!r.err);
	CHECK(memcmp(w.data + r.pos, "42-x", 4) == 0);
	wbuf_free(&w);
}

static void test_wire_overrun(void)
{
	uint8_t buf[6] = {1, 2, 3, 4, 200, 0};
	struct rbuf r, sub;
	char s[4];

	rbuf_init(&r, buf, sizeof(buf));
	CHECK_EQ(rbuf_u32(&r), 0x04030201);
	CHECK_EQ(rbuf_u32(&r), 0); /* only 2 bytes left */
	CHECK(r.err);
	CHECK_EQ(rbuf_u8(&r), 0); /* the error is sticky */
	CHECK_EQ(rbuf_left(&r), 0);

	/* A string whose length exceeds the buffer. */
	rbuf_init(&r, buf + 4, 2); /* length 200 */
	rbuf_str_copy(&r, s, sizeof(s));
	CHECK(r.err);
	CHECK_STR(s, "");

	/* A sub-reader cannot read its parent's bytes. */
	rbuf_init(&r, buf, sizeof(buf));
	sub = rbuf_sub(&r, 2);
	CHECK_EQ(rbuf_u16(&sub), 0x0201);
	CHECK_EQ(rbuf_u8(&sub), 0);
	CHECK(sub.err);
	CHECK(!r.err);
	CHECK_EQ(rbuf_u8(&r), 3);
	sub = rbuf_sub(&r, 100);
	CHECK(sub.err && r.err);
}

static void test_u64_map_against_reference(void)
{
	enum { N = 5000 };
	static uint64_t ref[N]; /* ref[k] = value+1 or 0 when absent; key = k*7919+1 */
	struct u64_map m;
	uint64_t seed = 1;

	u64_map_init(&m);
	for (int step = 0; step < 200000; step++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		uint32_t k = (uint32_t)(seed >> 33) % N;
		uint64_t key = (uint64_t)k * 7919 + 1;
		switch ((seed >> 20) % 3) {
		case 0:
			CHECK(u64_map_put(&m, key, step) == 0);
			ref[k] = (uint64_t)step + 1;
			break;
		case 1: {
			int had = u64_map_del(&m, key);
			CHECK_EQ(had, ref[k] != 0);
			ref[k] = 0;
			break;
		}
		default: {
			uint64_t *v = u64_map_get(&m, key);
			CHECK_EQ(v != NULL, ref[k] != 0);
			if (v && ref[k])
				CHECK_EQ(*v + 1, ref[k]);
		}
		}
		if (check_failures > 10)
			break;
	}
	size_t count = 0;
	for (int k = 0; k < N; k++)
		count += ref[k] != 0;
	CHECK_EQ(m.count, count);
	CHECK(u64_map_put(&m, 0, 1) == -1); /* key 0 is reserved */
	CHECK(u64_map_get(&m, 0) == NULL);
	u64_map_free(&m);
}

/* Arrays keep their contents across big_alloc's threshold both ways, start
 * zeroed, and a map past it (slots on their own mapping) keeps its keys. */
static void test_big_alloc(void)
{
	size_t small = 4096, big = BIG_ALLOC_MIN + 12345, bigger = 3 * BIG_ALLOC_MIN + 7;
	unsigned char *z = big_alloc_zeroed(big), *p = big_realloc(NULL, 0, small);
	size_t zeros = 0;

	CHECK(z && p);
	for (size_t i = 0; z && i < big; i++)
		zeros += z[i] == 0;
	CHECK_EQ(zeros, big);
	big_free(z, big);
	for (size_t i = 0; p && i < small; i++)
		p[i] = (unsigned char)(i * 7);
	size_t sizes[] = {big, bigger, big, small / 2};
	size_t have = small, kept = small;
	for (size_t k = 0; p && k < sizeof(sizes) / sizeof(*sizes); k++) {
		p = big_realloc(p, have, sizes[k]);
		CHECK(p != NULL);
		if (!p)
			return;
		kept = kept < sizes[k] ? kept : sizes[k];
		size_t same = 0;
		for (size_t i = 0; i < kept; i++)
			same += p[i] == (unsigned char)(i * 7);
		CHECK_EQ(same, kept);
		have = sizes[k];
	}
	big_free(p, have);

	struct u64_map m;
	enum { KEYS = 200000 }; /* 262,144 slots: 4 MiB */
	u64_map_init(&m);
	for (uint64_t k = 1; k <= KEYS; k++)
		CHECK(u64_map_put(&m, k * 977, k) == 0);
	CHECK(m.cap * sizeof(*m.slots) >= BIG_ALLOC_MIN);
	size_t found = 0;
	for (uint64_t k = 1; k <= KEYS; k++) {
		uint64_t *v = u64_map_get(&m, k * 977);
		found += v && *v == k;
	}
	CHECK_EQ(found, KEYS);
	u64_map_free(&m);
}

static struct js_sample *make_sample(uint32_t len, uint32_t tag)
{
	struct js_sample *s = calloc(1, sizeof(*s) + len);
	s->stack_len = len;
	s->tid = tag;
	return s;
}

static void test_sample_queue_trims_big_samples(void)
{
	struct sample_queue q;
	size_t big = SAMPLE_QUEUE_TRIM_BYTES * 4, one = sizeof(struct js_sample) + big;
	uint32_t trimmed = 0;
	struct held_sample h;
	struct js_sample *s;

	sample_queue_init(&q, 2 * one);
	for (uint32_t i = 0; i < 4; i++) {
		s = make_sample((uint32_t)big, i);
		CHECK_EQ(sample_queue_push(&q, s, WAIT_CODE, i, &trimmed), 0); /* cut, not dropped */
		free(s);
	}
	CHECK_EQ(sample_queue_len(&q), 4);
	CHECK(trimmed >= 2);
	CHECK(q.bytes <= q.max_bytes);
	while (sample_queue_pop(&q, &h)) {
		if (h.s->flags & JS_SAMPLE_HELD_TRIMMED)
			CHECK_EQ(h.s->stack_len, SAMPLE_QUEUE_TRIM_BYTES);
		else
			CHECK_EQ(h.s->stack_len, big);
		free(h.s);
	}
	CHECK_EQ(q.bytes, 0);
	sample_queue_free(&q);
}

/* Still full with every copy at SAMPLE_QUEUE_TRIM_BYTES, the queue cuts
 * copies to SAMPLE_QUEUE_MIN_BYTES before it drops one: a JVM sampled
 * since its exec holds its samples until its agent comes. */
static void test_sample_queue_trims_further(void)
{
	const size_t head = sizeof(struct js_sample);
	struct sample_queue q;
	uint32_t trimmed = 0, at_min = 0;
	struct held_sample h;
	struct js_sample *s;

	sample_queue_init(&q, 4 * (head + SAMPLE_QUEUE_TRIM_BYTES));
	for (uint32_t i = 0; i < 12; i++) {
		s = make_sample(4 * SAMPLE_QUEUE_TRIM_BYTES, i);
		CHECK_EQ(sample_queue_push(&q, s, WAIT_LAYOUT, 0, &trimmed), 0); /* cut, not dropped */
		free(s);
		CHECK(q.bytes <= q.max_bytes);
	}
	CHECK_EQ(trimmed, 12); /* each sample counted once, however often cut */
	CHECK_EQ(sample_queue_len(&q), 12);
	for (uint32_t i = 0; sample_queue_pop(&q, &h); i++) {
		CHECK_EQ(h.s->tid, i); /* in order */
		CHECK(h.s->flags & JS_SAMPLE_HELD_TRIMMED);
		CHECK(h.s->stack_len == SAMPLE_QUEUE_MIN_BYTES || h.s->stack_len == SAMPLE_QUEUE_TRIM_BYTES);
		at_min += h.s->stack_len == SAMPLE_QUEUE_MIN_BYTES;
		free(h.s);
	}
	CHECK(at_min >= 8);
	/* Past the last level, the oldest go. */
	for (uint32_t i = 0; i < 40; i++) {
		s = make_sample(4 * SAMPLE_QUEUE_TRIM_BYTES, i);
		CHECK(sample_queue_push(&q, s, WAIT_LAYOUT, 0, &trimmed) >= 0);
		free(s);
	}
	CHECK(q.bytes <= q.max_bytes);
	CHECK(sample_queue_len(&q) < 40);
	sample_queue_free(&q);
}

static void test_sample_queue_bounded(void)
{
	struct sample_queue q;
	size_t one = sizeof(struct js_sample) + 100;
	struct js_sample *s;

	uint32_t trimmed = 0;

	sample_queue_init(&q, 3 * one);
	struct held_sample h;

	for (uint32_t i = 0; i < 3; i++) {
		s = make_sample(100, i);
		CHECK_EQ(sample_queue_push(&q, s, WAIT_CODE, 100 + i, &trimmed), 0);
		free(s);
	}
	s = make_sample(100, 3);
	CHECK_EQ(sample_queue_push(&q, s, WAIT_CODE, 103, &trimmed), 1); /* the oldest made room */
	free(s);
	s = make_sample(10 * 1000, 9);
	CHECK_EQ(sample_queue_push(&q, s, WAIT_UNKNOWN, 0, &trimmed), -1); /* bigger than the whole queue */
	free(s);
	CHECK_EQ(trimmed, 0); /* small samples are never cut */
	CHECK_EQ(sample_queue_len(&q), 3);
	/* Taken out and put back: order and bytes preserved, no copy. */
	CHECK(sample_queue_pop(&q, &h) && h.s->tid == 1 && h.key == 101);
	CHECK(sample_queue_requeue(&q, &h) == 0);
	for (uint32_t want = 2; want <= 4; want++) {
		CHECK(sample_queue_pop(&q, &h) && h.s->tid == want % 4 + (want == 4));
		free(h.s);
	}
	CHECK(!sample_queue_pop(&q, &h));
	CHECK_EQ(q.bytes, 0);
	sample_queue_free(&q);
}

static void test_string_pool(void)
{
	struct string_pool p;
	const char *a, *b, *c;
	char big[100000];

	string_pool_init(&p);
	a = string_pool_intern(&p, "java.lang.String", 16);
	b = string_pool_intern(&p, "java.lang.String!", 16);
	c = string_pool_intern(&p, "toString", 8);
	CHECK(a == b);
	CHECK_STR(a, "java.lang.String");
	CHECK_STR(c, "toString");
	memset(big, 'x', sizeof(big));
	CHECK(strlen(string_pool_intern(&p, big, sizeof(big))) == sizeof(big));
	string_pool_free(&p);
}

/* Text from other processes is kept escaped: no control character (C0,
 * DEL, C1 - U+009B is CSI), no bidirectional override, no invalid UTF-8
 * reaches an output; plain and non-ASCII text is kept as it is. */
static void test_safe_text(void)
{
	char out[64];

	safe_text(out, sizeof(out), "java.lang.String", 16);
	CHECK_STR(out, "java.lang.String");
	safe_text(out, sizeof(out), "Gr\xc3\xbc\xc3\x9f" "e", 7);
	CHECK_STR(out, "Gr\xc3\xbc\xc3\x9f" "e"); /* UTF-8 kept */
	safe_text(out, sizeof(out), "a\x1b]0;x\x07" "b", 8);
	CHECK_STR(out, "a\\x1b]0;x\\x07b");
	safe_text(out, sizeof(out), "\xc2\x9b" "31m\x7f", 6);
	CHECK_STR(out, "\\xc2\\x9b31m\\x7f");
	safe_text(out, sizeof(out), "\xe2\x80\xae" "abc", 6); /* RIGHT-TO-LEFT OVERRIDE */
	CHECK_STR(out, "\\xe2\\x80\\xaeabc");
	safe_text(out, sizeof(out), "\xff\xc0\x80\xed\xa0\x80", 6); /* invalid, overlong, surrogate */
	CHECK(strchr(out, (char)0xff) == NULL && strlen(out) == 24);
	safe_text(out, 8, "abcdefghijk", 11); /* cut to fit, terminated */
	CHECK_STR(out, "abcdefg");
	safe_text(out, 8, "ab\x01\x02", 4); /* an escape is never cut in half */
	CHECK_STR(out, "ab\\x01");
}

int main(void)
{
	RUN(test_wire_roundtrip);
	RUN(test_wire_overrun);
	RUN(test_u64_map_against_reference);
	RUN(test_big_alloc);
	RUN(test_sample_queue_bounded);
	RUN(test_sample_queue_trims_big_samples);
	RUN(test_sample_queue_trims_further);
	RUN(test_string_pool);
	RUN(test_safe_text);
	return CHECK_DONE();
}
