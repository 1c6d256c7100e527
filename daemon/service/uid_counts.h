/* SPDX-License-Identifier: GPL-2.0-only */
/* Per-user counters of what a user holds in jsampled (open connections):
 * limits are per uid, so one local user's flood cannot crowd out the
 * others. */
#ifndef JSAMPLED_UID_COUNTS_H
#define JSAMPLED_UID_COUNTS_H

#include <stdint.h>
#include <sys/types.h>

#include "userspace/common/u64_map.h"

struct uid_counts {
	struct u64_map by_uid; /* uid + 1 -> count */
	uint64_t total;
};

static inline void uid_counts_init(struct uid_counts *c)
{
	u64_map_init(&c->by_uid);
	c->total = 0;
}

static inline void uid_counts_free(struct uid_counts *c)
{
	u64_map_free(&c->by_uid);
}

static inline uint64_t uid_count(const struct uid_counts *c, uid_t uid)
{
	uint64_t *v = u64_map_get(&c->by_uid, (uint64_t)uid + 1);
	return v ? *v : 0;
}

static inline void uid_count_add(struct uid_counts *c, uid_t uid, int delta)
{
	uint64_t n = uid_count(c, uid) + (uint64_t)(int64_t)delta;

	if (n)
		u64_map_put(&c->by_uid, (uint64_t)uid + 1, n);
	else
		u64_map_del(&c->by_uid, (uint64_t)uid + 1);
	c->total += (uint64_t)(int64_t)delta;
}

#endif
