/* SPDX-License-Identifier: GPL-2.0-only */
/* Native unwinding (daemon/native/native_unwind.c) on a real stack copy of this
 * very process: frame_a -> frame_b -> frame_c, where frame_c takes its
 * registers and copies its own stack into a js_sample, as the BPF sampler
 * would; then libdwfl walks that copy, with this process's maps and vDSO
 * given as jsampled gives them. Also: empty copies, garbage, the code
 * cache stop, libc's symbols, the cost per walk and per (cached)
 * symbolisation, the limits on crafted ELF files, and the native helper's
 * request path (daemon/native/native_helper.c) from its messages to its answer. */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>
#include <unistd.h>

#include <elf.h>
#include <fcntl.h>

#include "daemon/native/native_helper.h"
#include "daemon/native/native_protocol.h"
#include "daemon/native/native_unwind.h"
#include "daemon/native/perf_map.h"
#include "userspace/common/wire.h"
#include "check.h"

/* Real calls to real functions: not inlined, not specialised clones. */
#if defined(__clang__)
#define FRAME_FN __attribute__((noinline))
#else
#define FRAME_FN __attribute__((noinline, noclone))
#endif

#define COPY_BYTES (64u * 1024u)
#define MAX_FRAMES 64

static struct js_sample *sample;
static uint64_t stack_end;

/* The end of the main thread's stack, from /proc/self/maps. */
static uint64_t find_stack_end(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	uint64_t end = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi;

		if (strstr(line, "[stack]") && sscanf(line, "%llx-%llx", &lo, &hi) == 2)
			end = hi;
	}
	fclose(f);
	return end;
}

/* A copy of our own live stack: not through memcpy, whose ASan checks
 * would trip on the poisoned red zones around other frames' locals. */
__attribute__((noinline, no_sanitize_address)) static void copy_stack(uint8_t *dst, uint64_t src, size_t len)
{
	const volatile uint8_t *p = (const volatile uint8_t *)(uintptr_t)src;

	for (size_t i = 0; i < len; i++)
		dst[i] = p[i];
}

/* Takes the registers the sampler keeps and copies the stack from rsp up. */
FRAME_FN static int frame_c(int x)
{
	uint64_t r[JS_NREGS];
	uint64_t len;

	memset(r, 0, sizeof(r));
	__asm__ volatile("lea 0(%%rip), %%rax\n\t"
			 "mov %%rax, 0(%0)\n\t"
			 "mov %%rsp, 8(%0)\n\t"
			 "mov %%rbp, 16(%0)\n\t"
			 "mov %%rbx, 32(%0)\n\t"
			 "mov %%rcx, 40(%0)\n\t"
			 "mov %%rdx, 48(%0)\n\t"
			 "mov %%rsi, 56(%0)\n\t"
			 "mov %%rdi, 64(%0)\n\t"
			 "mov %%r8, 72(%0)\n\t"
			 "mov %%r9, 80(%0)\n\t"
			 "mov %%r10, 88(%0)\n\t"
			 "mov %%r11, 96(%0)\n\t"
			 "mov %%r12, 104(%0)\n\t"
			 "mov %%r13, 112(%0)\n\t"
			 "mov %%r14, 120(%0)\n\t"
			 "mov %%r15, 128(%0)\n\t"
			 :
			 : "r"(r)
			 : "rax", "memory");
	len = stack_end > r[JS_REG_SP] ? stack_end - r[JS_REG_SP] : 0;
	if (len > COPY_BYTES)
		len = COPY_BYTES;
	memcpy(sample->regs, r, sizeof(r));
	sample->pid = (uint32_t)getpid();
	sample->tid = (uint32_t)getpid();
	sample->stack_addr = r[JS_REG_SP];
	sample->stack_end = stack_end;
	sample->stack_len = (uint32_t)len;
	copy_stack(sample->stack, r[JS_REG_SP], len);
	__asm__ volatile("" ::: "memory");
	return x + 1;
}

/* The volatile use after each call keeps them calls, not tail jumps. */
FRAME_FN static int frame_b(int x)
{
	volatile int y = frame_c(x + 1);
	return y + 1;
}

