/* SPDX-License-Identifier: GPL-2.0-only */
#include "big_alloc.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static int is_big(size_t bytes)
{
	return bytes >= BIG_ALLOC_MIN;
}

/* Mappings are whole huge pages long: the kernel aligns anonymous mappings
 * of such lengths to huge pages, so all of one can be backed by them. */
static size_t mapped_bytes(size_t bytes)
{
	return (bytes + BIG_ALLOC_MIN - 1) & ~(BIG_ALLOC_MIN - 1);
}

size_t big_alloc_footprint(size_t bytes)
{
	return is_big(bytes) ? mapped_bytes(bytes) : bytes;
}

/* A hint only: without transparent huge pages (or with them off) the
 * mapping works in small pages as any other. */
static void advise_huge(void *p, size_t bytes)
{
	(void)madvise(p, mapped_bytes(bytes), MADV_HUGEPAGE);
}

static void *map_big(size_t bytes)
{
	void *p = mmap(NULL, mapped_bytes(bytes), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	advise_huge(p, bytes);
	return p;
}

void *big_alloc_zeroed(size_t bytes)
{
	return is_big(bytes) ? map_big(bytes) : calloc(1, bytes ? bytes : 1);
}

void *big_realloc(void *p, size_t old_bytes, size_t new_bytes)
{
	void *q;

	if (!p || !old_bytes) {
		if (is_big(new_bytes))
			return map_big(new_bytes);
		return malloc(new_bytes ? new_bytes : 1);
	}
	if (is_big(old_bytes) && is_big(new_bytes)) {
		/* The pages move with their contents (no copy, no new faults);
		 * the mapping keeps its advice. */
		q = mremap(p, mapped_bytes(old_bytes), mapped_bytes(new_bytes), MREMAP_MAYMOVE);
		return q == MAP_FAILED ? NULL : q;
	}
	if (!is_big(old_bytes) && !is_big(new_bytes))
		return realloc(p, new_bytes ? new_bytes : 1);
	/* Across the threshold: copy into the other kind. */
	if (!(q = big_realloc(NULL, 0, new_bytes)))
		return NULL;
	memcpy(q, p, old_bytes < new_bytes ? old_bytes : new_bytes);
	big_free(p, old_bytes);
	return q;
}

void big_free(void *p, size_t bytes)
{
	if (!p)
		return;
	if (is_big(bytes))
		munmap(p, mapped_bytes(bytes));
	else
		free(p);
}
