/* SPDX-License-Identifier: GPL-2.0-only */
/* jsampled's top-level state, shared by the event loop and the modules it
 * dispatches to (agent connections, queries, discovery). */
#ifndef JSAMPLED_DAEMON_H
#define JSAMPLED_DAEMON_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon/support/clock.h"
#include "daemon/jvm/jvm_discovery.h"
#include "options.h"
#include "daemon/process/process.h"
#include "daemon/ingest/ringbuf_drain.h"
#include "uid_counts.h"
#include "watch.h"

struct sampler;
struct native_live;

struct daemon_counters {
	uint64_t agents_accepted;
	uint64_t agents_refused;          /* a second agent for one process */
	uint64_t agents_refused_by_rules;
	uint64_t agents_refused_not_jvm;  /* HELLO from a process that maps no libjvm.so */
	uint64_t agents_refused_user_limit; /* max-processes-per-user / max-user-mb */
	uint64_t agents_over_limit;       /* disconnected: agent data past max-model-mb */
	uint64_t agent_conns_refused;     /* max-agent-connections-per-user */
	uint64_t agents_ended_exec;       /* the process exec'd or changed user: authority ended */
	uint64_t agents_ended_exit;       /* the process exited while its connection stayed */
	uint64_t agents_said_bye;         /* connections ended by the agent's BYE (its JVM exiting) */
	uint64_t processes_refused_limit; /* --max-processes reached, nothing to evict */
	uint64_t processes_evicted;       /* exited ones forgotten early to make room */
	uint64_t state_saves;
	uint64_t state_save_errors;
	uint64_t agents_closed_bad_input;
	uint64_t queries;
	uint64_t queries_refused;         /* malformed, too long */
	uint64_t queries_refused_user_limit; /* max-queries-per-user */
	uint64_t renders_killed;          /* a query's render passed its deadline */
	uint64_t drains;
	uint64_t startup_sampled;      /* JVMs sampled from their exec on */
	uint64_t startup_attached;     /* ... whose agent then came */
	uint64_t startup_not_attached; /* ... that exited or gave up before it */
	uint64_t sigquit_events;       /* SIGQUIT handlers seen installed (attach now) */
	uint64_t trees_frozen;         /* trees capped at their size: a memory limit reached */
};

struct daemon {
	struct options opt;
	int argc;      /* for SIGHUP */
	char **argv;
	struct sampler *sampler;
	struct native_live *native; /* --native-stacks: the helper (native_live.h) */
	struct ringbuf_drain drain;
	struct process_table processes;
	struct discovery discovery;
	struct event_loop loop;
	struct uid_counts agent_conns; /* agent connections before HELLO, per uid */
	struct uid_counts query_conns; /* open query connections, per uid */
	struct daemon_counters counters;
	uint64_t started_ns;
	uint64_t next_save_ns;
	uint64_t next_sweep_ns; /* the perf events' backstop sweep (main.c, maintenance) */
	uint64_t next_drain_ns; /* the drain timer's next drain (main.c, on_tick) */
	int drain_timer_fd;
	uint64_t drain_timer_due; /* what it is armed for (0: fired, not armed again yet) */
	bool drain_fetch_asked;   /* the agents were asked for their news before the next drain */
	uint64_t exec_events_lost; /* the sampler's count when the agents were last all checked */
	bool stop;
	bool paused; /* `sampling off`: perf events disabled */
	bool has_readers;  /* --readers-group exists (resolved at start) */
	bool memory_pressure_logged;
	/* The unprivileged user of the sandboxes (query renders, the native
	 * helper): privileges.h. */
	bool has_sandbox_user;
	uid_t sandbox_uid;
	gid_t sandbox_gid;
	gid_t readers_gid;
};

#endif
