/* SPDX-License-Identifier: GPL-2.0-only */
/* Recordings: what is written is read back byte for byte, with samples
 * whose stack bottoms repeat their thread's previous sample written as
 * what changed (recording_stacks.h), and a file that names a stack it
 * never showed is corrupt. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "daemon/record/recording.h"
#include "daemon/record/recording_stacks.h"
#include "userspace/common/wire.h"
#include "check.h"

#define THREADS 300 /* more than the table's slots: some threads share one */
#define EVENTS 6000

struct written {
	uint8_t type;
	uint32_t pid;
	uint64_t t;
	uint32_t len;
	uint8_t *payload;
};

static uint64_t rnd_state = 42;
static uint32_t rnd(uint32_t n)
{
	rnd_state = rnd_state * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(rnd_state >> 33) % n;
}

struct thread_stack {
	uint64_t end;
	uint8_t bytes[8192]; /* the thread's stack, its last byte at end - 1 */
};

/* A sample of thread k: the bottom of its stack mostly as before, a few
 * words changed near the top, sometimes deeper, sometimes another end. */
static struct js_sample *make_sample(struct thread_stack *th, uint32_t k, uint32_t *len_out)
{
	uint32_t len = 8 * (1 + rnd(1024)); /* up to 8 KiB */
	struct js_sample *s;

	if (rnd(50) == 0)
		th->end += 4096; /* a copy that ends elsewhere shares nothing */
	for (uint32_t i = 0, n = rnd(8); i < n; i++)
		th->bytes[sizeof(th->bytes) - len + rnd(len < 256 ? len : 256)] = (uint8_t)rnd(256);
	if (rnd(10) == 0)
		th->bytes[sizeof(th->bytes) - 1 - rnd(len)] ^= 0xff;
	if (rnd(200) == 0)
		len = JS_MAX_FRAGMENT_BYTES + 8; /* longer than the table keeps */
	else if (rnd(100) == 0)
		len = 0; /* a thread with no stack to copy (a JVM-internal one) */
	s = calloc(1, sizeof(*s) + len);
	s->pid = 1000 + k % 3;
	s->tid = 5000 + k;
	s->time_ns = rnd(1u << 30);
	s->stack_len = len;
	s->stack_addr = th->end - len;
	if (len <= sizeof(th->bytes))
		memcpy(s->stack, th->bytes + sizeof(th->bytes) - len, len);
	*len_out = (uint32_t)sizeof(*s) + len;
	return s;
}

static void test_round_trip(void)
{
	char path[] = "/tmp/jsrec-test-XXXXXX";
	int fd = mkstemp(path);
	struct thread_stack *threads = calloc(THREADS, sizeof(*threads));
	struct written *w = calloc(EVENTS, sizeof(*w));
	struct recording *r;
	uint64_t shared_written;

	CHECK(fd >= 0);
	close(fd);
	for (uint32_t k = 0; k < THREADS; k++) {
		threads[k].end = 0x7f0000000000ull + (uint64_t)k * (1u << 20);
		for (size_t i = 0; i < sizeof(threads[k].bytes); i++)
			threads[k].bytes[i] = (uint8_t)rnd(256);
	}
	r = recording_create(path, 1, false);
	CHECK(r != NULL);
	for (uint32_t e = 0; r && e < EVENTS; e++) {
		uint32_t kind = rnd(20);

		w[e].t = e;
		if (kind == 0) { /* something else between samples */
			w[e].type = REC_BATCH;
			w[e].pid = 1000;
			w[e].len = rnd(100);
			w[e].payload = malloc(w[e].len + 1);
			for (uint32_t i = 0; i < w[e].len; i++)
				w[e].payload[i] = (uint8_t)rnd(256);
		} else {
			uint32_t k = rnd(kind < 15 ? 8 : THREADS); /* a few busy threads, many others */
			struct js_sample *s = make_sample(&threads[k], k, &w[e].len);

			w[e].type = REC_SAMPLE;
			w[e].pid = s->pid;
			if (kind == 1)
				w[e].len -= 8; /* a record shorter than its stack_len says: kept as it is */
			w[e].payload = (uint8_t *)s;
		}
		recording_write_at(r, w[e].type, (pid_t)w[e].pid, w[e].t, w[e].payload, w[e].len);
	}
	CHECK_EQ(recording_error(r), 0);
	shared_written = recording_shared_bytes(r);
	/* The busy threads' bottoms repeat: most of their bytes are spared. */
	CHECK(shared_written > 0);
	recording_close(r);

	r = recording_open(path);
	CHECK(r != NULL);
	for (uint32_t e = 0; r && e < EVENTS; e++) {
		uint8_t type;
		pid_t pid;
		uint64_t t;
		const uint8_t *payload;
		uint32_t len;
		int rc = recording_next(r, &type, &pid, &t, &payload, &len);

		CHECK_EQ(rc, 1);
		if (rc != 1)
			break;
		CHECK_EQ(type, w[e].type);
		CHECK_EQ(pid, w[e].pid);
		CHECK_EQ(t, w[e].t);
		CHECK_EQ(len, w[e].len);
		CHECK(len == w[e].len && memcmp(payload, w[e].payload, len) == 0);
	}
	if (r) {
		uint8_t type;
		pid_t pid;
		uint64_t t;
		const uint8_t *payload;
		uint32_t len;

		CHECK_EQ(recording_next(r, &type, &pid, &t, &payload, &len), 0);
		CHECK_EQ(recording_shared_bytes(r), shared_written);
		recording_close(r);
	}
	for (uint32_t e = 0; e < EVENTS; e++)
		free(w[e].payload);
	free(w);
	free(threads);
	unlink(path);
}

