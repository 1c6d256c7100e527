/* jsampled's top-level state, shared by the event loop and the query
 * server. */
#ifndef JSAMPLED_DAEMON_H
#define JSAMPLED_DAEMON_H

#include <stdbool.h>
#include <stdint.h>

#include "clock.h"
#include "jvm_discovery.h"
#include "options.h"
#include "process.h"
#include "ringbuf_drain.h"

struct sampler;

struct daemon_counters {
	uint64_t agents_accepted;
	uint64_t agents_refused;
	uint64_t agents_refused_by_rules;
	uint64_t processes_refused_limit; /* --max-processes reached, nothing to evict */
	uint64_t processes_evicted;       /* exited ones forgotten early to make room */
	uint64_t state_saves;
	uint64_t state_save_errors;
	uint64_t agents_closed_bad_input;
	uint64_t queries;
	uint64_t queries_refused;
	uint64_t drains;
};

struct daemon {
	struct options opt;
	struct sampler *sampler;
	struct ringbuf_drain drain;
	struct process_table processes;
	struct discovery discovery;
	struct daemon_counters counters;
	uint64_t started_ns;
	bool stop;
	bool paused; /* `sampling off`: perf events disabled */
};

#endif
