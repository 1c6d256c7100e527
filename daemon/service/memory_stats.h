/* SPDX-License-Identifier: GPL-2.0-only */
/* jsampled's resident memory broken down by what holds it, for `stats`:
 * what the kernel says it holds (its mappings by kind), what its own
 * structures count, what the allocator keeps free, and the rest. */
#ifndef JSAMPLED_MEMORY_STATS_H
#define JSAMPLED_MEMORY_STATS_H

#include <stddef.h>

#include "daemon/process/stats_format.h"

struct daemon;

/* Fills up to max fields (the "memory" group of root's stats); returns
 * how many. */
size_t memory_stats(const struct daemon *d, struct stat_field *f, size_t max);

#endif
