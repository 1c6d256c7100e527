/* SPDX-License-Identifier: GPL-2.0-only */
/* Which lock waits are sampled: each thread draws exponentially
 * distributed amounts of wait time (mean: the lock interval) and samples
 * the wait in which its draw runs out, as HotSpot's heap sampling does
 * with allocated bytes. A wait of d ns is then sampled with probability
 * 1 - exp(-d / interval), which jsampled inverts into weights. */
#ifndef JSAGENT_LOCK_SAMPLING_H
#define JSAGENT_LOCK_SAMPLING_H

#include <stdint.h>

void lock_sampling_init(uint64_t interval_ns);
/* Whether lock waits are sampled at all. */
int lock_sampling_on(void);
/* Whether this thread's wait of waited ns is sampled (0 when off). */
int lock_wait_sampled(uint64_t waited);
/* -ln(u) for u in (0, 1], within 1e-6 (no libm in the agent). */
double neg_log(double u);

#endif
