// SPDX-License-Identifier: GPL-2.0-only
/* A process that only makes cheap system calls (getppid), printing every
 * 100 ms "p EPOCH_MS CALLS" for SECONDS: what the system-call hooks the
 * off-CPU sampler attaches cost the host's other processes.
 * Usage: syscall_loop SECONDS */
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now_s(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double end = now_s(CLOCK_MONOTONIC) + (argc > 1 ? atof(argv[1]) : 10), next = 0;
	unsigned long long calls = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (;;) {
		for (int i = 0; i < 4096; i++)
			syscall(SYS_getppid);
		calls += 4096;
		double t = now_s(CLOCK_MONOTONIC);
		if (t >= next) {
			printf("p %.0f %llu\n", now_s(CLOCK_REALTIME) * 1000, calls);
			next = t + 0.1;
		}
		if (t >= end)
			return 0;
	}
}
