#include "u64_map.h"

#include <stdlib.h>
#include <string.h>

void u64_map_init(struct u64_map *m)
{
	memset(m, 0, sizeof(*m));
}

void u64_map_free(struct u64_map *m)
{
	free(m->keys);
	free(m->vals);
	u64_map_init(m);
}

uint64_t *u64_map_get(const struct u64_map *m, uint64_t key)
{
	if (!m->cap || key == 0)
		return NULL;
	for (size_t i = u64_hash(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key)
			return &m->vals[i];
		if (m->keys[i] == 0)
			return NULL;
	}
}

static int grow(struct u64_map *m)
{
	size_t cap = m->cap ? m->cap * 2 : 16;
	uint64_t *keys = calloc(cap, sizeof(*keys));
	uint64_t *vals = calloc(cap, sizeof(*vals));

	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -1;
	}
	for (size_t j = 0; j < m->cap; j++) {
		if (!m->keys[j])
			continue;
		size_t i = u64_hash(m->keys[j]) & (cap - 1);
		while (keys[i])
			i = (i + 1) & (cap - 1);
		keys[i] = m->keys[j];
		vals[i] = m->vals[j];
	}
	free(m->keys);
	free(m->vals);
	m->keys = keys;
	m->vals = vals;
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
	while (m->keys[i])
		i = (i + 1) & (m->cap - 1);
	m->keys[i] = key;
	m->vals[i] = val;
	m->count++;
	return 0;
}

int u64_map_del(struct u64_map *m, uint64_t key)
{
	size_t i, j, mask = m->cap - 1;

	if (!m->cap || key == 0)
		return 0;
	for (i = u64_hash(key) & mask; m->keys[i] != key; i = (i + 1) & mask)
		if (m->keys[i] == 0)
			return 0;
	/* Shift later members of the probe run back into the hole. */
	for (j = (i + 1) & mask; m->keys[j]; j = (j + 1) & mask) {
		size_t home = u64_hash(m->keys[j]) & mask;
		/* Move j into i if its home is not in the cyclic range (i, j]. */
		if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
			m->keys[i] = m->keys[j];
			m->vals[i] = m->vals[j];
			i = j;
		}
	}
	m->keys[i] = 0;
	m->vals[i] = 0;
	m->count--;
	return 1;
}