/* A file of the given magic and raw entries, compressed with zstd. */
static void write_raw(const char *path, const char *magic, const struct wbuf *entries)
{
	size_t n = 8 + entries->len, cap = ZSTD_compressBound(n);
	uint8_t *plain = malloc(n), *packed = malloc(cap);
	size_t z;
	FILE *f = fopen(path, "wb");

	memcpy(plain, magic, 8);
	memcpy(plain + 8, entries->data, entries->len);
	z = ZSTD_compress(packed, cap, plain, n, 1);
	CHECK(!ZSTD_isError(z) && f);
	if (f) {
		fwrite(packed, 1, z, f);
		fclose(f);
	}
	free(plain);
	free(packed);
}

static void raw_entry(struct wbuf *b, uint8_t type, uint32_t pid, const void *payload, uint32_t len)
{
	uint64_t t = 1;

	wbuf_put(b, &type, 1);
	wbuf_put(b, &pid, 4);
	wbuf_put(b, &t, 8);
	wbuf_put(b, &len, 4);
	wbuf_put(b, payload, len);
}

/* The first entry read from a file of one raw entry (and a REC_SAMPLE
 * before it, if first). */
static int read_entries(const char *magic, const struct js_sample *first, const uint8_t *payload, uint32_t len,
			uint8_t type)
{
	char path[] = "/tmp/jsrec-raw-XXXXXX";
	int fd = mkstemp(path), rc = -2;
	struct wbuf b;
	struct recording *r;

	close(fd);
	wbuf_init(&b);
	if (first)
		raw_entry(&b, REC_SAMPLE, first->pid, first, (uint32_t)sizeof(*first) + first->stack_len);
	raw_entry(&b, type, 1000, payload, len);
	write_raw(path, magic, &b);
	r = recording_open(path);
	CHECK(r != NULL);
	for (int i = 0; r && i < (first ? 2 : 1); i++) {
		uint8_t t8;
		pid_t pid;
		uint64_t t;
		const uint8_t *p;
		uint32_t l;

		rc = recording_next(r, &t8, &pid, &t, &p, &l);
	}
	recording_close(r);
	wbuf_free(&b);
	unlink(path);
	return rc;
}

static void test_shared_entries_checked(void)
{
	struct {
		struct js_sample h;
		uint8_t stack[256];
	} whole = {.h = {.pid = 1000, .tid = 7, .stack_addr = 0x10000, .stack_len = 256}};
	struct {
		struct js_sample h;
		uint32_t shared;
		uint8_t top[64];
	} delta = {.h = whole.h, .shared = 192};
	uint32_t dlen = (uint32_t)(sizeof(delta.h) + 4 + 64);

	memset(whole.stack, 0xab, sizeof(whole.stack));
	/* A shared bottom of a stack the file showed: read back whole. */
	CHECK_EQ(read_entries(RECORDING_MAGIC, &whole.h, (const uint8_t *)&delta, dlen, REC_SAMPLE_SHARED), 1);
	/* Of a thread the file never showed: corrupt. */
	CHECK_EQ(read_entries(RECORDING_MAGIC, NULL, (const uint8_t *)&delta, dlen, REC_SAMPLE_SHARED), -1);
	/* The same thread, but its stack ends elsewhere now: corrupt. */
	delta.h.stack_addr += 8;
	CHECK_EQ(read_entries(RECORDING_MAGIC, &whole.h, (const uint8_t *)&delta, dlen, REC_SAMPLE_SHARED), -1);
	delta.h.stack_addr -= 8;
	/* More shared than the stack holds, or a length that does not add up. */
	delta.shared = 300;
	CHECK_EQ(read_entries(RECORDING_MAGIC, &whole.h, (const uint8_t *)&delta, dlen, REC_SAMPLE_SHARED), -1);
	delta.shared = 192;
	CHECK_EQ(read_entries(RECORDING_MAGIC, &whole.h, (const uint8_t *)&delta, dlen - 8, REC_SAMPLE_SHARED), -1);
	CHECK_EQ(read_entries(RECORDING_MAGIC, &whole.h, (const uint8_t *)&delta, 10, REC_SAMPLE_SHARED), -1);
	/* Files of the first format are read. */
	CHECK_EQ(read_entries(RECORDING_MAGIC_V1, NULL, (const uint8_t *)&whole, (uint32_t)sizeof(whole), REC_SAMPLE), 1);
}

/* The daemon's --record file: new, 0600, never through a link (it holds
 * raw stacks of every profiled process). */
static void test_create_is_private(void)
{
	char dir[] = "/tmp/jsampled-rec-XXXXXX", path[128], link[128], target[128];
	struct recording *r;
	struct stat st;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/new.jsrec", dir);
	snprintf(link, sizeof(link), "%s/link.jsrec", dir);
	snprintf(target, sizeof(target), "%s/target", dir);
	r = recording_create(path, 1, true);
	CHECK(r != NULL);
	recording_close(r);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
	errno = 0;
	CHECK(recording_create(path, 1, true) == NULL && errno == EEXIST);
	CHECK(symlink(target, link) == 0);
	CHECK(recording_create(link, 1, true) == NULL);
	CHECK(recording_create(link, 1, false) == NULL);
	CHECK(lstat(target, &st) != 0); /* the link's target was not created */
	unlink(link);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	RUN(test_create_is_private);
	RUN(test_round_trip);
	RUN(test_shared_entries_checked);
	return CHECK_DONE();
}
