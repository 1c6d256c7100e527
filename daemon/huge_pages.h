/* Transparent huge pages for jsampled's own heap.
 *
 * Why: decoding is a chain of lookups spread over tens of MiB (the calling-
 * context trees, the code maps, the method tables). Next to busy JVMs those
 * lookups miss the TLB as well as the caches; with 2 MiB pages the page walks
 * go. Measured with `make bench-cost` (live, JDK 17, 10 kHz): 8-13 % less
 * CPU per sample on the deepest applications.
 *
 * How: where the kernel gives huge pages only to memory that asks
 * (transparent_hugepage/enabled = madvise, Debian's default), glibc's malloc
 * asks for all it maps when its tunable glibc.malloc.hugetlb=1 is set. glibc
 * reads tunables once, at program start, so jsampled re-executes itself once
 * with the tunable added, then puts the environment back as it was: its
 * children (attach helpers, JVMs it launches) do not inherit it. */
#ifndef JSAMPLED_HUGE_PAGES_H
#define JSAMPLED_HUGE_PAGES_H

#include <stdbool.h>

/* Called first thing in main. Returns only when there is nothing to do, the
 * re-execution failed (jsampled runs on, on small pages), or this is the
 * re-executed program; then *on tells whether malloc uses huge pages. */
void huge_pages_for_malloc(char **argv, bool *on);

#endif
