/* SPDX-License-Identifier: GPL-2.0-only */
#include "frozen_chunks.h"

#include <stdlib.h>
#include <string.h>

/* A thread's tick: tid and time together (0 is no key of a u64_map). */
void frozen_chunks_init(struct frozen_chunks *f)
{
	memset(f, 0, sizeof(*f));
	u64_map_init(&f->by_sample);
}

static void forget_all(struct frozen_chunks *f)
{
	for (size_t i = 0; i < f->by_sample.cap; i++)
		if (f->by_sample.slots[i].key)
			free((void *)(uintptr_t)f->by_sample.slots[i].val);
	f->forgotten += f->by_sample.count;
	u64_map_free(&f->by_sample);
	u64_map_init(&f->by_sample);
}

void frozen_chunks_free(struct frozen_chunks *f)
{
	forget_all(f);
	u64_map_free(&f->by_sample);
}

void frozen_chunks_take(struct frozen_chunks *f, const struct js_sample *chunk)
{
	size_t bytes = sizeof(*chunk) + chunk->stack_len;
	uint64_t key = sample_key(chunk), *old;
	struct js_sample *copy;

	if (f->by_sample.count >= FROZEN_CHUNKS_MAX)
		forget_all(f);
	if (!(copy = malloc(bytes)))
		return;
	memcpy(copy, chunk, bytes);
	if ((old = u64_map_get(&f->by_sample, key)))
		free((void *)(uintptr_t)*old);
	if (u64_map_put(&f->by_sample, key, (uint64_t)(uintptr_t)copy) != 0) {
		free(copy);
		return;
	}
	f->taken++;
}

const struct js_sample *frozen_chunks_of(const struct frozen_chunks *f, const struct js_sample *s)
{
	const uint64_t *v;

	if (f->by_sample.count == 0 || !(v = u64_map_get(&f->by_sample, sample_key(s))))
		return NULL;
	return (const struct js_sample *)(uintptr_t)*v;
}

void frozen_chunks_release(struct frozen_chunks *f, const struct js_sample *s)
{
	uint64_t key, *v;

	if (f->by_sample.count == 0)
		return;
	key = sample_key(s);
	if (!(v = u64_map_get(&f->by_sample, key)))
		return;
	free((void *)(uintptr_t)*v);
	u64_map_del(&f->by_sample, key);
}
