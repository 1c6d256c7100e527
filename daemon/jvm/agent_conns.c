/* SPDX-License-Identifier: GPL-2.0-only */
#include "agent_conns.h"

#include <errno.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "admission.h"
#include "agent_link.h"
#include "daemon/service/daemon.h"
#include "jvm_startup.h"
#include "daemon/support/log.h"
#include "process_rules.h"
#include "procfs.h"
#include "daemon/ingest/sampler_bpf.h"
#include "daemon/ingest/sampler_targets.h"

#define REFRESH_FETCH_NS (1000ull * 1000000)  /* keep code maps fresh */
/* An agent whose answers brought nothing QUIET_AFTER times in a row is
 * asked every 1, 2 then 4 s and not before each drain: fifty settled JVMs
 * asked twice a second were a sixth of jsampled's CPU (and woke each JVM's
 * agent thread for nothing). A sample its code map lacks is held and asks
 * for a fetch at once (HELD_FETCH_NS), which ends the quiet. */
#define QUIET_AFTER 2
#define QUIET_MAX_SHIFT 2
#define HELD_FETCH_NS (20ull * 1000000)      /* fetch soon for held samples */
#define FETCH_TIMEOUT_NS (15ull * 1000000000) /* an agent that stops answering */
#define HELLO_TIMEOUT_NS (5ull * 1000000000)

/* A connection counts against its user's --max-agent-connections-per-user
 * until it says HELLO. */
static void uncount_pending(struct daemon *d, struct agent_link *l)
{
	if (l->counted_pending)
		uid_count_add(&d->agent_conns, l->peer.uid, -1);
	l->counted_pending = false;
}

static struct process *on_hello(void *ctx, struct agent_link *l, const char *vm_name, const char *vm_version,
				char *why, size_t whylen)
{
	struct daemon *d = ctx;
	struct process *p = admission_hello(d, l, vm_name, vm_version, why, whylen);

	/* Admitted or not, the connection no longer counts as pending. */
	uncount_pending(d, l);
	if (!p)
		log_info("not profiling pid %d: %s", (int)l->peer.pid, why);
	return p;
}

static int on_batch(void *ctx, struct agent_link *l, const void *payload, size_t len, struct batch_info *info,
		    char *why, size_t whylen)
{
	struct daemon *d = ctx;
	struct process *p = l->proc;
	size_t budget = admission_model_budget(d, p);
	int r = process_apply_batch(&d->processes, p, payload, len, info, budget, monotonic_ns());

	if (r == BATCH_OVER_LIMIT) {
		snprintf(why, whylen, "agent data over its limit (%zu MiB; --max-model-mb, --max-user-mb)", budget >> 20);
		p->over_limit = true;
		d->counters.agents_over_limit++;
		return -1;
	}
	if (r != BATCH_OK) {
		snprintf(why, whylen, "malformed BATCH");
		return -1;
	}
	sampler_targets_start(d, p);
	return 0;
}

static void on_config(void *ctx, uint64_t *alloc_interval, uint64_t *lock_interval)
{
	const struct daemon *d = ctx;

	*alloc_interval = d->opt.alloc ? d->opt.alloc_interval : 0;
	*lock_interval = d->opt.lock ? d->opt.lock_interval_us * 1000 : 0;
}

void agents_configure_all(struct daemon *d)
{
	uint64_t alloc, lock;

	on_config(d, &alloc, &lock);
	for (struct watch *w = d->loop.connections; w; w = w->next) {
		struct agent_link *l = w->obj;

		if (w->kind != W_AGENT || !l->proc)
			continue;
		if (agent_link_configure(l, alloc, lock) == 0)
			watch_mod(&d->loop, w, EPOLLIN | (agent_link_wants_write(l) ? EPOLLOUT : 0));
	}
}

static const struct agent_link_hooks hooks = {.on_hello = on_hello, .on_batch = on_batch, .config = on_config};

static void link_hooks(struct daemon *d, struct agent_link_hooks *h)
{
	*h = hooks;
	h->ctx = d;
}

/* Closes an agent connection. alive: whether its process still runs (it
 * then stays listed as agent-lost); the authority over the process ends
 * either way. */
static void close_agent(struct daemon *d, struct watch *w)
{
	struct agent_link *l = w->obj;
	struct process *p = l->proc;

	if (p) {
		/* After BYE the JVM is past VMDeath: count it as exited. */
		bool alive = !l->said_bye && peer_identity_check(&l->peer) == PEER_SAME;

		p->agent_said_bye = l->said_bye;
		d->counters.agents_said_bye += l->said_bye;
		log_info("agent of pid %d disconnected: %s%s", (int)p->pid, l->why_closed,
			 alive ? " (process still running: no longer sampled)" : "");
		uint64_t cpu = procfs_cpu_ns(p->pid, p->start_time);

		if (cpu > p->cpu_ns)
			p->cpu_ns = cpu; /* its last count, for cpu_covered_pct */
		sampler_targets_stop(d, p); /* and takes its samples still in the ring */
		p->link = NULL;
		process_agent_gone(&d->processes, p, alive, monotonic_ns());
	} else {
		log_debug("agent connection from pid %d closed: %s", (int)l->peer.pid, l->why_closed);
		d->counters.agents_closed_bad_input++;
	}
	uncount_pending(d, l);
	if (w->peer)
		watch_del(&d->loop, w->peer);
	watch_del(&d->loop, w); /* before its fd closes (watch.h) */
	agent_link_free(l);
}

