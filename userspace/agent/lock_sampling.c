/* SPDX-License-Identifier: GPL-2.0-only */
#include "lock_sampling.h"

#include <stdatomic.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static _Atomic uint64_t interval; /* set by the agent thread, read by every waiter */
static _Thread_local double left;   /* ns of wait before the next sample */
static _Thread_local uint64_t rng;  /* xorshift64*, seeded per thread */

void lock_sampling_init(uint64_t interval_ns)
{
	interval = interval_ns;
}

double neg_log(double u)
{
	/* u = m * 2^e with m in [1, 2): ln u = e ln 2 + ln m, and ln m by
	 * the atanh series in t = (m - 1) / (m + 1) <= 1/3. */
	int e = 0;
	double m = u, t, t2, s;

	if (u <= 0)
		return 40.0;
	while (m < 1.0) {
		m *= 2.0;
		e--;
	}
	while (m >= 2.0) {
		m /= 2.0;
		e++;
	}
	t = (m - 1.0) / (m + 1.0);
	t2 = t * t;
	s = 2.0 * t * (1.0 + t2 * (1.0 / 3 + t2 * (1.0 / 5 + t2 * (1.0 / 7 + t2 * (1.0 / 9 + t2 / 11)))));
	return -(e * 0.69314718055994530942 + s);
}

static double uniform(void)
{
	if (!rng) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		rng = ((uint64_t)syscall(SYS_gettid) << 32) ^ (uint64_t)ts.tv_nsec ^ 0x9e3779b97f4a7c15ull;
		if (!rng)
			rng = 1;
	}
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	/* 53 random bits, in (0, 1] */
	return (double)(((rng * 0x2545f4914f6cdd1dull) >> 11) + 1) / 9007199254740992.0;
}

int lock_sampling_on(void)
{
	return interval != 0;
}

int lock_wait_sampled(uint64_t waited)
{
	uint64_t mean = interval;

	if (!mean)
		return 0;
	if (left <= 0)
		left = (double)mean * neg_log(uniform());
	left -= (double)waited;
	if (left > 0)
		return 0;
	left = (double)mean * neg_log(uniform());
	return 1;
}
