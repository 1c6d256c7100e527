/* SPDX-License-Identifier: GPL-2.0-only */
#include "off_cpu_waits.h"

#include <string.h>

#include "daemon/decode/stack_fragment.h"

/* A thread's tick: tid and time together (0 is no key of a u64_map). */
void off_cpu_waits_init(struct off_cpu_waits *w)
{
	memset(w, 0, sizeof(*w));
	u64_map_init(&w->by_sample);
}

void off_cpu_waits_free(struct off_cpu_waits *w)
{
	u64_map_free(&w->by_sample);
}

void off_cpu_waits_take(struct off_cpu_waits *w, const struct js_sample *s)
{
	struct js_wait wait;

	if (s->stack_len != sizeof(wait)) {
		w->malformed++;
		return;
	}
	memcpy(&wait, s->stack, sizeof(wait));
	if (wait.ticks == 0) {
		w->malformed++;
		return;
	}
	if (w->by_sample.count >= OFF_CPU_WAITS_MAX) {
		w->forgotten += w->by_sample.count;
		u64_map_clear(&w->by_sample);
	}
	if (u64_map_put(&w->by_sample, sample_key(s),
			(uint64_t)wait.ticks << 32 | (uint64_t)(wait.runnable_ns * 2 > wait.waited_ns) << 31 |
				(wait.syscall & 0x7fffffffu)) == 0)
		w->taken++;
}

bool off_cpu_waits_use(struct off_cpu_waits *w, const struct js_sample *s, struct off_cpu_weight *out)
{
	uint64_t key = sample_key(s), *v = w->by_sample.count ? u64_map_get(&w->by_sample, key) : NULL;

	if (!v)
		return false;
	out->ticks = (uint32_t)(*v >> 32);
	out->runnable = (*v >> 31) & 1;
	out->syscall = (uint32_t)*v & 0x7fffffffu;
	if (out->syscall == 0x7fffffffu)
		out->syscall = UINT32_MAX;
	u64_map_del(&w->by_sample, key);
	return true;
}
