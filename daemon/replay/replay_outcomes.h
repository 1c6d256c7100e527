/* SPDX-License-Identifier: GPL-2.0-only */
/* What jsreplay reports about each decoded sample: its outcome (the rule
 * that found its top frame, or the failure reason) and its trace, as one
 * line at decode time (--outcomes, the corpus format) or, after the whole
 * replay, by method names as the agent finally resolved them (--traces,
 * the fixture format). */
#ifndef JSREPLAY_OUTCOMES_H
#define JSREPLAY_OUTCOMES_H

#include <stdbool.h>
#include <stdio.h>

#include "userspace/common/vec.h"
#include "daemon/decode/decoder.h"
#include "daemon/process/process.h"

/* "resolved", "incomplete", "not_java", "retry", "failed". */
const char *outcome_status_name(enum decode_status st);
/* "interpreted", "scan", ... for decoded samples; "not_java"; a failure
 * reason's name for failed ones. */
const char *outcome_name(enum decode_status st, int reason, const struct trace *tr);

/* --outcomes: one line, at decode time (names known by then). */
void outcome_print_line(FILE *f, const struct process *p, const struct js_sample *s, enum decode_status st,
			int reason, const struct trace *tr);

struct kept_trace {
	pid_t pid;
	uint32_t tid;
	uint64_t time_ns;
	enum decode_status status;
	int reason;
	uint8_t rule;
	uint32_t n;
	struct trace_frame *frames; /* root first */
};

/* --traces: every sample's outcome kept, printed after the replay. */
struct trace_log {
	VEC(struct kept_trace) v;
};

void trace_log_init(struct trace_log *l);
void trace_log_free(struct trace_log *l);
int trace_log_add(struct trace_log *l, const struct process *p, const struct js_sample *s, enum decode_status st,
		  int reason, const struct trace *tr);
/* One block per sample, top frame first, like a Java stack trace:
 *   sample tid 5744 time 16752205181380: resolved by interpreted
 *       java.util.HashMap.putVal (HashMap.java:631) bci 56, interpreted
 * names from table's processes as they are at the end of the replay. */
void trace_log_print(FILE *f, const struct trace_log *l, const struct process_table *table);

#endif
