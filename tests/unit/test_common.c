/* SPDX-License-Identifier: GPL-2.0-only */
/* Shared building blocks: the bounded wire reader/writer, the u64 map
 * (against a reference model), the held-sample queue and the string pool. */
#include <stdlib.h>
#include <string.h>

#include "daemon/process/sample_queue.h"
#include "userspace/profile/string_pool.h"
#include "userspace/profile/trace.h"
#include "userspace/common/big_alloc.h"
#include "userspace/common/u64_map.h"
#include "userspace/common/wire.h"
#include "userspace/profile/safe_text.h"
#include "check.h"
#include "userspace/common/kv_file.h"
#include "userspace/common/pid_text.h"
#include "userspace/common/maps_line.h"

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
		CHECK_EQ(sample_queue_push(&q, s, s->stack_len, WAIT_CODE, i, &trimmed), 0); /* cut, not dropped */
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
		sample_queue_release(&q, &h);
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
		CHECK_EQ(sample_queue_push(&q, s, s->stack_len, WAIT_LAYOUT, 0, &trimmed), 0); /* cut, not dropped */
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
		sample_queue_release(&q, &h);
	}
	CHECK(at_min >= 8);
	/* Past the last level, the oldest go. */
	for (uint32_t i = 0; i < 40; i++) {
		s = make_sample(4 * SAMPLE_QUEUE_TRIM_BYTES, i);
		CHECK(sample_queue_push(&q, s, s->stack_len, WAIT_LAYOUT, 0, &trimmed) >= 0);
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
		CHECK_EQ(sample_queue_push(&q, s, s->stack_len, WAIT_CODE, 100 + i, &trimmed), 0);
		free(s);
	}
	s = make_sample(100, 3);
	CHECK_EQ(sample_queue_push(&q, s, s->stack_len, WAIT_CODE, 103, &trimmed), 1); /* the oldest made room */
	free(s);
	s = make_sample(10 * 1000, 9);
	CHECK_EQ(sample_queue_push(&q, s, s->stack_len, WAIT_UNKNOWN, 0, &trimmed), -1); /* bigger than the whole queue */
	free(s);
	CHECK_EQ(trimmed, 0); /* small samples are never cut */
	CHECK_EQ(sample_queue_len(&q), 3);
	/* Taken out and put back: order and bytes preserved, no copy. */
	CHECK(sample_queue_pop(&q, &h) && h.s->tid == 1 && h.key == 101);
	CHECK(sample_queue_requeue(&q, &h) == 0);
	for (uint32_t want = 2; want <= 4; want++) {
		CHECK(sample_queue_pop(&q, &h) && h.s->tid == want % 4 + (want == 4));
		sample_queue_release(&q, &h);
	}
	CHECK(!sample_queue_pop(&q, &h));
	CHECK_EQ(q.bytes, 0);
	sample_queue_free(&q);
}

/* A thread's stack as the sampler would copy it over time: a fixed
 * stretch of addresses whose deep part rarely changes. */
struct fake_thread {
	uint32_t tid;
	uint64_t top; /* the highest address copied */
	uint8_t bytes[3 * 8192];
};

static uint64_t rng_next(uint64_t *r)
{
	*r ^= *r << 13;
	*r ^= *r >> 7;
	*r ^= *r << 17;
	return *r;
}

/* A copy from a random sp up to the thread's top (now and then not all
 * the way), after mutating a few random bytes of the stack. */
static struct js_sample *fake_copy(struct fake_thread *t, uint64_t *r)
{
	uint32_t len = 8 + (uint32_t)(rng_next(r) % (sizeof(t->bytes) - 8)), cut = 0;
	struct js_sample *s;

	for (int i = (int)(rng_next(r) % 4); i > 0; i--)
		t->bytes[rng_next(r) % sizeof(t->bytes)] ^= (uint8_t)(1 + rng_next(r) % 255);
	if (rng_next(r) % 4 == 0)
		cut = (uint32_t)(rng_next(r) % (len / 2));
	len -= len % 8;
	s = make_sample(len - cut, t->tid);
	s->stack_addr = t->top - len;
	s->time_ns = rng_next(r);
	memcpy(s->stack, t->bytes + sizeof(t->bytes) - len, len - cut);
	return s;
}