void agents_accept(struct daemon *d, int lfd)
{
	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct agent_link *l;
		struct watch *w;

		if (fd < 0)
			return;
		l = agent_link_new(fd, monotonic_ns());
		if (!l) {
			close(fd);
			continue;
		}
		if (l->peer.uid != 0 && uid_count(&d->agent_conns, l->peer.uid) >= d->opt.max_agent_conns_per_user) {
			d->counters.agent_conns_refused++;
			agent_link_free(l);
			continue;
		}
		w = watch_add(&d->loop, W_AGENT, fd, l, EPOLLIN);
		if (!w) {
			agent_link_free(l);
			continue;
		}
		/* The process's pidfd becomes readable when it exits. */
		w->peer = watch_add(&d->loop, W_AGENT_PIDFD, l->peer.pidfd, w, EPOLLIN);
		if (w->peer)
			w->peer->peer = w;
		uid_count_add(&d->agent_conns, l->peer.uid, 1);
		l->counted_pending = true;
		d->counters.agents_accepted++;
	}
}

void agents_on_event(struct daemon *d, struct watch *w, uint32_t events)
{
	struct agent_link *l = w->obj;
	struct agent_link_hooks h;

	link_hooks(d, &h);
	if ((events & EPOLLIN) && agent_link_on_readable(l, &h) != 0) {
		close_agent(d, w);
		return;
	}
	if ((events & (EPOLLERR | EPOLLHUP)) && !(events & EPOLLIN)) {
		agent_link_close_reason(l, "connection error");
		close_agent(d, w);
		return;
	}
	if (agent_link_flush(l) != 0) {
		close_agent(d, w);
		return;
	}
	watch_mod(&d->loop, w, EPOLLIN | (agent_link_wants_write(l) ? EPOLLOUT : 0));
}

void agents_on_exit(struct daemon *d, struct watch *pw)
{
	struct watch *w = pw->obj;
	struct agent_link *l = w->obj;

	if (l->proc)
		d->counters.agents_ended_exit++;
	agent_link_close_reason(l, "the process exited");
	close_agent(d, w);
}

void agents_on_exec(struct daemon *d, pid_t pid)
{
	for (struct watch *w = d->loop.connections; w; w = w->next) {
		struct agent_link *l = w->obj;
		if (w->kind != W_AGENT || l->peer.pid != pid)
			continue;
		d->counters.agents_ended_exec++;
		agent_link_close_reason(l, "the process exec'd another program: its agent's authority ended");
		close_agent(d, w);
		return;
	}
}

void agents_schedule_fetches(struct daemon *d, uint64_t now, uint64_t fresh_ns)
{
	for (struct watch *w = d->loop.connections; w; w = w->next) {
		struct agent_link *l;
		struct process *p;
		uint64_t wait;

		if (w->kind != W_AGENT)
			continue;
		l = w->obj;
		p = l->proc;
		if (!p || l->fetch_in_flight)
			continue;
		if (p->wants_fetch) {
			wait = HELD_FETCH_NS;
		} else if (l->quiet_batches >= QUIET_AFTER) {
			uint32_t shift = l->quiet_batches - QUIET_AFTER;
			wait = REFRESH_FETCH_NS << (shift < QUIET_MAX_SHIFT ? shift : QUIET_MAX_SHIFT);
		} else {
			wait = fresh_ns && fresh_ns < REFRESH_FETCH_NS ? fresh_ns : REFRESH_FETCH_NS;
		}
		if (now - w->last_fetch_ns < wait)
			continue;
		w->last_fetch_ns = now;
		if (agent_link_fetch(l, now) != 0)
			continue; /* the error surfaces on the next read */
		watch_mod(&d->loop, w, EPOLLIN | (agent_link_wants_write(l) ? EPOLLOUT : 0));
	}
}

/* An agent's process is compared with what connected (program, user) every
 * PEER_RECHECK_NS, its exit seen by its pidfd every tick: the exec event
 * ends its authority at once, this catches an exec whose event was lost,
 * and then (exec_events_lost moved) every process is compared at once.
 * Three /proc reads per agent each second were a third of an idle
 * jsampled's CPU with 50 JVMs. */
#define PEER_RECHECK_NS (10 * 1000000000ull)

static enum peer_state peer_now(struct agent_link *l, uint64_t now, bool all)
{
	if (!all && now - l->peer_checked_ns < PEER_RECHECK_NS)
		return peer_identity_running(&l->peer) ? PEER_SAME : PEER_EXITED;
	l->peer_checked_ns = now;
	return peer_identity_check(&l->peer);
}

