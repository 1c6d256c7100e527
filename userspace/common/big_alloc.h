/* SPDX-License-Identifier: GPL-2.0-only */
/* Memory for large arrays that grow (a big CCT's nodes, a big hash map's
 * slots): from 2 MiB up, mapped apart and advised onto transparent huge
 * pages.
 *
 * Why: on the VMs we run on, a first write to a 4 KiB page costs ~11 us
 * (the hypervisor shadows every page-table entry), to a 2 MiB huge page
 * ~0.2 us per 4 KiB once the host backs the memory, ~5 us the first time
 * (`make bench-page-faults`). A deep interpreter's CCT grows by tens of
 * MiB: in 4 KiB pages its faults took 13 % of jsampled's CPU
 * (docs/performance.md). Huge pages also cut the TLB misses of
 * lookups scattered over such arrays. Smaller arrays stay with malloc, so
 * that a host of small processes does not pay 2 MiB apiece.
 *
 * The caller passes the bytes it asked for, each time: that size tells a
 * mapping (big) from a malloc'd block (small). */
#ifndef JSAMPLED_BIG_ALLOC_H
#define JSAMPLED_BIG_ALLOC_H

#include <stddef.h>

/* Where mappings start; a whole number of huge pages, so that the kernel
 * places them on huge-page boundaries. */
#define BIG_ALLOC_MIN ((size_t)2 << 20)

/* bytes of zeroes, or NULL without memory. */
void *big_alloc_zeroed(size_t bytes);

/* p (holding old_bytes, NULL if 0) grown or shrunk to new_bytes, contents
 * kept up to the smaller size; the rest is unspecified. NULL without memory
 * (p is then untouched). */
void *big_realloc(void *p, size_t old_bytes, size_t new_bytes);

/* The memory an allocation of bytes takes: mappings are whole huge pages
 * (what a byte budget must count, not the bytes asked for). */
size_t big_alloc_footprint(size_t bytes);

/* Frees p, allocated here with bytes. */
void big_free(void *p, size_t bytes);

#endif
