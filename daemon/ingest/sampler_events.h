/* SPDX-License-Identifier: GPL-2.0-only */
/* The perf events that run the BPF sampler: software cpu-clock timers.
 *
 * Mode threads (the default): one event per thread of each target process,
 * opened when the process becomes a target. A thread created later by a
 * thread that has an event inherits it (perf_event_attr.inherit), so only
 * the threads that exist at that moment get an event (and a descriptor)
 * of their own; the copies go with the events. Only the targets' threads
 * are interrupted: every other task on the host, jsampled included, runs
 * as if nothing sampled. Each timer interrupt is expensive on virtual
 * machines (docs/hotspot.md, section 4): a CPU-bound process next to a
 * 10 kHz per-CPU sampler lost about a third of its CPU time to the
 * interrupts, and jsampled's own CPU per sample fell by a fifth without
 * them (docs/performance.md, "What keeps a sample cheap").
 *
 * Mode cpus: one event per online CPU, interrupting every task; the BPF
 * program passes over those of other processes.
 *
 * A thread that a not yet sampled thread creates while its process's
 * events are being opened shows up only in a later listing of the
 * process's threads, and may or may not have inherited an event by then:
 * it gets an event of its own with an odd period (the first events' is
 * even, a nanosecond apart), and so do the threads it creates. The BPF
 * program drops a thread's odd-period ticks once even-period ones have
 * shown up (bpf/sampler.h, js_thread_info.ticked): every thread is
 * sampled once. */
#ifndef JSAMPLED_SAMPLER_EVENTS_H
#define JSAMPLED_SAMPLER_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum sample_events {
	SAMPLE_EVENTS_THREADS,
	SAMPLE_EVENTS_CPUS,
};

struct sampler_events;

struct sampler_events_counters {
	unsigned cpus;           /* CPUs with an event (mode cpus) */
	uint64_t processes;      /* processes with events now (mode threads) */
	uint64_t events;         /* events open now, one descriptor each */
	uint64_t doubled;        /* threads given a possibly second (odd-period) event, ever */
	uint64_t open_failed;    /* threads whose event could not be opened, ever */
	uint64_t swept;          /* processes whose events were closed by a sweep, ever */
};

/* Opens the per-CPU events at once in mode cpus; mode threads opens none
 * until sampler_events_add. prog_fd: the BPF program each event runs.
 * 0, or -errno with err saying why. */
int sampler_events_open(struct sampler_events **out, enum sample_events mode, int prog_fd, unsigned frequency_hz,
			char *err, size_t errlen);
void sampler_events_close(struct sampler_events *e);
enum sample_events sampler_events_mode(const struct sampler_events *e);

/* Mode threads: pid's threads are interrupted from now on (nothing if they
 * already are). Returns the number of events opened, or -errno if none
 * could be (the process is gone, or no descriptors are left). Mode cpus:
 * 0. */
int sampler_events_add(struct sampler_events *e, pid_t pid);
/* Mode threads: pid's threads are interrupted no more. (Until then, the
 * event of a thread that exited stays open: the copies its descendants
 * inherited hang on it, whoever lives.) */
void sampler_events_remove(struct sampler_events *e, pid_t pid);

/* Closes the events of processes that have exited (a backstop: jsampled
 * removes a process when it learns of its end; a slip would keep a
 * descriptor per thread it had). */
void sampler_events_sweep(struct sampler_events *e);

/* A new period for every event: mode cpus changes it in place, mode threads
 * opens each process's events anew (an inherited copy keeps the period of
 * its creation). */
int sampler_events_set_frequency(struct sampler_events *e, unsigned frequency_hz);
/* Pauses or resumes every event, inherited copies included. */
int sampler_events_enable(struct sampler_events *e, bool on);
void sampler_events_read(const struct sampler_events *e, struct sampler_events_counters *c);

#endif
