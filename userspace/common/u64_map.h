/* SPDX-License-Identifier: GPL-2.0-only */
/* A small open-addressing hash map from nonzero u64 keys to u64 values
 * (linear probing, backward-shift deletion: no tombstones). Used on hot
 * paths in jsampled (CCT children, Method* lookups) and in the agent. */
#ifndef JSAMPLED_U64_MAP_H
#define JSAMPLED_U64_MAP_H

#include <stddef.h>
#include <stdint.h>

/* A key and its value side by side: a lookup's probe and its answer are
 * one cache line, not one in a keys array and another in a values array
 * (the CCT's children and the method index are looked up for most frames
 * of every sample, mostly missing the CPU caches). */
struct u64_map_slot {
	uint64_t key; /* 0 = empty slot */
	uint64_t val;
};

struct u64_map {
	struct u64_map_slot *slots;
	size_t cap; /* power of two */
	size_t count;
};

void u64_map_init(struct u64_map *m);
void u64_map_free(struct u64_map *m);
/* Returns a pointer to the value, or NULL. Key 0 is never present. */
uint64_t *u64_map_get(const struct u64_map *m, uint64_t key);
/* Inserts or overwrites; -1 on allocation failure or key 0. */
int u64_map_put(struct u64_map *m, uint64_t key, uint64_t val);
/* Returns 1 if the key was present. */
int u64_map_del(struct u64_map *m, uint64_t key);
/* Empties the map, keeping its slots' memory. */
void u64_map_clear(struct u64_map *m);
/* Bytes of memory the map holds (its slots, as allocated: big_alloc.h). */
size_t u64_map_bytes(const struct u64_map *m);

static inline uint64_t u64_hash(uint64_t x)
{
	/* splitmix64 finaliser: addresses and ids differ in low bits. */
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

#endif