/* Held copies of a thread share its base's chunks; each reads back byte
 * for byte as it was pushed, through pops, requeues, cuts and drops, and
 * the bytes held go back to 0 (under ASan: nothing leaks). */
static void test_sample_queue_shares_thread_chunks(void)
{
	enum { THREADS = 3, KEPT = 400 };
	static struct fake_thread th[THREADS];
	static struct js_sample *pushed[KEPT];
	struct sample_queue q;
	struct held_sample h;
	uint64_t r = 0x9e3779b97f4a7c15ull, total = 0;
	uint32_t trimmed = 0;
	size_t n = 0;

	for (int i = 0; i < THREADS; i++) {
		th[i].tid = 100 + (uint32_t)i;
		th[i].top = 0x7f0000100000ull + (uint64_t)i * 0x100000 + (uint64_t)i * 24; /* not chunk-aligned */
		for (size_t k = 0; k < sizeof(th[i].bytes); k++)
			th[i].bytes[k] = (uint8_t)rng_next(&r);
	}
	/* Room for everything: nothing cut, shared copies take far less. */
	sample_queue_init(&q, 64u << 20);
	for (n = 0; n < KEPT; n++) {
		pushed[n] = fake_copy(&th[n % THREADS], &r);
		pushed[n]->cpu = (uint32_t)n;
		total += sample_bytes(pushed[n]);
		CHECK_EQ(sample_queue_push(&q, pushed[n], pushed[n]->stack_len, WAIT_CODE, n + 1, &trimmed), 0);
	}
	CHECK_EQ(trimmed, 0);
	CHECK(q.shared_bytes > 0);
	CHECK(q.bytes * 2 < total);
	CHECK_EQ(q.peak_bytes, q.bytes);
	/* Half taken out and put back, then all read in order. */
	for (size_t i = 0; i < KEPT / 2; i++) {
		CHECK(sample_queue_pop(&q, &h));
		CHECK(sample_queue_requeue(&q, &h) == 0);
	}
	for (size_t i = 0; i < KEPT; i++) {
		const struct js_sample *v;
		size_t want = (i + KEPT / 2) % KEPT;

		CHECK(sample_queue_pop(&q, &h));
		v = sample_queue_view(&q, &h);
		CHECK(v != NULL && v->cpu == want && h.key == want + 1);
		CHECK(v && v->stack_len == pushed[want]->stack_len && v->stack_addr == pushed[want]->stack_addr &&
		      memcmp(v->stack, pushed[want]->stack, v->stack_len) == 0);
		sample_queue_release(&q, &h);
	}
	CHECK_EQ(q.bytes, 0);
	CHECK_EQ(q.bases.count, 0);

	/* A small queue: shared copies are cut to their top bytes (still the
	 * pushed bytes), then dropped oldest first. */
	q.max_bytes = 24 * 1024 + 8 * (sizeof(struct js_sample) + SAMPLE_QUEUE_TRIM_BYTES);
	for (size_t i = 0; i < KEPT; i++)
		CHECK(sample_queue_push(&q, pushed[i], pushed[i]->stack_len, WAIT_CODE, i + 1, &trimmed) >= 0);
	CHECK(trimmed > 0);
	CHECK(q.bytes <= q.max_bytes);
	while (sample_queue_pop(&q, &h)) {
		const struct js_sample *v = sample_queue_view(&q, &h), *p = pushed[h.key - 1];

		CHECK(v != NULL && v->stack_len <= p->stack_len && memcmp(v->stack, p->stack, v->stack_len) == 0);
		CHECK(v && (v->stack_len == p->stack_len) == !(v->flags & JS_SAMPLE_HELD_TRIMMED));
		sample_queue_release(&q, &h);
	}
	CHECK_EQ(q.bytes, 0);
	for (size_t i = 0; i < KEPT; i++)
		free(pushed[i]);
	sample_queue_free(&q);
}

/* A full queue cuts shared copies in place, and once every copy using a
 * base is cut, the base keeps only what they still read. */
