/* SPDX-License-Identifier: GPL-2.0-only */
/* Native (C/C++) frames of a sample, for the mixed view: when a thread was
 * interrupted outside the JVM's generated code - in a JNI library, libjvm,
 * libc, or a JVM-internal thread's own code - its native frames are
 * unwound from the copied stack with DWARF CFI up to the first Java frame,
 * named, and put above the Java frames of the decoded trace (below any
 * kernel frames); below a JNI upcall, between the native method and the
 * Java code it called. A non-Java process's trace is all native frames.
 *
 * This is what a trace needs and where the names go; the unwinding
 * itself happens elsewhere: in jsampled's sandboxed helper
 * (native_live.h), or in jsreplay's own unwinder for a recording
 * (daemon/replay/native_replay.c). Both put the same names in the same
 * places, so a replay finds the live profile. */
#ifndef JSAMPLED_NATIVE_FRAMES_H
#define JSAMPLED_NATIVE_FRAMES_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon/process/process.h"

#define NATIVE_FRAMES_MAX 64

/* The walks one sample needs. */
struct native_plan {
	bool leaf;                /* from the interrupted frame up to the code cache */
	uint64_t stop_lo, stop_hi; /* the code cache (0, 0: none, a non-Java process) */
	uint32_t leaf_at;         /* where the leaf's frames go in the trace */
	unsigned n_cross;
	struct native_crossing {
		uint32_t after; /* the trace frame (the native method) they follow */
		uint64_t pc, sp, fp; /* the call stub's caller, to unwind from */
	} cross[TRACE_MAX_CROSSINGS];
};

/* What sample s of p needs for trace tr, whose first java_n frames are the
 * decoded Java ones (kernel frames may follow). Clears tr's crossing marks.
 * false if it needs nothing. */
bool native_plan_make(const struct process *p, const struct js_sample *s, struct trace *tr, uint32_t java_n,
		      struct native_plan *plan);

/* The frames the walks found, by name id (kernel_symbols_intern), each
 * list innermost first: the crossings' in order, then the leaf's. */
struct native_found {
	unsigned n_lists;
	unsigned n[TRACE_MAX_CROSSINGS + 1];
	uint32_t id[TRACE_MAX_CROSSINGS + 1][NATIVE_FRAMES_MAX];
};

/* Puts them into tr as plan says (as many as fit, the outermost kept). */
void native_plan_apply(const struct native_plan *plan, const struct native_found *found, struct trace *tr);

#endif
