/* SPDX-License-Identifier: GPL-2.0-only */
/* The weights of one process's off-CPU samples, from their JS_SAMPLE_WAIT
 * records (bpf/sampler.h) until the sample of the same tick is put in the
 * CCT, possibly much later (a held sample). Keyed by thread and time, a
 * word each: no allocation per sample. Bounded: past OFF_CPU_WAITS_MAX
 * waiting (their samples dropped or never sent), all are forgotten,
 * counted. */
#ifndef JSAMPLED_OFF_CPU_WAITS_H
#define JSAMPLED_OFF_CPU_WAITS_H

#include <stdbool.h>
#include <stdint.h>

#include "bpf/sampler.h"
#include "userspace/common/u64_map.h"

#define OFF_CPU_WAITS_MAX 4096

struct off_cpu_waits {
	struct u64_map by_sample; /* mix(tid, time) -> ticks << 32 | runnable << 31 | system call */
	uint64_t taken, malformed, forgotten;
};

/* What an off-CPU sample weighs: its ticks (of the sampling period) and
 * the system call it waited in. */
struct off_cpu_weight {
	uint32_t ticks;
	uint32_t syscall; /* (uint32_t)-1: none */
	bool runnable;    /* runnable for most of the wait, not blocked */
};

void off_cpu_waits_init(struct off_cpu_waits *w);
void off_cpu_waits_free(struct off_cpu_waits *w);
/* A JS_SAMPLE_WAIT record: kept for its sample (a malformed one is counted). */
void off_cpu_waits_take(struct off_cpu_waits *w, const struct js_sample *s);
/* The weight of a JS_SAMPLE_OFFCPU sample, used up; false if none came
 * (or it was forgotten). */
bool off_cpu_waits_use(struct off_cpu_waits *w, const struct js_sample *s, struct off_cpu_weight *out);

#endif