static void test_sample_queue_cut_shrinks_base(void)
{
	enum { N = 12, LEN = 16384 };
	struct js_sample *pushed[N];
	struct sample_queue q;
	struct held_sample h;
	uint32_t trimmed = 0, cut_on_base = 0;

	/* Room for one base and the copies' own chunks, not for a second
	 * base: the thirteenth push must cut. */
	sample_queue_init(&q, LEN + N * (sizeof(struct js_sample) + 1024));
	for (int i = 0; i < N; i++) {
		pushed[i] = make_sample(LEN, 42);
		pushed[i]->stack_addr = 0x7f0000200000ull + (uint64_t)(i % 3) * 64;
		pushed[i]->cpu = (uint32_t)i;
		for (uint32_t k = 0; k < LEN; k++)
			pushed[i]->stack[k] = (uint8_t)(k * 7 + (k < 200 ? i : 0)); /* the same deep bytes */
		if (i)
			memcpy(pushed[i]->stack + 256, pushed[0]->stack + 256 + (pushed[i]->stack_addr - pushed[0]->stack_addr), LEN - 512);
		CHECK_EQ(sample_queue_push(&q, pushed[i], pushed[i]->stack_len, WAIT_LAYOUT, (uint64_t)i + 1, &trimmed), 0);
	}
	CHECK_EQ(trimmed, 0);
	CHECK(q.bytes < 2 * LEN);
	/* Other threads' big copies need room: the first thread's copies are
	 * cut, and once all are, their base shrinks. */
	struct js_sample *other = make_sample(LEN, 43);
	for (uint32_t t = 0; t < 4; t++) {
		other->tid = 43 + t;
		other->stack_addr = 0x7f0000900000ull + t * 0x100000ull;
		CHECK(sample_queue_push(&q, other, other->stack_len, WAIT_LAYOUT, 100, &trimmed) >= 0);
	}
	CHECK(trimmed > 0);
	CHECK(q.bytes <= q.max_bytes);
	while (sample_queue_pop(&q, &h)) {
		const struct js_sample *v = sample_queue_view(&q, &h);
		const struct js_sample *p = h.key == 100 ? other : pushed[h.key - 1];

		CHECK(v && v->stack_len <= p->stack_len);
		CHECK(v && (h.key == 100 || memcmp(v->stack, p->stack, v->stack_len) == 0));
		if (h.base && h.s->stack_len <= SAMPLE_QUEUE_TRIM_BYTES) {
			CHECK(h.base->len < LEN);
			cut_on_base++;
		}
		sample_queue_release(&q, &h);
	}
	CHECK(cut_on_base > 0);
	CHECK_EQ(q.bytes, 0);
	for (int i = 0; i < N; i++)
		free(pushed[i]);
	free(other);
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
static void test_pid_text(void)
{
	static const struct {
		const char *text;
		pid_t pid;
	} cases[] = {
		{.text = "1", .pid = 1},
		{.text = "4242", .pid = 4242},
		{.text = "4194304", .pid = PID_TEXT_MAX},
		{.text = "4194305", .pid = 0},
		{.text = "0", .pid = 0},
		{.text = "007", .pid = 0},
		{.text = "", .pid = 0},
		{.text = "-5", .pid = 0},
		{.text = "+5", .pid = 0},
		{.text = " 5", .pid = 0},
		{.text = "5 ", .pid = 0},
		{.text = "12a", .pid = 0},
		{.text = "99999999999999999999", .pid = 0},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (pid_from_text(cases[i].text) != cases[i].pid)
			printf("  pid_from_text(\"%s\") = %d\n", cases[i].text, (int)pid_from_text(cases[i].text));
		CHECK_EQ(pid_from_text(cases[i].text), cases[i].pid);
	}
	CHECK_EQ(pid_from_text(NULL), 0);
	CHECK_EQ(pid_from_text_n("12345", 3), 123); /* only the n bytes count */
}

struct kv_seen {
	char text[512];
};

static int kv_collect(void *ctx, const char *key, const char *value, char *err, size_t errlen)
{
	struct kv_seen *seen = ctx;
	size_t n = strlen(seen->text);

	if (strcmp(key, "bad") == 0) {
		snprintf(err, errlen, "bad: %s is wrong", value);
		return -1;
	}
	snprintf(seen->text + n, sizeof(seen->text) - n, "[%s=%s]", key, value);
	return 0;
}

static bool kv_secret(const char *key)
{
	return strcmp(key, "password") == 0;
}

/* The one reader of jsampled.conf and export.conf: comments, space,
 * quotes, values that are whole lines, and where an error is. */
static void test_kv_file(void)
{
	static const char text[] = "# a comment\n\n  key = value  \nglob = /usr/*/java   # trailing comment\n"
				   "hash = a#b\nquoted = \" spaced \"\npassword = p #not a comment\nempty =\n";
	struct kv_seen seen = {""};
	const struct kv_reader r = {.apply = kv_collect, .whole_line = kv_secret, .ctx = &seen};
	char err[256] = "", big[KV_LINE_MAX + 10];
	FILE *f = fmemopen((void *)text, sizeof(text) - 1, "r");

	CHECK(f != NULL);
	if (!f)
		return;
	CHECK_EQ(kv_file_read(f, "t.conf", &r, err, sizeof(err)), 0);
	fclose(f);
	CHECK_STR(seen.text, "[key=value][glob=/usr/*/java][hash=a#b][quoted= spaced ][password=p #not a comment][empty=]");

	f = fmemopen((void *)"ok = 1\nbad = x\nnever = 2\n", 25, "r");
	seen.text[0] = 0;
	CHECK_EQ(kv_file_read(f, "t.conf", &r, err, sizeof(err)), -1);
	fclose(f);
	CHECK_STR(err, "t.conf:2: bad: x is wrong");
	CHECK_STR(seen.text, "[ok=1]"); /* stops at the first error */

	f = fmemopen((void *)"ok = 1\nno equals sign\n", 23, "r");
	CHECK_EQ(kv_file_read(f, "t.conf", &r, err, sizeof(err)), -1);
	fclose(f);
	CHECK_STR(err, "t.conf:2: expected key = value");

	memset(big, 'x', sizeof(big) - 1);
	big[0] = 'k', big[1] = '=';
	big[sizeof(big) - 1] = 0;
	f = fmemopen(big, sizeof(big) - 1, "r");
	CHECK_EQ(kv_file_read(f, "t.conf", &r, err, sizeof(err)), -1);
	fclose(f);
	CHECK(strstr(err, "t.conf:1: line too long") == err);
}

static void test_maps_line(void)
{
	const char *lib = "7f10a000-7f10b000 r-xp 00002000 fd:01 131 /usr/lib/libc.so.6";
	const char *anon = "7ffd1000-7ffd2000 rw-p 00000000 00:00 0";
	const char *vdso = "7ffd3000-7ffd5000 r-xp 00000000 00:00 0                          [vdso]";
	char longpath[600];
	struct maps_line m;

	CHECK(maps_line_parse(lib, strlen(lib), &m));
	CHECK_EQ(m.lo, 0x7f10a000);
	CHECK_EQ(m.hi, 0x7f10b000);
	CHECK(strcmp(m.perms, "r-xp") == 0);
	CHECK_EQ(m.offset, 0x2000);
	CHECK_EQ(m.major, 0xfd);
	CHECK_EQ(m.minor, 1);
	CHECK_EQ(m.ino, 131);
	CHECK(m.path && m.path_len == 18 && memcmp(m.path, "/usr/lib/libc.so.6", 18) == 0);
	CHECK(maps_line_parse(anon, strlen(anon), &m));
	CHECK(m.path == NULL && m.path_len == 0);
	CHECK(maps_line_parse(vdso, strlen(vdso), &m));
	CHECK(m.path && m.path_len == 6 && memcmp(m.path, "[vdso]", 6) == 0);
	/* The path may be longer than the head the fields are read from. */
	snprintf(longpath, sizeof(longpath), "1000-2000 r--p 00000000 08:02 7 /%0540d", 0);
	CHECK(maps_line_parse(longpath, strlen(longpath), &m));
	CHECK_EQ(m.path_len, 541);
	/* Only the line's own bytes are read (no NUL after them). */
	CHECK(maps_line_parse(lib, 20, &m) == false);
	CHECK(maps_line_parse("garbage", 7, &m) == false);
	CHECK(maps_line_parse("", 0, &m) == false);
}

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
	RUN(test_sample_queue_shares_thread_chunks);
	RUN(test_sample_queue_cut_shrinks_base);
	RUN(test_string_pool);
	RUN(test_safe_text);
	RUN(test_pid_text);
	RUN(test_kv_file);
	RUN(test_maps_line);
	return CHECK_DONE();
}
