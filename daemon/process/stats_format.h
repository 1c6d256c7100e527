/* SPDX-License-Identifier: GPL-2.0-only */
/* A process's counters as text or JSON, from one list of fields each, so the
 * two formats always carry the same numbers (the query socket's `stats`, and
 * jsreplay's). */
#ifndef JSAMPLED_STATS_FORMAT_H
#define JSAMPLED_STATS_FORMAT_H

#include <stdbool.h>

#include "userspace/common/wire.h"
#include "process.h"
#include "stats.h"

/* One named counter: text lines are "name value", JSON members "name":value. */
struct stat_field {
	const char *name;
	unsigned long long value;
};

struct stat_real {
	const char *name;
	double value;
};

/* Writes fields: as JSON members (each followed by a comma) or text lines. */
void stats_format_list(const struct stat_field *f, size_t n, struct wbuf *out, bool json);
void stats_format_reals(const struct stat_real *f, size_t n, struct wbuf *out, bool json);
/* The same, grouped: a JSON member "group":{...}, (followed by a comma), or
 * text lines named group_name. */
void stats_format_group(const char *group, const struct stat_field *f, size_t n, struct wbuf *out, bool json);
#define STATS_N(a) (sizeof(a) / sizeof((a)[0]))
/* The decoding counters, percentages, failure reasons and rules. In JSON
 * these are members of an object the caller opened, the last one without a
 * trailing comma. */
void stats_format_decode(const struct decode_stats *s, struct wbuf *out, bool json);
/* One process: its identity, sizes, limits and decoding counters (a whole
 * JSON object, or text lines). */
void stats_format_process(const struct process *p, struct wbuf *out, bool json);
const char *process_state_name(enum process_state s);
/* The state a client sees: also "starting" for a process sampled since its
 * exec whose agent has not come yet. */
const char *process_state_label(const struct process *p);
/* Samples of Java threads: resolved + incomplete + failed; and the share
 * of them with a trace (resolved + incomplete), in percent. */
uint64_t stats_java_samples(const struct decode_stats *s);
double stats_resolved_pct(const struct decode_stats *s);

#endif
