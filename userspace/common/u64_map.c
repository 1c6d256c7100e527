/* SPDX-License-Identifier: GPL-2.0-only */
#include "u64_map.h"

#include "big_alloc.h"

#include <stdlib.h>
#include <string.h>

void u64_map_init(struct u64_map *m)
{
	memset(m, 0, sizeof(*m));
}

void u64_map_free(struct u64_map *m)
{
	big_free(m->slots, m->cap * sizeof(*m->slots));
	u64_map_init(m);
}

void u64_map_clear(struct u64_map *m)
{
	if (m->cap)
		memset(m->slots, 0, m->cap * sizeof(*m->slots));
	m->count = 0;
}

size_t u64_map_bytes(const struct u64_map *m)
{
	return big_alloc_footprint(m->cap * sizeof(*m->slots));
}

uint64_t *u64_map_get(const struct u64_map *m, uint64_t key)
{
	if (!m->cap || key == 0)
		return NULL;
	for (size_t i = u64_hash(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (m->slots[i].key == key)
			return &m->slots[i].val;
		if (m->slots[i].key == 0)
			return NULL;
	}
}

static int grow(struct u64_map *m)
{
	size_t cap = m->cap ? m->cap * 2 : 16;
	/* A big map (a deep interpreter's CCT children: tens of MiB) on huge pages. */
	struct u64_map_slot *slots = big_alloc_zeroed(cap * sizeof(*slots));

	if (!slots)
		return -1;
	for (size_t j = 0; j < m->cap; j++) {
		if (!m->slots[j].key)
			continue;
		size_t i = u64_hash(m->slots[j].key) & (cap - 1);
		while (slots[i].key)
			i = (i + 1) & (cap - 1);
		slots[i] = m->slots[j];
	}
	big_free(m->slots, m->cap * sizeof(*m->slots));
	m->slots = slots;
	m->cap = cap;
	return 0;
}

int u64_map_put(struct u64_map *m, uint64_t key, uint64_t val)
{
	uint64_t *v;

	if (key == 0)
		return -1;
	v = u64_map_get(m, key);
	if (v) {
		*v = val;
		return 0;
	}
	if ((m->count + 1) * 4 > m->cap * 3 && grow(m) != 0) /* load factor 3/4 */
		return -1;
	size_t i = u64_hash(key) & (m->cap - 1);
	while (m->slots[i].key)
		i = (i + 1) & (m->cap - 1);
	m->slots[i] = (struct u64_map_slot){.key = key, .val = val};
	m->count++;
	return 0;
}

int u64_map_del(struct u64_map *m, uint64_t key)
{
	size_t i, j, mask = m->cap - 1;

	if (!m->cap || key == 0)
		return 0;
	for (i = u64_hash(key) & mask; m->slots[i].key != key; i = (i + 1) & mask)
		if (m->slots[i].key == 0)
			return 0;
	/* Shift later members of the probe run back into the hole. */
	for (j = (i + 1) & mask; m->slots[j].key; j = (j + 1) & mask) {
		size_t home = u64_hash(m->slots[j].key) & mask;
		/* Move j into i if its home is not in the cyclic range (i, j]. */
		if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
			m->slots[i] = m->slots[j];
			i = j;
		}
	}
	m->slots[i] = (struct u64_map_slot){0};
	m->count--;
	return 1;
}