FRAME_FN static int frame_a(int x)
{
	volatile int y = frame_b(x + 1);
	return y + 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int find_name(char names[][256], int n, int from, const char *want)
{
	for (int i = from; i < n; i++)
		if (strcmp(names[i], want) == 0)
			return i;
	return -1;
}

/* /proc/self/maps, whole (the caller frees it). */
static char *self_maps(size_t *len)
{
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	size_t n = 0, cap = 1 << 16;
	char *buf = malloc(cap);
	ssize_t r;

	if (fd < 0 || !buf) {
		free(buf);
		return NULL;
	}
	while ((r = read(fd, buf + n, cap - n)) > 0)
		if ((n += (size_t)r) == cap && !(buf = realloc(buf, cap *= 2)))
			break;
	close(fd);
	*len = n;
	return buf;
}

/* Our vDSO's size, from the maps. */
static size_t vdso_len(const char *maps, size_t len)
{
	const char *v = memmem(maps, len, "[vdso]", 6), *line;
	unsigned long long lo, hi;

	if (!v)
		return 0;
	for (line = v; line > maps && line[-1] != '\n'; line--)
		;
	return sscanf(line, "%llx-%llx", &lo, &hi) == 2 ? (size_t)(hi - lo) : 0;
}

/* An unwinder of this process, told what jsampled tells its helper: the
 * maps, the vDSO image; files from this machine. */
static struct native_unwinder *own_unwinder(bool with_vdso)
{
	size_t len = 0;
	char *maps = self_maps(&len);
	struct native_unwinder *u = maps ? native_unwinder_new(getpid(), maps, len, &native_files_host) : NULL;
	uint64_t vdso = getauxval(AT_SYSINFO_EHDR);
	size_t vlen = maps ? vdso_len(maps, len) : 0;

	if (u && with_vdso && vdso && vlen)
		CHECK_EQ(native_unwinder_set_vdso(u, (const void *)(uintptr_t)vdso, vlen), 0);
	free(maps);
	return u;
}

static void test_own_stack(void)
{
	struct native_unwinder *u = own_unwinder(true);
	uint64_t pcs[MAX_FRAMES];
	char names[MAX_FRAMES][256];
	int n, ic, ib, ia, im;

	CHECK(u != NULL);
	if (!u)
		return;
	CHECK(sample->stack_len > 0);
	double t0 = now_s(), t1, t2;

	n = native_unwind(u, sample, 0, 0, pcs, MAX_FRAMES);
	t1 = now_s();
	CHECK(n >= 4);
	CHECK(n > 0 && pcs[0] == sample->regs[JS_REG_IP]);
	for (int i = 0; i < n; i++)
		native_symbolize(u, pcs[i], names[i], sizeof(names[i]));
	t2 = now_s();
	for (int i = 0; i < n; i++)
		printf("  #%d %#llx %s\n", i, (unsigned long long)pcs[i], names[i]);
	printf("  first walk (loads the ELF files, CFI): %.1f us; first symbolisation of its %d pcs "
	       "(symbol tables): %.1f us\n", (t1 - t0) * 1e6, n, (t2 - t1) * 1e6);
	ic = find_name(names, n, 0, "frame_c");
	ib = find_name(names, n, ic + 1, "frame_b");
	ia = find_name(names, n, ib + 1, "frame_a");
	im = find_name(names, n, ia + 1, "main");
	CHECK(ic == 0);
	CHECK(ib == 1);
	CHECK(ia == 2);
	CHECK(im > ia);

	/* The code cache stop: a range holding frame_b's pc ends the walk
	 * after frame_c; one holding the first pc gives nothing. */
	if (n >= 2) {
		uint64_t pcs2[MAX_FRAMES];

		CHECK_EQ(native_unwind(u, sample, pcs[1], pcs[1] + 1, pcs2, MAX_FRAMES), 1);
		CHECK_EQ(pcs2[0], pcs[0]);
		CHECK_EQ(native_unwind(u, sample, pcs[0], pcs[0] + 1, pcs2, MAX_FRAMES), 0);
		CHECK_EQ(native_unwind(u, sample, 0, 0, pcs2, 2), 2);
		CHECK_EQ(native_unwind(u, sample, 0, 0, pcs2, 0), 0);
	}

	/* Cost: walks of the same sample, then cached symbolisation. */
	{
		const int iters = 10000;
		uint64_t pcs2[MAX_FRAMES];
		double t0 = now_s(), t1;
		long frames = 0;
		char buf[256];

		for (int i = 0; i < iters; i++)
			frames += native_unwind(u, sample, 0, 0, pcs2, MAX_FRAMES);
		t1 = now_s();
		printf("  native_unwind: %.2f us per walk (%d frames), %.3f us per frame\n",
		       (t1 - t0) * 1e6 / iters, n, (t1 - t0) * 1e6 / (double)frames);
		t0 = now_s();
		for (int i = 0; i < iters; i++)
			for (int k = 0; k < n; k++)
				native_symbolize(u, pcs[k], buf, sizeof(buf));
		t1 = now_s();
		printf("  native_symbolize (cached): %.3f us per pc\n", (t1 - t0) * 1e6 / ((double)iters * n));
	}
	{
		const struct native_unwind_stats *st = native_unwind_stats(u);

		printf("  stats: walks %llu frames %llu errors %llu reports %llu\n", (unsigned long long)st->walks,
		       (unsigned long long)st->frames, (unsigned long long)st->errors,
		       (unsigned long long)st->reports);
		CHECK(st->walks >= 10004);
		CHECK(st->frames >= 10000ull * 4);
		CHECK(st->reports >= 1);
	}
	native_unwinder_free(u);
}

/* The first-frame-only cases, and copies full of garbage. */
static void test_bad_input(void)
{
	struct native_unwinder *u = own_unwinder(true);
	struct js_sample *s = calloc(1, sizeof(*s) + 4096);
	uint64_t pcs[MAX_FRAMES];
	int n;

	CHECK(u != NULL && s != NULL);
	if (!u || !s) {
		native_unwinder_free(u);
		free(s);
		return;
	}
	/* A copy of length 0, registers of the real sample. */
	memcpy(s, sample, sizeof(*s));
	s->stack_len = 0;
	n = native_unwind(u, s, 0, 0, pcs, MAX_FRAMES);
	CHECK(n <= 1);
	CHECK(n == 1 && pcs[0] == sample->regs[JS_REG_IP]);

	/* All registers zero. */
	memset(s, 0, sizeof(*s));
	CHECK_EQ(native_unwind(u, s, 0, 0, pcs, MAX_FRAMES), 0);

	/* Random registers and a random stack. */
	srand(1);
	for (int round = 0; round < 2000; round++) {
		for (int i = 0; i < JS_NREGS; i++)
			s->regs[i] = ((uint64_t)rand() << 33) ^ ((uint64_t)rand() << 7) ^ (uint64_t)rand();
		if (round & 1) { /* plausible: pc in our code, sp/bp in the copy */
			s->regs[JS_REG_IP] = sample->regs[JS_REG_IP] + (uint64_t)(rand() % 4096) - 2048;
			s->stack_addr = 0x7ff000000000ull;
			s->regs[JS_REG_SP] = s->stack_addr + (uint64_t)(rand() % 4096);
			s->regs[JS_REG_BP] = s->stack_addr + (uint64_t)(rand() % 4096);
		} else {
			s->stack_addr = s->regs[JS_REG_SP] & ~7ull;
		}
		s->stack_len = (uint32_t)(rand() % 4097);
		for (uint32_t i = 0; i < 4096; i++)
			s->stack[i] = (uint8_t)rand();
		if (round % 3 == 0) /* fill with pointers into the copy */
			for (uint32_t i = 0; i + 8 <= 4096; i += 8) {
				uint64_t v = s->stack_addr + (uint64_t)(rand() % 4200);
				memcpy(s->stack + i, &v, 8);
			}
		n = native_unwind(u, s, 0, 0, pcs, MAX_FRAMES);
		CHECK(n >= 0 && n <= MAX_FRAMES);
	}
	{
		char buf[64];

		/* pc in no module, tiny buffers */
		CHECK_STR(native_symbolize(u, 0x10, buf, sizeof(buf)), "[unknown]");
		CHECK_STR(native_symbolize(u, 0, buf, sizeof(buf)), "[unknown]");
		CHECK_STR(native_symbolize(u, 0x10, buf, 4), "[un");
		CHECK_STR(native_symbolize(NULL, 0x10, buf, sizeof(buf)), "[unknown]");
	}
	CHECK_EQ(native_unwind(NULL, sample, 0, 0, pcs, MAX_FRAMES), 0);
	CHECK(native_unwind_stats(NULL)->walks == 0);
	native_unwinder_free(u);
	native_unwinder_free(NULL);
	free(s);
}

/* No mappings, no unwinder; mappings that name nothing real, no frames. */
static void test_no_maps(void)
{
	static const char junk[] = "not maps at all\n7f00-7f01 r-xp 0 0:0 0 /no/such/file\n";
	struct native_unwinder *u;
	uint64_t pcs[MAX_FRAMES];

	CHECK(native_unwinder_new(getpid(), "", 0, &native_files_host) == NULL);
	CHECK(native_unwinder_new(getpid(), NULL, 0, &native_files_host) == NULL);
	CHECK(native_unwinder_new(0, junk, sizeof(junk) - 1, &native_files_host) == NULL);
	CHECK(native_unwinder_new(-1, junk, sizeof(junk) - 1, &native_files_host) == NULL);
	CHECK(native_unwinder_new(getpid(), junk, sizeof(junk) - 1, NULL) == NULL);
	/* The rbp chain still walks the copy; nothing has a name. */
	u = native_unwinder_new(getpid(), junk, sizeof(junk) - 1, &native_files_host);
	if (u) {
		char buf[64];
		int n = native_unwind(u, sample, 0, 0, pcs, MAX_FRAMES);

		CHECK(n >= 1 && pcs[0] == sample->regs[JS_REG_IP]);
		CHECK_STR(native_symbolize(u, pcs[0], buf, sizeof(buf)), "[unknown]");
		CHECK(native_unwinder_take_unknown(u));
	}
	native_unwinder_free(u);
}

static void test_libc_symbols(void)
{
	struct native_unwinder *u = own_unwinder(true);
	void *getpid_fn = dlsym(RTLD_DEFAULT, "getpid");
	void *write_fn = dlsym(RTLD_DEFAULT, "write");
	char buf[256], expect[256];
	Dl_info info;

	CHECK(u != NULL && getpid_fn != NULL && write_fn != NULL);
	if (!u || !getpid_fn || !write_fn) {
		native_unwinder_free(u);
		return;
	}
	native_symbolize(u, (uint64_t)(uintptr_t)getpid_fn + 1, buf, sizeof(buf));
	printf("  getpid+1: %s\n", buf);
	CHECK(strstr(buf, "getpid") != NULL);
	native_symbolize(u, (uint64_t)(uintptr_t)write_fn + 2, buf, sizeof(buf));
	printf("  write+2: %s\n", buf);
	CHECK(strstr(buf, "write") != NULL);
	/* Cached: the same answer again. */
	native_symbolize(u, (uint64_t)(uintptr_t)write_fn + 2, expect, sizeof(expect));
	CHECK_STR(expect, buf);
	/* libc's ELF header: no symbol there, the file's name (one frame
	 * name per library for its unnamed code). */
	if (dladdr(getpid_fn, &info) && info.dli_fbase && info.dli_fname) {
		const char *base = strrchr(info.dli_fname, '/');

		snprintf(expect, sizeof(expect), "%s", base ? base + 1 : info.dli_fname);
		native_symbolize(u, (uint64_t)(uintptr_t)info.dli_fbase + 0x10, buf, sizeof(buf));
		printf("  libc base+0x10: %s\n", buf);
		CHECK_STR(buf, expect);
	}
	/* The vDSO: a module (its ELF from the image given), with symbols. */
	{
		uint64_t vdso = getauxval(AT_SYSINFO_EHDR);

		if (vdso) {
			native_symbolize(u, vdso + 0x10, buf, sizeof(buf));
			printf("  vdso+0x10: %s\n", buf);
			CHECK_STR(buf, "[vdso]"); /* its ELF header: no symbol */
		}
	}
	/* A C++ name from libstdc++ (linked for the demangler), if mapped. */
	{
		void *fn = dlsym(RTLD_DEFAULT, "_ZNSt9exceptionD1Ev"); /* std::exception::~exception() */

		if (fn) {
			native_symbolize(u, (uint64_t)(uintptr_t)fn, buf, sizeof(buf));
			printf("  _ZNSt9exceptionD1Ev: %s\n", buf);
			CHECK(strncmp(buf, "std::exception::~exception", 26) == 0);
		}
	}
	native_unwinder_free(u);
}

/* A process that maps a library's file itself, just below the library's
 * load (libelf reading libc in this very program did, in some runs): the
 * library's symbols still match its pcs. The maps get such a line in
 * front of libc's first mapping. */
static void test_own_mapping_of_a_library(void)
{
	void *getpid_fn = dlsym(RTLD_DEFAULT, "getpid");
	size_t len = 0, at;
	char *maps = self_maps(&len), *fixed = NULL, key[32], extra[600], buf[256];
	const char *line, *path;
	unsigned long long base;
	struct native_unwinder *u = NULL;
	Dl_info info;

	CHECK(maps != NULL && getpid_fn != NULL && dladdr(getpid_fn, &info) && info.dli_fbase);
	if (!maps || !getpid_fn || !info.dli_fbase)
		goto cleanup;
	base = (unsigned long long)(uintptr_t)info.dli_fbase;
	snprintf(key, sizeof(key), "%llx-", base);
	line = strstr(maps, key);
	CHECK(line != NULL && (line == maps || line[-1] == '\n'));
	if (!line)
		goto cleanup;
	at = (size_t)(line - maps);
	path = memchr(line, '/', len - at);
	{
		const char *fields = strchr(line, ' '), *nl = memchr(line, '\n', len - at);
		int flen;

		CHECK(fields && path && nl && path < nl);
		if (!fields || !path || !nl || path > nl)
			goto cleanup;
		/* " r--p 00000000 dev ino   /path": libc's own first line's fields */
		flen = (int)(nl - fields);
		snprintf(extra, sizeof(extra), "%llx-%llx%.*s\n", base - 0x200000, base, flen, fields);
	}
	fixed = malloc(len + strlen(extra));
	CHECK(fixed != NULL);
	if (!fixed)
		goto cleanup;
	memcpy(fixed, maps, at);
	memcpy(fixed + at, extra, strlen(extra));
	memcpy(fixed + at + strlen(extra), maps + at, len - at);
	u = native_unwinder_new(getpid(), fixed, len + strlen(extra), &native_files_host);
	CHECK(u != NULL);
	if (!u)
		goto cleanup;
	native_symbolize(u, (uint64_t)(uintptr_t)getpid_fn + 1, buf, sizeof(buf));
	printf("  getpid+1 with libc's file mapped below it: %s\n", buf);
	CHECK(strstr(buf, "getpid") != NULL);
cleanup:
	native_unwinder_free(u);
	free(fixed);
	free(maps);
}

/* A library loaded after the unwinder got the maps: a pc in it is in no
 * module, which the unwinder says once (jsampled reads the maps again);
 * with the new maps it is named. The library is the tests' own
 * (tests/unit/dlopen_probe.c, built next to this program), so nothing has
 * mapped it before. */
static void test_dlopen_rereport(void)
{
	static const char want[] = "jsampled_dlopen_probe";
	struct native_unwinder *u = own_unwinder(false);
	char exe[512], path[600], buf[256], *maps = NULL;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;
	void *h = NULL, *fn = NULL;
	size_t len;

	CHECK(u != NULL);
	CHECK(n > 0);
	if (!u || n <= 0)
		goto cleanup;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
	snprintf(path, sizeof(path), "%s/libjsdlopen_probe.so", exe);
	CHECK(dlopen(path, RTLD_LAZY | RTLD_NOLOAD) == NULL); /* not mapped yet */
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		printf("  dlopen %s: %s\n", path, dlerror());
	CHECK(h != NULL);
	fn = h ? dlsym(h, want) : NULL;
	CHECK(fn != NULL);
	if (!fn)
		goto cleanup;
	CHECK(!native_unwinder_take_unknown(u));
	CHECK_EQ(native_unwind_stats(u)->reports, 1);
	CHECK_STR(native_symbolize(u, (uint64_t)(uintptr_t)fn, buf, sizeof(buf)), "[unknown]");
	CHECK(native_unwinder_take_unknown(u));
	CHECK(!native_unwinder_take_unknown(u)); /* said once */
	maps = self_maps(&len);
	CHECK(maps && native_unwinder_set_maps(u, maps, len) == 0);
	native_symbolize(u, (uint64_t)(uintptr_t)fn, buf, sizeof(buf));
	printf("  after dlopen and new maps: %s\n", buf);
	CHECK_STR(buf, want);
	CHECK_EQ(native_unwind_stats(u)->reports, 2);
cleanup:
	free(maps);
	native_unwinder_free(u);
	if (h)
		dlclose(h);
}

/* /tmp/perf-PID.map lines: hex start and size, a name with spaces; bad
 * lines skipped and counted; of two overlapping entries the later line
 * wins; a failed load leaves the map as it was. */
static void test_perf_map(void)
{
	static const char text[] = "1000 100 first one\n"
				   "not a line\n"
				   "2000 0 empty\n"
				   "ffffffffffffff00 200 wraps\n"
				   "1080 10 later inside first\n"
				   "3000 20 LazyCompile:*foo /app/x.js:1\n"
				   "4000 10\n";
	struct perf_map m = {0};
	int fds[2];

	CHECK(pipe(fds) == 0);
	CHECK(write(fds[1], text, sizeof(text) - 1) == (ssize_t)(sizeof(text) - 1));
	close(fds[1]);
	CHECK(perf_map_load(&m, fds[0]) == 0);
	close(fds[0]);
	CHECK(m.n == 3);
	CHECK(m.skipped == 4);
	CHECK(perf_map_find(&m, 0xfff) == NULL);
	CHECK(perf_map_find(&m, 0x1000) && strcmp(perf_map_find(&m, 0x1000), "first one") == 0);
	CHECK(perf_map_find(&m, 0x1085) && strcmp(perf_map_find(&m, 0x1085), "later inside first") == 0);
	CHECK(perf_map_find(&m, 0x1090) && strcmp(perf_map_find(&m, 0x1090), "first one") == 0);
	CHECK(perf_map_find(&m, 0x1100) == NULL);
	CHECK(perf_map_find(&m, 0x301f) && strcmp(perf_map_find(&m, 0x301f), "LazyCompile:*foo /app/x.js:1") == 0);
	CHECK(perf_map_load(&m, -1) == -1 && m.n == 3);
	perf_map_free(&m);
	CHECK(perf_map_find(&m, 0x1000) == NULL);
}

/* vDSO frames are named from the image jsampled gives (it reads it from
 * the process's memory, and records it for replays); without it, only as
 * "[vdso]". */
static void test_vdso_image(void)
{
	struct native_unwinder *with = own_unwinder(true), *bare = own_unwinder(false);
	uint64_t vdso = getauxval(AT_SYSINFO_EHDR);
	char got[256];
	int named = 0;
	size_t len = 0, vlen;
	char *maps = self_maps(&len);

	vlen = maps ? vdso_len(maps, len) : 0;
	CHECK(with != NULL && bare != NULL && vdso != 0 && vlen >= 4096);
	for (uint64_t off = 0; with && bare && vdso && off < vlen; off += 16) {
		native_symbolize(with, vdso + off, got, sizeof(got));
		if (strcmp(got, "[vdso]") == 0)
			continue;
		named++;
		native_symbolize(bare, vdso + off, got, sizeof(got));
		CHECK_STR(got, "[vdso]");
	}
	printf("  %d vDSO pcs named from the image, none without it\n", named);
	CHECK(named > 0);
	CHECK_EQ(native_unwinder_set_vdso(with, (const void *)(uintptr_t)vdso, vlen), 0); /* the first stays */
	CHECK_EQ(native_unwinder_set_vdso(with, (const void *)(uintptr_t)vdso, NATIVE_VDSO_MAX_BYTES + 1), -1);
	native_unwinder_free(with);
	native_unwinder_free(bare);
	free(maps);
}

/* JIT code in anonymous memory: named from the perf map given. */
static void test_perf_map_names(void)
{
	struct native_unwinder *u = own_unwinder(false);
	char text[128], buf[256];
	int fds[2];

	CHECK(u != NULL && pipe(fds) == 0);
	if (!u)
		return;
	snprintf(text, sizeof(text), "%llx 40 jit_code_here\n", 0x10000ull);
	CHECK(write(fds[1], text, strlen(text)) == (ssize_t)strlen(text));
	close(fds[1]);
	CHECK_STR(native_symbolize(u, 0x10010, buf, sizeof(buf)), "[unknown]");
	CHECK_EQ(native_unwinder_set_perf_map(u, fds[0]), 0);
	close(fds[0]);
	CHECK_STR(native_symbolize(u, 0x10010, buf, sizeof(buf)), "jit_code_here");
	native_unwinder_free(u);
}

static int opened_deleted;

static int count_module(void *ctx, const char *path)
{
	(void)ctx;
	if (strstr(path, "(deleted)"))
		opened_deleted++;
	return native_files_host.module(NULL, path);
}

/* A file deleted since it was mapped is not looked for under its old name
 * (another file may be there now, or a link planted). */
static void test_deleted_not_opened(void)
{
	static const char maps[] = "7f1000000000-7f1000100000 r-xp 00000000 08:01 123 /lib/x86_64-linux-gnu/libc.so.6 (deleted)\n";
	struct native_files files = {.module = count_module, .debug = NULL};
	struct native_unwinder *u = native_unwinder_new(getpid(), maps, sizeof(maps) - 1, &files);
	char buf[128];

	CHECK(u != NULL);
	native_symbolize(u, 0x7f1000000100ull, buf, sizeof(buf));
	CHECK_EQ(opened_deleted, 0);
	native_unwinder_free(u);
}

/* --- Crafted ELF files --- */

/* A minimal ELF file: a header and section headers (the first null), the
 * last section's data at the end. */
static int write_elf(const char *path, const Elf64_Shdr *extra, unsigned n, const void *data, size_t data_len,
		     uint16_t force_shnum)
{
	Elf64_Ehdr eh = {0};
	Elf64_Shdr sh[8] = {0};
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	size_t data_at = sizeof(eh) + (n + 1) * sizeof(Elf64_Shdr);

	if (fd < 0 || n > 7)
		return -1;
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_DYN;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_ehsize = sizeof(eh);
	eh.e_shoff = sizeof(eh);
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = force_shnum ? force_shnum : (uint16_t)(n + 1);
	for (unsigned i = 0; i < n; i++) {
		sh[i + 1] = extra[i];
		if (!sh[i + 1].sh_offset)
			sh[i + 1].sh_offset = data_at;
	}
	if (write(fd, &eh, sizeof(eh)) != sizeof(eh) ||
	    write(fd, sh, (n + 1) * sizeof(Elf64_Shdr)) != (ssize_t)((n + 1) * sizeof(Elf64_Shdr)) ||
	    (data_len && write(fd, data, data_len) != (ssize_t)data_len)) {
		close(fd);
		return -1;
	}
	lseek(fd, 0, SEEK_SET);
	return fd;
}

static void test_elf_limits(void)
{
	char path[] = "/tmp/jsampled-elf-XXXXXX", why[128];
	int tmp = mkstemp(path), fd;
	Elf64_Chdr bomb = {.ch_type = ELFCOMPRESS_ZLIB, .ch_size = 1ull << 30, .ch_addralign = 1};
	uint8_t zbomb[32] = "ZLIB";
	Elf64_Shdr sec;

	CHECK(tmp >= 0);
	close(tmp);
	/* A real library passes. */
	fd = open("/lib/x86_64-linux-gnu/libc.so.6", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0 && native_elf_within_limits(fd, why, sizeof(why)) == 0);
	if (fd >= 0)
		close(fd);
	/* SHF_COMPRESSED expanding to 1 GiB from 64 bytes. */
	sec = (Elf64_Shdr){.sh_type = SHT_PROGBITS, .sh_flags = SHF_COMPRESSED, .sh_size = 64};
	fd = write_elf(path, &sec, 1, &bomb, sizeof(bomb), 0);
	CHECK(fd >= 0 && native_elf_within_limits(fd, why, sizeof(why)) == -1 && strstr(why, "compressed"));
	printf("  SHF_COMPRESSED bomb: %s\n", why);
	close(fd);
	/* The .zdebug form: a name, "ZLIB" and a big-endian size. */
	{
		static const char names[] = "\0.zdebug_info\0";
		Elf64_Shdr two[2] = {
			{.sh_name = 1, .sh_type = SHT_PROGBITS, .sh_size = 64},
			{.sh_type = SHT_STRTAB, .sh_size = sizeof(names)},
		};
		uint8_t data[64 + sizeof(names)];

		memset(data, 0, sizeof(data));
		memcpy(data, zbomb, 4);
		data[4] = 0x40; /* 2^62 */
		memcpy(data + 64, names, sizeof(names));
		two[1].sh_offset = sizeof(Elf64_Ehdr) + 3 * sizeof(Elf64_Shdr) + 64;
		fd = write_elf(path, two, 2, data, sizeof(data), 0);
		if (fd >= 0) {
			Elf64_Ehdr eh;

			CHECK(pread(fd, &eh, sizeof(eh), 0) == sizeof(eh));
			eh.e_shstrndx = 2;
			CHECK(pwrite(fd, &eh, sizeof(eh), 0) == sizeof(eh));
		}
		CHECK(fd >= 0 && native_elf_within_limits(fd, why, sizeof(why)) == -1 && strstr(why, "compressed"));
		close(fd);
	}
	/* A symbol table of 4M symbols on paper. */
	sec = (Elf64_Shdr){.sh_type = SHT_SYMTAB, .sh_size = (4ull << 20) * sizeof(Elf64_Sym), .sh_entsize = 24};
	fd = write_elf(path, &sec, 1, NULL, 0, 0);
	CHECK(fd >= 0 && native_elf_within_limits(fd, why, sizeof(why)) == -1 && strstr(why, "symbols"));
	close(fd);
	/* Section headers claimed past the end of the file. */
	fd = write_elf(path, &sec, 1, NULL, 0, 60000);
	CHECK(fd >= 0 && native_elf_within_limits(fd, why, sizeof(why)) == -1);
	close(fd);
	/* Not ELF at all. */
	fd = write_elf(path, NULL, 0, NULL, 0, 0);
	CHECK(fd >= 0 && pwrite(fd, "#!", 2, 0) == 2 && native_elf_within_limits(fd, why, sizeof(why)) == -1);
	close(fd);
	unlink(path);
}

/* --- The helper's request path --- */

static int no_debug(void *ctx, uint32_t key, const unsigned char *id, unsigned n, int fds[2])
{
	(void)ctx;
	(void)key;
	(void)id;
	(void)n;
	fds[0] = fds[1] = -1;
	return 0;
}

static void head(struct wbuf *w, uint32_t type, uint32_t key, uint64_t seq)
{
	wbuf_reset(w);
	wbuf_u32(w, type);
	wbuf_u32(w, key);
	wbuf_u64(w, seq);
}

/* The helper gets our maps, our files as descriptors and our vDSO, then a
 * walk of the sample: its answer names frame_c, frame_b, frame_a in
 * order. A walk of a process it was never told about gets empty lists;
 * malformed messages are refused and change nothing. */
static void test_helper_request_path(void)
{
	struct native_helper *h = native_helper_new(no_debug, NULL);
	struct wbuf m, out;
	size_t len = 0, pos = 0;
	char *maps = self_maps(&len);
	struct rbuf r;
	unsigned found_c = 0, found_b = 0, found_a = 0, names = 0;

	wbuf_init(&m);
	wbuf_init(&out);
	CHECK(h != NULL && maps != NULL);
	if (!h || !maps)
		goto cleanup;
	/* MAPS in two parts, on a line's end. */
	{
		size_t half = len / 2;

		while (half < len && maps[half - 1] != '\n')
			half++;
		head(&m, NATIVE_MSG_MAPS, 7, 0);
		wbuf_u32(&m, (uint32_t)getpid());
		wbuf_u8(&m, 0);
		wbuf_put(&m, maps, half);
		CHECK_EQ(native_helper_handle(h, m.data, m.len, NULL, 0, &out), 0);
		head(&m, NATIVE_MSG_MAPS, 7, 0);
		wbuf_u32(&m, (uint32_t)getpid());
		wbuf_u8(&m, 1);
		wbuf_put(&m, maps + half, len - half);
		CHECK_EQ(native_helper_handle(h, m.data, m.len, NULL, 0, &out), 0);
	}
	/* Each executable file mapping, as a descriptor. */
	while (pos < len) {
		char *line = maps + pos, *nl = memchr(line, '\n', len - pos), *path;
		size_t ll = nl ? (size_t)(nl - line) : len - pos;
		char perms[5];
		int fd;

		pos += ll + 1;
		if (nl)
			*nl = 0;
		path = strchr(line, '/');
		if (!path || sscanf(line, "%*x-%*x %4s", perms) != 1 || perms[2] != 'x')
			continue;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		head(&m, NATIVE_MSG_FILE, 7, 0);
		wbuf_str(&m, path);
		wbuf_u64(&m, 0);
		wbuf_u64(&m, 0);
		CHECK_EQ(native_helper_handle(h, m.data, m.len, &fd, 1, &out), 0);
	}
	/* The walk. */
	head(&m, NATIVE_MSG_WALK, 7, 42);
	wbuf_u8(&m, NATIVE_WALK_LEAF);
	wbuf_u8(&m, 0);
	wbuf_u64(&m, 0);
	wbuf_u64(&m, 0);
	wbuf_u32(&m, sample->tid);
	wbuf_u32(&m, sample->flags);
	for (int i = 0; i < JS_NREGS; i++)
		wbuf_u64(&m, sample->regs[i]);
	wbuf_u64(&m, sample->stack_addr);
	wbuf_u32(&m, sample->stack_len);
	wbuf_put(&m, sample->stack, sample->stack_len);
	CHECK_EQ(native_helper_handle(h, m.data, m.len, NULL, 0, &out), 0);
	rbuf_init(&r, out.data, out.len);
	CHECK_EQ(rbuf_u32(&r), NATIVE_MSG_FRAMES);
	CHECK_EQ(rbuf_u32(&r), 7);
	CHECK_EQ(rbuf_u64(&r), 42);
	(void)rbuf_u8(&r);
	CHECK_EQ(rbuf_u8(&r), 1);
	names = rbuf_u8(&r);
	for (unsigned i = 0; i < names; i++) {
		size_t n;
		const char *s = rbuf_str(&r, &n);

		if (n == 7 && memcmp(s, "frame_c", 7) == 0)
			found_c = i + 1;
		if (n == 7 && memcmp(s, "frame_b", 7) == 0)
			found_b = i + 1;
		if (n == 7 && memcmp(s, "frame_a", 7) == 0)
			found_a = i + 1;
	}
	CHECK(!r.err && rbuf_left(&r) == 0);
	printf("  the helper's answer: %u names, frame_c #%u, frame_b #%u, frame_a #%u\n", names, found_c, found_b,
	       found_a);
	CHECK(found_c == 1 && found_b == 2 && found_a == 3);
	/* A process it does not know: an answer all the same, with no frames. */
	memcpy(m.data + 4, &(uint32_t){8}, 4);
	CHECK_EQ(native_helper_handle(h, m.data, m.len, NULL, 0, &out), 0);
	CHECK(out.len == NATIVE_MSG_HEAD + 3 && out.data[NATIVE_MSG_HEAD + 2] == 0);
	/* Malformed: cut short, a stack longer than it says, unknown types. */
	CHECK_EQ(native_helper_handle(h, m.data, m.len - 1, NULL, 0, &out), -1);
	CHECK_EQ(native_helper_handle(h, m.data, 10, NULL, 0, &out), -1);
	head(&m, 99, 7, 0);
	CHECK_EQ(native_helper_handle(h, m.data, m.len, NULL, 0, &out), -1);
	head(&m, NATIVE_MSG_FILE, 7, 0);
	wbuf_str(&m, "relative/path");
	wbuf_u64(&m, 0);
	wbuf_u64(&m, 0);
	{
		int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

		CHECK_EQ(native_helper_handle(h, m.data, m.len, &fd, 1, &out), -1);
	}
	head(&m, NATIVE_MSG_DROP, 7, 0);
	CHECK_EQ(native_helper_handle(h, m.data, m.len, NULL, 0, &out), 0);
cleanup:
	native_helper_free(h);
	wbuf_free(&m);
	wbuf_free(&out);
	free(maps);
}

int main(void)
{
	sample = calloc(1, sizeof(*sample) + COPY_BYTES);
	if (!sample)
		return 1;
	stack_end = find_stack_end();
	CHECK(stack_end != 0);
	frame_a(1);
	RUN(test_own_stack);
	RUN(test_bad_input);
	RUN(test_no_maps);
	RUN(test_libc_symbols);
	RUN(test_own_mapping_of_a_library);
	RUN(test_vdso_image);
	RUN(test_dlopen_rereport);
	RUN(test_perf_map);
	RUN(test_perf_map_names);
	RUN(test_elf_limits);
	RUN(test_deleted_not_opened);
	RUN(test_helper_request_path);
	free(sample);
	return CHECK_DONE();
}