/* The first agent connection that must close now, with why set. */
static struct watch *due_to_close(struct daemon *d, uint64_t now, bool check_all)
{
	for (struct watch *w = d->loop.connections; w; w = w->next) {
		struct agent_link *l = w->obj;
		enum peer_state ps;

		if (w->kind != W_AGENT)
			continue;
		if (!l->proc) {
			if (now - l->connected_ns > HELLO_TIMEOUT_NS) {
				agent_link_close_reason(l, "no HELLO in time");
				return w;
			}
			continue;
		}
		if (l->fetch_in_flight && now - l->fetch_sent_ns > FETCH_TIMEOUT_NS) {
			agent_link_close_reason(l, "agent stopped answering");
			return w;
		}
		/* The exec event may have been lost (its ring buffer full). */
		ps = peer_now(l, now, check_all);
		if (ps != PEER_SAME) {
			if (ps == PEER_CHANGED)
				d->counters.agents_ended_exec++;
			else
				d->counters.agents_ended_exit++;
			agent_link_close_reason(l, ps == PEER_CHANGED ? "the process changed its program or user: its "
								      "agent's authority ended"
								    : "the process exited");
			return w;
		}
		/* Held samples grow between batches: the user's total is checked
		 * here too. */
		if (l->proc->uid != 0 && admission_user_bytes(d, l->proc->uid, NULL) > d->opt.max_user_bytes) {
			l->proc->over_limit = true;
			d->counters.agents_refused_user_limit++;
			agent_link_close_reason(l, "user %u over --max-user-mb", (unsigned)l->proc->uid);
			return w;
		}
	}
	return NULL;
}

void agents_maintain(struct daemon *d, uint64_t now)
{
	struct watch *w;
	struct js_counters k;
	bool check_all = false;

	if (d->sampler && sampler_read_counters(d->sampler, &k) == 0 && k.exec_events_lost != d->exec_events_lost) {
		d->exec_events_lost = k.exec_events_lost;
		check_all = true;
	}
	while ((w = due_to_close(d, now, check_all)))
		close_agent(d, w);
}

static struct watch *excluded_agent(struct daemon *d)
{
	char why[256];

	for (struct watch *w = d->loop.connections; w; w = w->next) {
		struct agent_link *l = w->obj;
		if (w->kind != W_AGENT || !l->proc)
			continue;
		if (!process_rules_allow(&d->opt.rules, l->peer.pid, l->peer.uid, why, sizeof(why))) {
			agent_link_close_reason(l, "excluded after reload: %.90s", why);
			return w;
		}
	}
	return NULL;
}

void agents_apply_rules(struct daemon *d)
{
	struct watch *w;

	while ((w = excluded_agent(d)))
		close_agent(d, w);
}

void agents_close_all(struct daemon *d)
{
	for (;;) {
		struct watch *w = d->loop.connections;
		struct agent_link *l;

		while (w && w->kind != W_AGENT)
			w = w->next;
		if (!w)
			return;
		l = w->obj;
		if (l->proc) /* shutting down: the profile stays as it is */
			l->proc->link = NULL;
		uncount_pending(d, l);
		if (w->peer)
			watch_del(&d->loop, w->peer);
		watch_del(&d->loop, w); /* before its fd closes (watch.h) */
		agent_link_free(l);
	}
}

static bool discovery_has_agent(void *ctx, pid_t pid)
{
	struct daemon *d = ctx;
	struct process *p = process_lookup(&d->processes, pid);

	return p && p->link;
}

static void discovery_attach_problem(void *ctx, pid_t pid, const char *why)
{
	struct daemon *d = ctx;
	struct process *p = process_lookup(&d->processes, pid);

	if (p && !p->link)
		snprintf(p->agent_problem, sizeof(p->agent_problem), "%s", why);
}

static void discovery_listener(void *ctx, int fd)
{
	struct daemon *d = ctx;

	if (!watch_add(&d->loop, W_AGENT_LISTEN, fd, NULL, EPOLLIN))
		log_err("cannot watch an agent socket");
}

static void discovery_listener_closed(void *ctx, int fd)
{
	struct daemon *d = ctx;

	for (struct watch *w = d->loop.fixed; w; w = w->next)
		if (w->kind == W_AGENT_LISTEN && w->fd == fd) {
			watch_del(&d->loop, w);
			return;
		}
}

static bool discovery_ns_in_use(void *ctx, uint64_t mnt_ns)
{
	struct daemon *d = ctx;

	for (size_t i = 0; i < d->processes.all.n; i++) {
		const struct process *p = d->processes.all.v[i];
		if (p->link && procfs_ns_inode(p->pid, "mnt") == mnt_ns)
			return true;
	}
	return false;
}

static void discovery_young_jvm(void *ctx, pid_t pid)
{
	jvm_startup_on_jvm_found(ctx, pid, monotonic_ns());
}

const struct discovery_hooks agent_discovery_hooks = {
	.has_agent = discovery_has_agent,
	.on_young_jvm = discovery_young_jvm,
	.on_attach_problem = discovery_attach_problem,
	.on_listener = discovery_listener,
	.on_listener_closed = discovery_listener_closed,
	.ns_in_use = discovery_ns_in_use,
};
