/* SPDX-License-Identifier: GPL-2.0-only */
/* Interned, immutable strings owned by one process's tables: method names,
 * signatures and class names repeat a lot across a JVM. */
#ifndef JSAMPLED_STRING_POOL_H
#define JSAMPLED_STRING_POOL_H

#include <stddef.h>

#include "userspace/common/u64_map.h"

struct string_pool {
	struct u64_map index; /* hash -> const char * */
	struct pool_chunk *chunks;
	size_t bytes;
};

void string_pool_init(struct string_pool *p);
void string_pool_free(struct string_pool *p);
/* Returns a stable NUL-terminated copy of s[0..n), or NULL on OOM. */
const char *string_pool_intern(struct string_pool *p, const char *s, size_t n);

#endif
