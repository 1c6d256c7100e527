/* SPDX-License-Identifier: GPL-2.0-only */
#include "string_pool.h"
#include "userspace/common/fnv1a.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_BYTES (64 * 1024)

struct pool_chunk {
	struct pool_chunk *next;
	size_t used, cap;
	char data[];
};

void string_pool_init(struct string_pool *p)
{
	memset(p, 0, sizeof(*p));
	u64_map_init(&p->index);
}

void string_pool_free(struct string_pool *p)
{
	struct pool_chunk *c = p->chunks;

	while (c) {
		struct pool_chunk *next = c->next;
		free(c);
		c = next;
	}
	u64_map_free(&p->index);
	string_pool_init(p);
}

static uint64_t hash_bytes(const char *s, size_t n)
{
	uint64_t h = fnv1a_bytes(FNV1A_START, s, n);

	return h ? h : 1;
}

static char *alloc(struct string_pool *p, size_t n)
{
	struct pool_chunk *c = p->chunks;

	if (!c || c->cap - c->used < n) {
		size_t cap = n > CHUNK_BYTES ? n : CHUNK_BYTES;
		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->used = 0;
		c->cap = cap;
		c->next = p->chunks;
		p->chunks = c;
		p->bytes += sizeof(*c) + cap;
	}
	c->used += n;
	return c->data + c->used - n;
}

const char *string_pool_intern(struct string_pool *p, const char *s, size_t n)
{
	uint64_t h = hash_bytes(s, n);
	uint64_t *hit = u64_map_get(&p->index, h);
	char *copy;

	if (hit) {
		const char *old = (const char *)(uintptr_t)*hit;
		if (strlen(old) == n && memcmp(old, s, n) == 0)
			return old;
	}
	copy = alloc(p, n + 1);
	if (!copy)
		return NULL;
	memcpy(copy, s, n);
	copy[n] = 0;
	if (!hit) /* on a hash collision the first string keeps the slot */
		u64_map_put(&p->index, h, (uint64_t)(uintptr_t)copy);
	return copy;
}
