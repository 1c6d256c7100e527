/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Native frames in the running service (--native-stacks): the process
 * table's add_native_frames hook. A sample that needs native frames
 * (native_frames.h) is sent to the sandboxed helper (native_client.h) and
 * its trace waits for the answer, while everything else goes on; the
 * answer's names are escaped and interned, put into the trace, and the
 * trace goes into its tree. Before a process's first walk, and again when
 * the helper met a pc in no known module (at most once a second), the
 * helper is given what it needs: the process's mappings (recorded as
 * REC_MAPS, its vDSO as REC_VDSO, so jsreplay unwinds the same samples the
 * same way), and descriptors of its mapped files and perf map
 * (native_sources.h).
 *
 * A sample whose walk is lost (the helper died, was late, or the queue was
 * full) keeps its Java frames. A process the helper failed on three times
 * gets no native frames any more (counted, logged): a crafted library
 * costs its own process's native view, not everyone's.
 */
#ifndef JSAMPLED_NATIVE_LIVE_H
#define JSAMPLED_NATIVE_LIVE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "daemon/process/process.h"

struct daemon;
struct stat_field;

#define NATIVE_STRIKES_MAX 3u

struct native_live_counters {
	uint64_t walks;            /* samples sent to the helper */
	uint64_t completed;        /* ... that got their native frames */
	uint64_t fallback;         /* ... that kept only their Java frames (lost, queue full, no helper) */
	uint64_t bad_answers;      /* answers that did not parse (Java frames only) */
	uint64_t refreshes;        /* mappings read and sent */
	uint64_t files_sent;
	uint64_t files_refused;    /* not the mapped file, not regular, too large, unreachable without links */
	uint64_t perf_maps_sent;
	uint64_t perf_maps_refused; /* another user's, linked, too large */
	uint64_t processes_disabled; /* the helper failed on them NATIVE_STRIKES_MAX times */
};

/* Sets up the helper for d (from d->opt; it starts at the first walk).
 * 0, or -1 (no memory; the user for it does not exist). */
int native_live_init(struct daemon *d, char *why, size_t whylen);
/* Waits up to timeout_ms for the answers out, then gives up on the rest
 * (they keep their Java frames) and ends the helper. */
void native_live_free(struct daemon *d, unsigned timeout_ms);

/* The hook (process_hooks.add_native_frames; ctx: the daemon). */
bool native_live_frames(void *ctx, struct recording *rec, struct process *p, const struct js_sample *s,
			enum decode_status st, struct trace *tr, uint32_t java_n);

/* The event loop's part: the helper's socket's events (it is watched as
 * W_NATIVE), the ticks, a reaped child (true if it was the helper). */
void native_live_on_event(struct daemon *d, uint32_t events);
void native_live_tick(struct daemon *d, uint64_t now_ns);
bool native_live_child_exited(struct daemon *d, pid_t pid, int status);

/* stats: the helper's counters and these, as name/value pairs; n at most
 * cap. Returns how many. */
/* The running helper's CPU time so far, in ns (0: none runs). */
uint64_t native_live_helper_cpu_ns(const struct daemon *d);
unsigned native_live_stats(const struct daemon *d, struct stat_field *out, unsigned cap);

#endif
