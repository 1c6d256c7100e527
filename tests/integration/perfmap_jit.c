/* SPDX-License-Identifier: GPL-2.0-only */
/* A tiny JIT for test_native_process.sh: copies a spin loop into anonymous
 * executable memory (so no ELF file names it), writes /tmp/perf-PID.map the
 * way JITs do for perf, and calls the code from run_jit until SECONDS have
 * passed. Usage: perfmap_jit SECONDS */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* push rbp; mov rbp, rsp; mov ecx, 1000000; 1: dec rcx; jnz 1b; pop rbp; ret
 * (a frame pointer, as most JITs keep one: how the unwinder gets past code
 * that has no CFI) */
static const unsigned char spin[] = {0x55, 0x48, 0x89, 0xe5, 0xb9, 0x40, 0x42, 0x0f, 0x00,
				     0x48, 0xff, 0xc9, 0x75, 0xfb, 0x5d, 0xc3};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void run_jit(void (*fn)(void))
{
	fn();
	__asm__ volatile("" ::: "memory"); /* not a tail call: run_jit stays on the stack */
}

int main(int argc, char **argv)
{
	double end = now() + (argc > 1 ? atof(argv[1]) : 10);
	unsigned char *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char path[64];
	FILE *map;
	void (*fn)(void);

	if (code == MAP_FAILED)
		return 1;
	memcpy(code + 64, spin, sizeof(spin));
	if (mprotect(code, 4096, PROT_READ | PROT_EXEC) != 0)
		return 1;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	if (!(map = fopen(path, "w")))
		return 1;
	fprintf(map, "%lx %zx jit_spin_loop\n", (unsigned long)(code + 64), sizeof(spin));
	fclose(map);
	fn = (void (*)(void))(void *)(code + 64);
	while (now() < end)
		run_jit(fn);
	unlink(path);
	return 0;
}
