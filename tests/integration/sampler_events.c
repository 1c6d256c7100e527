/* SPDX-License-Identifier: GPL-2.0-only */
/* The perf events that run the sampler (daemon/ingest/sampler_events.h), on this
 * machine's kernel: a child process with threads that exist when it
 * becomes a target and a thread it starts afterwards, an empty BPF program
 * on the events, and its run count (BPF_ENABLE_STATS) as the witness of
 * which ticks reached it. Needs root (perf events on another process's
 * threads, a BPF program): as root or it fails saying so. */
#include <errno.h>
#include <linux/bpf.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "daemon/ingest/sampler_events.h"
#include "tests/unit/check.h"

#define HZ 1000

/* The child: two idle threads, then, per byte read from the pipe, a thread
 * that spins until it has had 300 ms of CPU (a thread created after the
 * events were opened), and the CPU time it got. On a busy machine that
 * takes longer, and the ticks it should get are counted from its CPU time,
 * not the wall clock; past 10 s it stops with what it has. */
static void *idle_thread(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static int64_t ns_of(clockid_t clock)
{
	struct timespec t;

	clock_gettime(clock, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void *spin_thread(void *arg)
{
	int64_t *cpu_ns = arg, wall0 = ns_of(CLOCK_MONOTONIC);
	volatile unsigned long x = 0;

	do {
		for (int i = 0; i < 100000; i++)
			x++;
		*cpu_ns = ns_of(CLOCK_THREAD_CPUTIME_ID);
	} while (*cpu_ns < 300000000 && ns_of(CLOCK_MONOTONIC) - wall0 < 10000000000);
	return NULL;
}

static void child_main(int cmd, int done)
{
	pthread_t t;
	char c;

	pthread_create(&t, NULL, idle_thread, NULL);
	pthread_create(&t, NULL, idle_thread, NULL);
	if (write(done, "r", 1) != 1)
		_exit(1);
	while (read(cmd, &c, 1) == 1) {
		int64_t cpu_ns = 0;

		pthread_create(&t, NULL, spin_thread, &cpu_ns);
		pthread_join(t, NULL);
		if (write(done, &cpu_ns, sizeof(cpu_ns)) != sizeof(cpu_ns))
			_exit(1);
	}
	_exit(0);
}

static int null_program(void)
{
	struct bpf_insn insns[] = {
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
		{.code = BPF_JMP | BPF_EXIT},
	};

	return bpf_prog_load(BPF_PROG_TYPE_PERF_EVENT, "null", "GPL", insns, 2, NULL);
}

static uint64_t runs(int prog)
{
	struct bpf_prog_info info = {0};
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(prog, &info, &len) == 0 ? info.run_cnt : 0;
}

/* Ticks that reached the program while the child's new thread spun, and
 * (in *expect, if given) how many its CPU time makes at hz. */
static uint64_t spin_ticks(int cmd, int done, int prog, int hz, double *expect)
{
	uint64_t before = runs(prog);
	int64_t cpu_ns;

	if (write(cmd, "s", 1) != 1 || read(done, &cpu_ns, sizeof(cpu_ns)) != sizeof(cpu_ns))
		return UINT64_MAX;
	if (expect)
		*expect = (double)cpu_ns * hz / 1e9;
	return runs(prog) - before;
}

/* Within 40 % of what the thread's CPU time makes (the timer's first
 * tick, the thread's start and end, and the kernel's tick jitter). */
static bool near(uint64_t ticks, double expect)
{
	fprintf(stderr, "  %" PRIu64 " ticks for %.0f expected from the thread's CPU time\n", ticks, expect);
	return expect >= 50 && ticks >= 0.6 * expect && ticks <= 1.4 * expect;
}

int main(void)
{
	int to_child[2], from_child[2], prog, stats;
	struct sampler_events *e = NULL;
	struct sampler_events_counters c;
	char err[256] = "", ready;
	pid_t child;
	uint64_t ticks;
	double expect = 0;

	if (geteuid() != 0) {
		fprintf(stderr, "sampler_events: needs root (perf events on another process, a BPF program)\n");
		return 1;
	}
	prog = null_program();
	stats = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (prog < 0 || stats < 0) {
		fprintf(stderr, "sampler_events: cannot load a BPF program or count its runs: %s\n",
			strerror(errno));
		return 1;
	}
	if (pipe(to_child) != 0 || pipe(from_child) != 0)
		return 1;
	child = fork();
	if (child == 0) {
		close(to_child[1]);
		close(from_child[0]);
		child_main(to_child[0], from_child[1]);
	}
	close(to_child[0]);
	close(from_child[1]);
	CHECK(read(from_child[0], &ready, 1) == 1);

	/* Mode threads: an event on each of its three threads, and the
	 * thread it starts later inherits one. */
	CHECK_EQ(sampler_events_open(&e, SAMPLE_EVENTS_THREADS, prog, HZ, err, sizeof(err)), 0);
	CHECK_EQ(sampler_events_add(e, child), 3);
	CHECK_EQ(sampler_events_add(e, child), 0); /* already */
	sampler_events_read(e, &c);
	CHECK_EQ(c.processes, 1);
	CHECK_EQ(c.events, 3);
	fprintf(stderr, "a thread started after its process's events opened:\n");
	ticks = spin_ticks(to_child[1], from_child[0], prog, HZ, &expect);
	CHECK(near(ticks, expect));

	/* Off: its copies too. */
	CHECK_EQ(sampler_events_enable(e, false), 0);
	CHECK(spin_ticks(to_child[1], from_child[0], prog, HZ, NULL) <= 5);
	CHECK_EQ(sampler_events_enable(e, true), 0);
	ticks = spin_ticks(to_child[1], from_child[0], prog, HZ, &expect);
	CHECK(near(ticks, expect));

	/* A new frequency opens the events anew, at it. */
	CHECK_EQ(sampler_events_set_frequency(e, HZ / 4), 0);
	sampler_events_read(e, &c);
	CHECK_EQ(c.events, 3);
	ticks = spin_ticks(to_child[1], from_child[0], prog, HZ / 4, &expect);
	CHECK(near(ticks, expect));

	/* Removed: none. */
	sampler_events_remove(e, child);
	sampler_events_read(e, &c);
	CHECK_EQ(c.events, 0);
	CHECK(spin_ticks(to_child[1], from_child[0], prog, HZ, NULL) <= 5);

	/* The sweep closes what an exited process left. */
	CHECK_EQ(sampler_events_add(e, child), 3);
	sampler_events_sweep(e);
	sampler_events_read(e, &c);
	CHECK_EQ(c.events, 3); /* still running */
	close(to_child[1]);
	waitpid(child, NULL, 0);
	sampler_events_sweep(e);
	sampler_events_read(e, &c);
	CHECK_EQ(c.events, 0);
	CHECK_EQ(c.swept, 1);
	CHECK_EQ(sampler_events_add(e, child), -ESRCH); /* gone */
	sampler_events_close(e);

	/* Mode cpus: one per online CPU at once; nothing per process. */
	CHECK_EQ(sampler_events_open(&e, SAMPLE_EVENTS_CPUS, prog, HZ, err, sizeof(err)), 0);
	sampler_events_read(e, &c);
	CHECK(c.cpus >= 1 && c.events == c.cpus);
	CHECK_EQ(sampler_events_add(e, getpid()), 0);
	CHECK_EQ(sampler_events_set_frequency(e, HZ / 2), 0);
	sampler_events_close(e);
	close(stats);
	close(prog);
	return CHECK_DONE();
}
