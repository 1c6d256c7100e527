/* SPDX-License-Identifier: GPL-2.0-only */
/* What a first write to fresh anonymous memory costs here, per 4 KiB: in
 * small pages, in transparent huge pages (MADV_HUGEPAGE, as big_alloc.c
 * asks), and prefaulted with MADV_POPULATE_WRITE. jsampled's growing
 * arrays pay this once per page; on a hypervisor that shadows page tables
 * the small-page figure is tens of times a bare-metal one.
 *
 * Usage: page_faults [MiB per round, default 64] [rounds, default 5] */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

#define HUGE ((size_t)2 << 20)

enum way { SMALL, HUGE_PAGES, POPULATE, WAYS };
static const char *const way_name[WAYS] = {"4 KiB pages", "huge pages (MADV_HUGEPAGE)", "MADV_POPULATE_WRITE"};

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* ns per 4 KiB to map bytes, advise them one way and write a byte a page;
 * negative if the mapping or advice failed. */
static double touch(size_t bytes, enum way how)
{
	char *raw = mmap(NULL, bytes + HUGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *p;
	double t0, t1;
	int rc = 0;

	if (raw == MAP_FAILED)
		return -1;
	p = (char *)(((unsigned long)raw + HUGE - 1) & ~(HUGE - 1)); /* huge pages need aligned ranges */
	t0 = now();
	if (how == HUGE_PAGES)
		rc = madvise(p, bytes, MADV_HUGEPAGE);
	else if (how == POPULATE)
		rc = madvise(p, bytes, MADV_POPULATE_WRITE);
	for (size_t i = 0; i < bytes; i += 4096)
		p[i] = 1;
	t1 = now();
	munmap(raw, bytes + HUGE);
	return rc ? -1 : (t1 - t0) / (double)(bytes / 4096) * 1e9;
}

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 64;
	int rounds = argc > 2 ? atoi(argv[2]) : 5;

	if (!mib || rounds < 1) {
		fprintf(stderr, "usage: page_faults [MiB per round] [rounds]\n");
		return 2;
	}
	printf("first write per 4 KiB page, %zu MiB a round, %d rounds (ns; the first round may include the host backing the memory):\n", mib, rounds);
	for (int w = 0; w < WAYS; w++) {
		printf("  %-28s", way_name[w]);
		for (int r = 0; r < rounds; r++) {
			double ns = touch(mib << 20, (enum way)w);
			if (ns < 0)
				printf(" %8s", "failed");
			else
				printf(" %8.0f", ns);
		}
		printf("\n");
	}
	return 0;
}
