/* SPDX-License-Identifier: GPL-2.0-only */
#include "shared_blobs.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "userspace/common/u64_map.h"

struct blob {
	uint64_t hash;
	uint32_t refs;
	uint32_t len;
	_Alignas(8) unsigned char data[];
};

/* Open addressing over blob pointers (linear probing, backward-shift
 * deletion); each blob keeps its hash, so probes compare that first. */
static struct {
	struct blob **slots;
	size_t cap; /* power of two, or 0 */
	size_t count;
	size_t refs;
	size_t bytes; /* of the blobs */
	uint64_t seed;
} store;

/* Agents choose the names: the hash is seeded per run, so that no agent
 * can prepare names that all land in one probe chain. */
static uint64_t seed(void)
{
	if (!store.seed && getrandom(&store.seed, sizeof(store.seed), GRND_NONBLOCK) != sizeof(store.seed))
		store.seed = (uint64_t)(uintptr_t)&store ^ 0x9e3779b97f4a7c15ull;
	store.seed |= 1;
	return store.seed;
}

/* Eight bytes a step (a byte at a time was most of the cost of reading a
 * JVM's methods); seeded, though no keyed MAC. */
static uint64_t hash_of(const void *bytes, size_t n)
{
	const unsigned char *p = bytes;
	uint64_t h = seed() ^ ((uint64_t)n * 0x9e3779b97f4a7c15ull), w;

	for (; n >= 8; p += 8, n -= 8) {
		memcpy(&w, p, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	w = 0;
	if (n)
		memcpy(&w, p, n);
	h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
	return u64_hash(h ^ (h >> 29));
}

static struct blob *blob_of(const void *data)
{
	return (struct blob *)((unsigned char *)data - offsetof(struct blob, data));
}

static size_t blob_bytes(size_t len)
{
	return sizeof(struct blob) + len + 1;
}

static int grow(void)
{
	size_t cap = store.cap ? store.cap * 2 : 1024;
	struct blob **slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -1;
	for (size_t j = 0; j < store.cap; j++) {
		struct blob *b = store.slots[j];
		size_t i;

		if (!b)
			continue;
		for (i = b->hash & (cap - 1); slots[i]; i = (i + 1) & (cap - 1))
			;
		slots[i] = b;
	}
	free(store.slots);
	store.slots = slots;
	store.cap = cap;
	return 0;
}

const void *shared_blob_get(const void *bytes, size_t n)
{
	uint64_t h;
	size_t i;
	struct blob *b;

	if (n > UINT32_MAX)
		return NULL;
	h = hash_of(bytes, n);
	if (store.cap)
		for (i = h & (store.cap - 1); (b = store.slots[i]); i = (i + 1) & (store.cap - 1))
			if (b->hash == h && b->len == n && memcmp(b->data, bytes, n) == 0 && b->refs < UINT32_MAX) {
				b->refs++;
				store.refs++;
				return b->data;
			}
	if ((store.count + 1) * 4 > store.cap * 3 && grow() != 0)
		return NULL;
	if (!(b = malloc(blob_bytes(n))))
		return NULL;
	b->hash = h;
	b->refs = 1;
	b->len = (uint32_t)n;
	if (n)
		memcpy(b->data, bytes, n);
	b->data[n] = 0;
	for (i = h & (store.cap - 1); store.slots[i]; i = (i + 1) & (store.cap - 1))
		;
	store.slots[i] = b;
	store.count++;
	store.refs++;
	store.bytes += blob_bytes(n);
	return b->data;
}

const void *shared_blob_ref(const void *data)
{
	struct blob *b;

	if (!data)
		return NULL;
	b = blob_of(data);
	if (b->refs == UINT32_MAX) /* a new copy: the count must not wrap */
		return shared_blob_get(data, b->len);
	b->refs++;
	store.refs++;
	return data;
}

/* Takes b's slot out of the table, moving later entries of its probe chain
 * back so that no lookup stops early. */
static void unlink_blob(struct blob *b)
{
	size_t mask = store.cap - 1, i = b->hash & mask;

	while (store.slots[i] != b)
		i = (i + 1) & mask;
	for (size_t j = (i + 1) & mask; store.slots[j]; j = (j + 1) & mask) {
		size_t home = store.slots[j]->hash & mask;
		/* j's entry may move to i if its home is not in (i, j]. */
		bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);

		if (!stays) {
			store.slots[i] = store.slots[j];
			i = j;
		}
	}
	store.slots[i] = NULL;
	store.count--;
}

void shared_blob_put(const void *data)
{
	struct blob *b;

	if (!data)
		return;
	b = blob_of(data);
	store.refs--;
	if (--b->refs)
		return;
	unlink_blob(b);
	store.bytes -= blob_bytes(b->len);
	free(b);
	if (!store.count) { /* the last table went: nothing stays behind */
		free(store.slots);
		store.slots = NULL;
		store.cap = 0;
	}
}

size_t shared_blob_charge(const void *data)
{
	/* malloc's own header too: what the blob costs the host. */
	return data ? blob_bytes(blob_of(data)->len) + 16 : 0;
}

struct shared_blobs_stats shared_blobs_stats(void)
{
	return (struct shared_blobs_stats){
		.blobs = store.count,
		.refs = store.refs,
		.bytes = store.bytes + 16 * store.count + store.cap * sizeof(*store.slots),
	};
}
