/* SPDX-License-Identifier: GPL-2.0-only */
/* Finding the JVMs on the host and loading the agent into them (zero-config
 * attach). Candidates come from exec events (the BPF sched_process_exec
 * program) and a periodic /proc scan; each is checked with backoff until it
 * maps libjvm.so and catches SIGQUIT, then attached once in a child process
 * (hotspot_attach.c) that the parent kills past its deadline. A JVM that
 * already runs our agent (-agentpath, or an earlier jsampled) is left
 * alone: its agent reconnects by itself. A JVM in another mount namespace
 * (a container) gets an agent socket of jsampled's inside it, released once
 * no profiled process of that namespace is left. */
#ifndef JSAMPLED_JVM_DISCOVERY_H
#define JSAMPLED_JVM_DISCOVERY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "userspace/common/u64_map.h"
#include "userspace/common/vec.h"
#include "daemon/service/options.h"
#include "target_root.h"

struct discovery_counters {
	uint64_t execs_seen;
	uint64_t jvms_found;
	uint64_t attached;
	uint64_t attach_failed;   /* attempts that failed, by any reason */
	uint64_t attach_timeouts; /* attach children killed at their deadline */
	uint64_t excluded;        /* JVMs the rules (or the JVM itself) opted out */
	uint64_t had_agent;       /* JVMs found already running our agent */
	uint64_t ns_released;     /* agent sockets in containers closed for disuse */
};

struct discovery_hooks {
	void *ctx;
	/* Whether jsampled already has a live agent for pid. */
	bool (*has_agent)(void *ctx, pid_t pid);
	/* A new listening socket for agents in another root: watch it. */
	void (*on_listener)(void *ctx, int fd);
	/* That socket is about to be closed: stop watching it. */
	void (*on_listener_closed)(void *ctx, int fd);
	/* Whether a process with a live agent is in the mount namespace. */
	bool (*ns_in_use)(void *ctx, uint64_t mnt_ns);
	/* A process that exec'd while jsampled ran turned out to map
	 * libjvm.so (a JVM embedded in a program that is no Java launcher):
	 * it may be sampled from now on, before its agent. NULL: nothing. */
	void (*on_young_jvm)(void *ctx, pid_t pid);
	/* Why pid has no agent (yet): the attach failed or cannot be made;
	 * the JVM's own words when it refused. NULL: nothing. */
	void (*on_attach_problem)(void *ctx, pid_t pid, const char *why);
};

struct ns_socket {
	uint64_t mnt_ns;
	pid_t made_for;         /* the JVM it was made for: its root is the way in */
	struct target_socket ts;
	uint64_t last_used_ns;  /* handed to an attach, or a live agent in the namespace */
};

struct discovery {
	const struct options *opt;
	struct discovery_hooks hooks;
	struct u64_map by_pid;       /* pid -> index in cands + 1 */
	VEC(struct candidate *) cands;
	VEC(struct ns_socket) ns_sockets;
	uint64_t next_scan_ns;
	uint64_t next_ns_check_ns;
	unsigned running;            /* attach children alive */
	unsigned early_waiting;      /* JVMs sampled since their exec, not attached yet: tick often */
	uint64_t self_mnt_ns;
	struct discovery_counters counters;
};

void discovery_init(struct discovery *d, const struct options *opt, const struct discovery_hooks *hooks);
void discovery_free(struct discovery *d);
/* An exec event: pid's image changed. */
void discovery_on_exec(struct discovery *d, pid_t pid, uint64_t now_ns);
/* pid can take an attach now (it caught SIGQUIT while sampled since its
 * exec): check it at the next tick, and quickly again while not ready. */
void discovery_attach_soon(struct discovery *d, pid_t pid, uint64_t now_ns);
/* Whether discovery is done with pid: attached, or decided not to (not a
 * JVM, excluded, opted out, -Xrs, attach failures). */
bool discovery_decided(struct discovery *d, pid_t pid);
/* pid is sampled since its exec: while it is not ready, check it often. */
void discovery_mark_early(struct discovery *d, pid_t pid);
/* The rules changed (SIGHUP): look at every JVM again, now. */
void discovery_recheck(struct discovery *d, uint64_t now_ns);
/* Periodic work: scan /proc when due, check due candidates, start attaches,
 * kill attach children past their deadline, release unused namespace
 * sockets. Cheap when nothing is due. */
void discovery_tick(struct discovery *d, uint64_t now_ns);
/* A child exited (the event loop reaps them all): true if it was an attach
 * child, whose outcome is then accounted for. */
bool discovery_child_exited(struct discovery *d, pid_t child, int wait_status, uint64_t now_ns);

#endif
