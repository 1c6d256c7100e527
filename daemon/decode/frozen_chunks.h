/* SPDX-License-Identifier: GPL-2.0-only */
/* The frozen frames of the virtual threads mounted on one process's
 * carriers, from their JS_SAMPLE_CHUNK records (bpf/sampler.h) until the
 * sample of the same tick is settled - possibly much later, when a held
 * sample is decoded. The decoder walks on into them where a virtual
 * thread's thawed frames return into the continuation's return barrier
 * (unwind_chunk.c). Bounded: past FROZEN_CHUNKS_MAX waiting (their samples
 * dropped or never sent), all are forgotten, counted. */
#ifndef JSAMPLED_FROZEN_CHUNKS_H
#define JSAMPLED_FROZEN_CHUNKS_H

#include <stdint.h>

#include "userspace/common/u64_map.h"
#include "stack_fragment.h"

#define FROZEN_CHUNKS_MAX 1024

struct frozen_chunks {
	struct u64_map by_sample; /* mix(tid, time) -> struct js_sample * (a copy) */
	uint64_t taken, forgotten;
};

void frozen_chunks_init(struct frozen_chunks *f);
void frozen_chunks_free(struct frozen_chunks *f);
/* A JS_SAMPLE_CHUNK record: kept for its sample. */
void frozen_chunks_take(struct frozen_chunks *f, const struct js_sample *chunk);
/* The chunk record of sample s, or NULL. */
const struct js_sample *frozen_chunks_of(const struct frozen_chunks *f, const struct js_sample *s);
/* Sample s is settled: its chunk, if one came, is used up. */
void frozen_chunks_release(struct frozen_chunks *f, const struct js_sample *s);

#endif
