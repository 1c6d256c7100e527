/* SPDX-License-Identifier: GPL-2.0-only */
/* The agent connections of the event loop: accepting them (a user may hold
 * only so many that have not said HELLO), reading and writing them,
 * pulling code maps, and ending an agent's authority when its process
 * exits (its pidfd becomes readable), execs another program (the BPF exec
 * event, and a periodic check), or stops answering. */
#ifndef JSAMPLED_AGENT_CONNS_H
#define JSAMPLED_AGENT_CONNS_H

#include <stdint.h>
#include <sys/types.h>

struct daemon;
struct discovery_hooks;
struct watch;

void agents_accept(struct daemon *d, int listen_fd);
void agents_on_event(struct daemon *d, struct watch *w, uint32_t events);
/* The pidfd of an agent's process became readable: it exited. */
void agents_on_exit(struct daemon *d, struct watch *pidfd_watch);
/* pid exec'd a new program (exec event). */
void agents_on_exec(struct daemon *d, pid_t pid);
/* After each drain: pull agents whose processes have samples waiting,
 * refresh the others' code maps now and then. fresh_ns (0: none): also
 * every agent not asked within it (just before a drain). */
void agents_schedule_fetches(struct daemon *d, uint64_t now, uint64_t fresh_ns);
/* Periodic: HELLO and FETCH timeouts, identity checks, per-user limits. */
void agents_maintain(struct daemon *d, uint64_t now);
/* After a reload: agents of processes the new rules exclude are let go. */
void agents_apply_rules(struct daemon *d);
void agents_close_all(struct daemon *d);
/* Tells every connected agent the sampling settings (--alloc, --lock). */
void agents_configure_all(struct daemon *d);
/* What discovery asks about agents (has pid one? is a container's socket
 * still used?) and tells about their listening sockets; ctx is the daemon. */
extern const struct discovery_hooks agent_discovery_hooks;

#endif
