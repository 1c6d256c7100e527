/* Native unwinding (daemon/native_unwind.c) on a real stack copy of this
 * very process: frame_a -> frame_b -> frame_c, where frame_c takes its
 * registers and copies its own stack into a js_sample, as the BPF sampler
 * would; then libdwfl walks that copy. Also: empty copies, garbage, the code
 * cache stop, a process that exited, libc's symbols, and the cost per walk
 * and per (cached) symbolisation. */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../daemon/native_unwind.h"
#include "../../daemon/perf_map.h"
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

static void test_own_stack(void)
{
	struct native_unwinder *u = native_unwinder_new(getpid(), NULL, NULL, NULL);
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
	struct native_unwinder *u = native_unwinder_new(getpid(), NULL, NULL, NULL);
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

static void test_exited_pid(void)
{
	pid_t pid = fork();
	struct native_unwinder *u;
	uint64_t pcs[MAX_FRAMES];

	if (pid == 0)
		_exit(0);
	CHECK(pid > 0);
	if (pid <= 0)
		return;
	waitpid(pid, NULL, 0);
	u = native_unwinder_new(pid, NULL, NULL, NULL);
	CHECK(u == NULL || native_unwind(u, sample, 0, 0, pcs, MAX_FRAMES) <= 1);
	native_unwinder_free(u);
	CHECK(native_unwinder_new(0, NULL, NULL, NULL) == NULL);
	CHECK(native_unwinder_new(-1, NULL, NULL, NULL) == NULL);
}

static void test_libc_symbols(void)
{
	struct native_unwinder *u = native_unwinder_new(getpid(), NULL, NULL, NULL);
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
	/* The vDSO: a module (its ELF read from our memory), with symbols. */
	{
		uint64_t vdso = getauxval(AT_SYSINFO_EHDR);

		if (vdso) {
			native_symbolize(u, vdso + 0x10, buf, sizeof(buf));
			printf("  vdso+0x10: %s\n", buf);
			CHECK_STR(buf, "[vdso]");
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

/* A library loaded after the unwinder read the maps: found after the
 * (rate-limited) re-report that a pc in no module triggers. The library is
 * the tests' own (tests/unit/dlopen_probe.c, built next to this program),
 * so nothing has mapped it before. */
static void test_dlopen_rereport(void)
{
	static const char want[] = "jsampled_dlopen_probe";
	struct native_unwinder *u = native_unwinder_new(getpid(), NULL, NULL, NULL);
	char exe[512], path[600], buf[256];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;
	void *h = NULL, *fn = NULL;

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
	CHECK_EQ(native_unwind_stats(u)->reports, 1);
	usleep(1100 * 1000); /* past the re-report interval (1 s) */
	native_symbolize(u, (uint64_t)(uintptr_t)fn, buf, sizeof(buf));
	printf("  after dlopen: %s\n", buf);
	CHECK_STR(buf, want);
	CHECK_EQ(native_unwind_stats(u)->reports, 2);
	/* Rate limited: another unknown pc right away reads nothing. */
	CHECK_STR(native_symbolize(u, 0x10, buf, sizeof(buf)), "[unknown]");
	CHECK_EQ(native_unwind_stats(u)->reports, 2);
cleanup:
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

struct recorded {
	char *maps;
	size_t maps_len;
	void *vdso;
	size_t vdso_len;
	int vdso_calls;
};

static void on_maps(void *ctx, pid_t pid, const char *maps, size_t len)
{
	struct recorded *r = ctx;

	(void)pid;
	free(r->maps);
	r->maps = malloc(len);
	if (r->maps)
		memcpy(r->maps, maps, r->maps_len = len);
}

static void on_vdso(void *ctx, pid_t pid, const void *image, size_t len)
{
	struct recorded *r = ctx;

	CHECK_EQ(pid, getpid());
	r->vdso_calls++;
	free(r->vdso);
	r->vdso = malloc(len);
	if (r->vdso)
		memcpy(r->vdso, image, r->vdso_len = len);
}

/* A replay names vDSO frames as the live unwinder does, from the image the
 * live one passed on (jsampled records it, REC_VDSO); without it, only as
 * "[vdso]". */
static void test_vdso_replayed(void)
{
	struct recorded r = {0};
	struct native_unwinder *live = native_unwinder_new(getpid(), on_maps, on_vdso, &r), *replay = NULL,
			       *bare = NULL;
	uint64_t vdso = getauxval(AT_SYSINFO_EHDR);
	char want[256], got[256];
	int named = 0;

	CHECK(live != NULL && vdso != 0);
	CHECK_EQ(r.vdso_calls, 1);
	CHECK(r.maps != NULL && r.vdso != NULL && r.vdso_len >= 4096);
	if (!live || !vdso || !r.maps || !r.vdso)
		goto cleanup;
	CHECK(memcmp(r.vdso, (const void *)(uintptr_t)vdso, r.vdso_len) == 0); /* our own vDSO, read back */
	replay = native_unwinder_new_replay(getpid(), r.maps, r.maps_len);
	bare = native_unwinder_new_replay(getpid(), r.maps, r.maps_len);
	CHECK(replay != NULL && bare != NULL);
	if (!replay || !bare)
		goto cleanup;
	CHECK_EQ(native_unwinder_set_vdso(replay, r.vdso, r.vdso_len), 0);
	CHECK_EQ(native_unwinder_set_vdso(live, r.vdso, r.vdso_len), -1); /* live reads its own */
	for (uint64_t off = 0; off < r.vdso_len; off += 16) {
		native_symbolize(live, vdso + off, want, sizeof(want));
		native_symbolize(replay, vdso + off, got, sizeof(got));
		CHECK_STR(got, want);
		if (strcmp(want, "[vdso]") == 0)
			continue;
		named++;
		native_symbolize(bare, vdso + off, got, sizeof(got));
		CHECK_STR(got, "[vdso]");
	}
	printf("  %d vDSO pcs named alike live and replayed\n", named);
	CHECK(named > 0);
cleanup:
	native_unwinder_free(live);
	native_unwinder_free(replay);
	native_unwinder_free(bare);
	free(r.maps);
	free(r.vdso);
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
	RUN(test_exited_pid);
	RUN(test_libc_symbols);
	RUN(test_vdso_replayed);
	RUN(test_dlopen_rereport);
	RUN(test_perf_map);
	free(sample);
	return CHECK_DONE();
}
