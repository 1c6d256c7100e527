/* SPDX-License-Identifier: GPL-2.0-only */
/* The BPF sampler's lifecycle: open the skeleton, set its knobs, load, run
 * it on cpu-clock perf events (one per thread of each target process, or
 * one per CPU: sampler_events.h), and manage the maps jsampled fills
 * (target processes, per-thread facts). */
#ifndef JSAMPLED_SAMPLER_BPF_H
#define JSAMPLED_SAMPLER_BPF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bpf/sampler.h"
#include "sampler_events.h"

/* cpu-clock periods down to 10 us; the option table takes its range from
 * here. */
#define SAMPLER_MIN_HZ 1
#define SAMPLER_MAX_HZ 100000

struct sampler_config {
	enum sample_events events; /* which tasks the timers interrupt */
	unsigned frequency_hz;
	unsigned fragment_bytes;
	unsigned fill_bytes;
	bool kernel_stacks;
	bool native_stacks;
	/* Off-CPU samples too, a tick every 1/frequency_hz s of a thread's
	 * time off CPU (bpf/sampler.h, struct js_wait). */
	bool offcpu;
	size_t ringbuf_bytes;    /* power of two, multiple of the page size */
	size_t wakeup_watermark; /* bytes pending before the consumer is woken */
	int watch_exec;          /* report execs (for attaching to new JVMs) */
};

struct sampler;

/* Returns 0 or a negative errno; err explains failures for the operator. */
int sampler_open(struct sampler **out, const struct sampler_config *cfg, char *err, size_t errlen);
void sampler_close(struct sampler *s);

/* fd of the ring buffer map, for the drain. */
int sampler_ringbuf_fd(const struct sampler *s);
/* fd of the exec events' ring buffer (struct js_exec_event), -1 if off. */
int sampler_exec_ringbuf_fd(const struct sampler *s);
/* Reports SIGQUIT handlers installed by targets on the exec events' ring
 * (JS_EXEC_SIGQUIT) while on: a hook on every syscall's entry, so jsampled
 * turns it on only while a starting JVM waits to be attached. 0 or -errno. */
int sampler_watch_sigquit(struct sampler *s, bool on);
/* A new sampling frequency, without losing the loaded program (SIGHUP). */
int sampler_set_frequency(struct sampler *s, unsigned frequency_hz);
/* Enables or disables every perf event, and the off-CPU programs (a
 * paused sampler costs nothing). */
int sampler_enable(struct sampler *s, int on);
/* Off-CPU sampling on or off (the programs detached: nothing runs at a
 * switch); -EOPNOTSUPP if the sampler was opened without it. */
int sampler_set_offcpu(struct sampler *s, bool on);
bool sampler_offcpu(const struct sampler *s);
/* The perf events: their mode's name ("threads" or "cpus") and counters. */
const char *sampler_events_name(const struct sampler *s);
void sampler_read_events(const struct sampler *s, struct sampler_events_counters *c);
/* Periodic: closes what exited processes left open (sampler_events_sweep). */
void sampler_sweep(struct sampler *s);

/* Starts sampling pid (or updates its facts): in mode threads, opens its
 * threads' events the first time. -errno if it cannot be sampled. */
int sampler_add_target(struct sampler *s, pid_t pid, const struct js_target *tg);
int sampler_remove_target(struct sampler *s, pid_t pid);
/* Per-thread entries belong to a process (pid): set writes pid into the
 * entry, the others change or remove an entry only while it is pid's. */
int sampler_set_thread(struct sampler *s, pid_t pid, pid_t tid, const struct js_thread_info *ti);
int sampler_forget_thread(struct sampler *s, pid_t pid, pid_t tid);
/* Sets how far up the thread's stack the copy goes (0: to its end). */
int sampler_set_copy_end(struct sampler *s, pid_t pid, pid_t tid, uint64_t end);
/* Sets the most bytes copied for the thread (0: the configured size). */
int sampler_set_max_copy(struct sampler *s, pid_t pid, pid_t tid, uint32_t bytes);
/* Forgets how far the thread's copies covered its stack without a gap
 * (jsampled's image of it lost its words): its next capped copy brings
 * gap-filling windows. */
int sampler_uncover_thread(struct sampler *s, pid_t pid, pid_t tid);
/* Adds enum js_thread_flags to the thread's. */
int sampler_add_thread_flags(struct sampler *s, pid_t pid, pid_t tid, uint32_t flags);
/* Sets the thread's enum js_thread_flags. */
int sampler_set_thread_flags(struct sampler *s, pid_t pid, pid_t tid, uint32_t flags);

/* The kernel's run-time statistics of the sampling program (non-zero only
 * while kernel.bpf_stats_enabled is 1). */
int sampler_prog_stats(struct sampler *s, uint64_t *run_time_ns, uint64_t *run_cnt);
/* The same for the off-CPU programs (the scheduler's switches, system
 * calls' returns); zeros if off-CPU sampling is off. */
void sampler_offcpu_prog_stats(struct sampler *s, uint64_t *switch_ns, uint64_t *switch_cnt, uint64_t *exit_ns,
			       uint64_t *exit_cnt);

/* Sum of the per-CPU counters. */
int sampler_read_counters(struct sampler *s, struct js_counters *sum);

#endif
