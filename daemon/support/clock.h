/* SPDX-License-Identifier: GPL-2.0-only */
/* CLOCK_MONOTONIC in nanoseconds: the clock of bpf_ktime_get_ns() and of
 * the agent's event timestamps. */
#ifndef JSAMPLED_CLOCK_H
#define JSAMPLED_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CLOCK_REALTIME - CLOCK_MONOTONIC: what turns a sample's time into wall
 * clock. */
static inline uint64_t wall_offset_ns(void)
{
	uint64_t m = monotonic_ns(), r = realtime_ns();

	return r > m ? r - m : 0;
}

#endif
