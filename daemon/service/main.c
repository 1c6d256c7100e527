/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * jsampled: always-on, safepoint-free CPU profiles of every JVM on the host.
 *
 * Data flow (one thread, one epoll loop):
 *   BPF ring buffer --(ringbuf_drain)--> per-process sample path (process.c,
 *   held in sample_queue when the code map lags) --(decoder)--> CCT (cct.c)
 *   --(query_server, query_conns)--> clients.
 * Agents connect on their own socket (agent_conns.c, agent_link.c) and are
 * pulled for code maps; the BPF program samples only processes whose agent
 * is admitted (admission.c) and whose layout is known (sampler_targets.c).
 * This file sets everything up, runs the loop and tears down.
 */
#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "daemon/native/native_live.h"
#include "userspace/profile/kernel_symbols.h"
#include "daemon/jvm/admission.h"
#include "daemon/jvm/agent_conns.h"
#include "daemon/jvm/agent_link.h"
#include "daemon.h"
#include "journal_log.h"
#include "listen_sockets.h"
#include "daemon/support/log.h"
#include "privileges.h"
#include "daemon/jvm/procfs.h"
#include "query_conns.h"
#include "daemon/record/recording.h"
#include "reload.h"
#include "daemon/jvm/jvm_startup.h"
#include "daemon/native/native_processes.h"
#include "daemon/ingest/sampler_bpf.h"
#include "daemon/ingest/sampler_targets.h"
#include "service_notify.h"
#include "state_file.h"

#define MAINTENANCE_MS 1000
/* While a JVM starts, the drain timer ticks this often (on_tick). */
#define TICK_NS (10ull * 1000000)
/* How long before a drain its agents are asked for their news. */
#define FETCH_LEAD_NS (20ull * 1000000)
#define SWEEP_NS (10 * 1000000000ull)
#define CODE_GRACE_NS (60ull * 1000000000) /* keep unloaded code this long */
#define FD_LIMIT 65536 /* descriptors: thousands of connections must not hit EMFILE */

static struct daemon D;

/* /proc/<pid> exists (the process has not been reaped). */
static bool process_alive(pid_t pid)
{
	return kill(pid, 0) == 0 || errno == EPERM;
}

/* One line for `systemctl status`. */
static const char *service_status(const struct daemon *d)
{
	static char buf[160];
	uint64_t samples = 0;
	unsigned live = 0;

	for (size_t i = 0; i < d->processes.all.n; i++) {
		const struct process *p = d->processes.all.v[i];
		samples += p->stats.samples;
		live += p->state == PROCESS_LIVE;
	}
	snprintf(buf, sizeof(buf), "profiling %u JVMs (%zu known), %llu samples", live, d->processes.all.n,
		 (unsigned long long)samples);
	return buf;
}

static void save_state(struct daemon *d, uint64_t now)
{
	char why[512];

	if (state_save(&d->processes, d->opt.state_dir, now, why, sizeof(why)) != 0) {
		d->counters.state_save_errors++;
		log_err("cannot save profiles: %s", why);
		return;
	}
	d->counters.state_saves++;
	log_debug("saved %zu profiles to %s", d->processes.all.n, d->opt.state_dir);
}

static int on_exec_event(void *ctx, void *data, size_t len)
{
	struct daemon *d = ctx;
	const struct js_exec_event *e = data;

	if (len < sizeof(*e))
		return 0;
	if (e->flags & JS_EXEC_SIGQUIT) {
		jvm_startup_on_sigquit(d, (pid_t)e->pid, monotonic_ns());
		return 0;
	}
	/* An agent's authority ends with its program (the BPF program already
	 * stopped sampling a target at its exec). */
	agents_on_exec(d, (pid_t)e->pid);
	native_processes_on_exec(d, (pid_t)e->pid, monotonic_ns());
	discovery_on_exec(&d->discovery, (pid_t)e->pid, monotonic_ns());
	jvm_startup_on_exec(d, (pid_t)e->pid, monotonic_ns());
	return 0;
}

/* Every child jsampled forks (attaches, query renders) is reaped here. */
static void reap_children(struct daemon *d, uint64_t now)
{
	int ws;
	pid_t pid;

	while ((pid = waitpid(-1, &ws, WNOHANG)) > 0)
		if (!discovery_child_exited(&d->discovery, pid, ws, now) && !native_live_child_exited(d, pid, ws))
			queries_child_exited(d, pid, ws);
}

static void maintenance(struct daemon *d, uint64_t now)
{
	int64_t wall_s = (int64_t)(realtime_ns() / 1000000000u);

	reap_children(d, now);
	agents_maintain(d, now);
	queries_maintain(d, now);
	for (size_t i = 0; i < d->processes.all.n; i++) {
		struct process *p = d->processes.all.v[i];

		if (p->state == PROCESS_LIVE)
			process_retry_held(&d->processes, p, now);
		if (p->state == PROCESS_AGENT_LOST && !process_alive(p->pid))
			p->state = PROCESS_EXITED;
		/* Unloaded code stays until no sample can still refer to it. */
		if (p->state == PROCESS_LIVE && now > CODE_GRACE_NS && !sample_queue_len(&p->held))
			codemap_prune(&p->jvm.code, now - CODE_GRACE_NS);
		method_table_tick(&p->jvm.methods);
		/* Time slices age into hours and out, sampled or not. */
		cct_slices_tidy(&p->cct.slices, wall_s);
		for (int k = 0; k < EVENT_TREE_COUNT; k++)
			if (p->events.tree[k])
				cct_slices_tidy(&p->events.tree[k]->slices, wall_s);
	}
	native_processes_check(d, now);
	native_live_tick(d, now);
	admission_memory_pressure(d);
	jvm_startup_check(d, now);
	/* A backstop only, and a /proc read per process: not every second. */
	if (d->sampler && now >= d->next_sweep_ns) {
		sampler_sweep(d->sampler);
		d->next_sweep_ns = now + SWEEP_NS;
	}
	process_table_expire(&d->processes, now, d->opt.retention_s * 1000000000ull);
	discovery_tick(&d->discovery, now);
	if (d->opt.state_dir[0] && now >= d->next_save_ns) {
		save_state(d, now);
		d->next_save_ns = now + d->opt.save_interval_s * 1000000000ull;
	}
	service_notify_tick(now, service_status(d));
}

static void on_signal(struct daemon *d, int fd)
{
	struct signalfd_siginfo si;

	while (read(fd, &si, sizeof(si)) == sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGHUP:
			service_notify_reloading();
			if (daemon_reload(d, d->argc, d->argv) == 0)
				agents_apply_rules(d);
			service_notify_ready(service_status(d));
			break;
		case SIGCHLD:
			reap_children(d, monotonic_ns());
			break;
		default:
			d->stop = true;
		}
	}
}

/* The group that may read every process (the exporter's); none if it does
 * not exist. */
static void resolve_readers_group(struct daemon *d)
{
	struct group *g = d->opt.readers_group[0] ? getgrnam(d->opt.readers_group) : NULL;

	d->has_readers = g != NULL;
	d->readers_gid = g ? g->gr_gid : 0;
	if (g)
		log_info("group %s may read every process's profile", d->opt.readers_group);
}

static void drain(struct daemon *d)
{
	uint64_t now;

	ringbuf_drain_run(&d->drain, RINGBUF_DRAIN_BATCH);
	d->counters.drains++;
	now = monotonic_ns();
	d->next_drain_ns = now + d->opt.drain_ms * 1000000ull;
	d->drain_fetch_asked = false;
	agents_schedule_fetches(d, now, 0);
}

/* A drain is a burst of work after a sleep, and the first milliseconds of
 * one run slowly here (caches and TLB refilled after the JVM ran or the
 * vCPU idled): replayed in bursts of 125 samples after 9 ms sleeps, samples
 * cost 2-3x what they cost replayed without pause. So jsampled drains
 * rarely (--drain-ms, 500) and in big batches, and queries drain first so
 * that answers stay current. The drain timer fires when something is due
 * (arm_drain_timer): shortly before a drain, to ask the agents for their
 * news, so that the batch finds the code compiled since the last one
 * instead of waiting for it in the held queue; at the drain; and every
 * TICK_NS while a JVM starts, to drain and check its attach. */
static bool on_tick(struct daemon *d)
{
	uint64_t now = monotonic_ns();
	bool drained = false;

	d->drain_timer_due = 0;
	if (now >= d->next_drain_ns || d->discovery.early_waiting) {
		drain(d);
		drained = true;
	} else if (now + FETCH_LEAD_NS >= d->next_drain_ns) {
		agents_schedule_fetches(d, now, FETCH_LEAD_NS);
		d->drain_fetch_asked = true;
	}
	/* A starting JVM not attached yet is checked every few ms. */
	if (d->discovery.early_waiting)
		discovery_tick(&d->discovery, monotonic_ns());
	return drained;
}

/* Arms the drain timer for the next thing due, not for a fixed tick: an
 * idle jsampled woke 100 times a second for nothing, each wake-up ~50 us
 * of CPU here (perf: epoll_wait, the switches, the timerfd's read); now
 * twice a drain period (the fetch before the drain, the drain), and every
 * TICK_NS only while a JVM starts. A drain on the ring's watermark moves
 * the next one. */
static void arm_drain_timer(struct daemon *d)
{
	uint64_t now = monotonic_ns(), due = d->next_drain_ns;

	/* A drain period shorter than the lead has no time before it: the
	 * drain's own fetch serves. */
	if (!d->drain_fetch_asked && d->opt.drain_ms * 1000000ull > FETCH_LEAD_NS)
		due -= FETCH_LEAD_NS;
	/* A tick already due within TICK_NS stays put: events arriving faster
	 * than it must not keep pushing it away. */
	if (d->discovery.early_waiting && due > now + TICK_NS)
		due = d->drain_timer_due && d->drain_timer_due <= now + TICK_NS ? d->drain_timer_due : now + TICK_NS;
	if (due == d->drain_timer_due)
		return;
	if (timer_fd_at(d->drain_timer_fd, due) != 0) {
		log_err("cannot arm the drain timer: %s", strerror(errno));
		return;
	}
	d->drain_timer_due = due;
}

static int run(struct daemon *d)
{
	struct epoll_event evs[64];
	uint64_t ticks;

	while (!d->stop) {
		/* Records left by a drain at its budget: look at the other fds
		 * without sleeping, then drain on. */
		int n = epoll_wait(d->loop.epfd, evs, 64, d->drain.more ? 0 : -1);
		bool drained = false;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			log_err("epoll_wait: %s", strerror(errno));
			return -1;
		}
		for (int i = 0; i < n; i++) {
			struct watch *w = evs[i].data.ptr;

			if (w->dead)
				continue; /* closed by an earlier handler of this batch */
			switch (w->kind) {
			case W_DRAIN_TIMER:
				if (read(w->fd, &ticks, sizeof(ticks)) >= 0 && on_tick(d))
					drained = true;
				break;
			case W_RINGBUF: /* past the wake-up watermark */
				drain(d);
				drained = true;
				break;
			case W_EXEC:
				ring_buffer__consume(w->obj);
				break;
			case W_MAINT_TIMER:
				if (read(w->fd, &ticks, sizeof(ticks)) >= 0)
					maintenance(d, monotonic_ns());
				break;
			case W_SIGNAL:
				on_signal(d, w->fd);
				break;
			case W_AGENT_LISTEN:
				agents_accept(d, w->fd);
				break;
			case W_QUERY_LISTEN:
				queries_accept(d, w->fd);
				break;
			case W_AGENT:
				agents_on_event(d, w, evs[i].events);
				break;
			case W_AGENT_PIDFD:
				agents_on_exit(d, w);
				break;
			case W_QUERY:
				queries_on_event(d, w, evs[i].events);
				break;
			case W_NATIVE:
				native_live_on_event(d, evs[i].events);
				break;
			}
		}
		if (d->drain.more && !drained)
			drain(d);
		arm_drain_timer(d);
		loop_collect(&d->loop);
	}
	return 0;
}

static const struct process_hooks sampler_hooks = {
	.host_tid = sampler_targets_host_tid,
	.on_thread = sampler_targets_on_thread,
	.on_copy_end = sampler_targets_on_copy_end,
	.on_max_copy = sampler_targets_on_max_copy,
	.on_image_lost = sampler_targets_on_image_lost,
	.on_carrier = sampler_targets_on_carrier,
	.on_internal_thread = sampler_targets_on_internal_thread,
};

int main(int argc, char **argv)
{
	struct daemon *d = &D;
	struct sampler_config sc;
	struct discovery_hooks dh = agent_discovery_hooks;
	struct ring_buffer *execs = NULL;
	char err[512];
	sigset_t mask;
	bool activated = false;
	int r, rc = 1;
	int agent_fd = -1, query_fd = -1, sig_fd = -1, drain_fd = -1, maint_fd = -1;

	d->argc = argc;
	d->argv = argv;
	d->loop.epfd = -1;
	r = options_parse(&d->opt, argc, argv, NULL, 0);
	if (r != 0)
		return r > 0 ? 0 : 2;
	journal_log_init();
	log_set_level(d->opt.verbose ? LOG_DEBUG : LOG_INFO);
	d->started_ns = monotonic_ns();
	/* Draining and decoding must keep up with the JVMs however busy they
	 * are: a starved consumer means held samples pile up and are dropped. */
	if (setpriority(PRIO_PROCESS, 0, d->opt.nice) != 0)
		log_warn("cannot set CPU priority %d: %s (samples may be dropped on a saturated host)",
			 d->opt.nice, strerror(errno));
	signal(SIGPIPE, SIG_IGN);
	raise_fd_limit(FD_LIMIT);
	uid_counts_init(&d->agent_conns);
	uid_counts_init(&d->query_conns);

	process_table_init(&d->processes, &(struct process_limits){0});
	daemon_apply_limits(d);
	d->processes.hooks = sampler_hooks;
	d->processes.hooks.ctx = d;
	if (privileges_sandbox_user(d->opt.native_helper_user, &d->sandbox_uid, &d->sandbox_gid, err, sizeof(err)) == 0)
		d->has_sandbox_user = true;
	else
		log_warn("%s: query renders run as root without capabilities", err);
	if (d->opt.native_stacks) {
		if (native_live_init(d, err, sizeof(err)) != 0) {
			log_err("%s", err);
			goto cleanup;
		}
		d->processes.hooks.add_native_frames = native_live_frames;
	}
	dh.ctx = d;
	discovery_init(&d->discovery, &d->opt, &dh);
	if (d->opt.record_path[0]) {
		d->processes.recording = recording_create(d->opt.record_path, 1, true); /* fast: runs live */
		if (!d->processes.recording) {
			log_err("cannot create %s: %s", d->opt.record_path, strerror(errno));
			goto cleanup;
		}
		log_info("recording the sample path's inputs to %s", d->opt.record_path);
	}
	if (d->opt.state_dir[0]) {
		r = state_restore(&d->processes, d->opt.state_dir, monotonic_ns(), d->opt.max_processes, err,
				  sizeof(err));
		if (r < 0)
			log_err("cannot restore profiles from %s: %s (set aside as %s.bad)", d->opt.state_dir, err,
				STATE_FILE_NAME);
		else if (r > 0)
			log_info("restored %d profiles from %s", r, d->opt.state_dir);
		d->next_save_ns = monotonic_ns() + d->opt.save_interval_s * 1000000000ull;
	}

	sc.events = d->opt.sample_events;
	sc.frequency_hz = d->opt.frequency_hz;
	sc.fragment_bytes = d->opt.fragment_bytes;
	sc.fill_bytes = d->opt.fill_bytes;
	sc.kernel_stacks = d->opt.kernel_stacks;
	sc.native_stacks = d->opt.native_stacks;
	sc.offcpu = d->opt.offcpu;
	sc.ringbuf_bytes = d->opt.ringbuf_bytes;
	sc.wakeup_watermark = d->opt.wakeup_bytes;
	sc.watch_exec = 1; /* cheap, and ends the authority of agents whose process execs */
	if (sampler_open(&d->sampler, &sc, err, sizeof(err)) != 0) {
		log_err("%s", err);
		goto cleanup;
	}
	if (ringbuf_drain_open(&d->drain, sampler_ringbuf_fd(d->sampler), &d->processes) != 0) {
		log_err("cannot open the ring buffer: %s", strerror(errno));
		goto cleanup;
	}

	if (loop_init(&d->loop) != 0)
		goto cleanup;
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGCHLD);
	/* Before privileges go (with kptr_restrict, only CAP_SYSLOG reads the
	 * kernel's addresses), and before the sockets exist: JVMs started
	 * once the socket is there are found by their exec, not by a scan of
	 * JVMs still starting up. */
	if (d->opt.kernel_stacks && kernel_symbols_load(NULL) != 0)
		log_warn("cannot read kernel symbols from /proc/kallsyms: kernel frames show as [kernel]");
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sig_fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	drain_fd = d->drain_timer_fd = timer_fd_new();
	maint_fd = timer_fd_every(MAINTENANCE_MS);
	agent_fd = listen_unix(d->opt.agent_socket_path, 0666); /* any JVM user; trusted for its own process */
	resolve_readers_group(d);
	query_fd = open_query_socket(d->opt.socket_path, d->opt.socket_group, &activated);              /* and filtered by SO_PEERCRED */
	if (sig_fd < 0 || drain_fd < 0 || maint_fd < 0 || agent_fd < 0 || query_fd < 0)
		goto cleanup;
	if (!watch_add(&d->loop, W_SIGNAL, sig_fd, NULL, EPOLLIN) ||
	    !watch_add(&d->loop, W_DRAIN_TIMER, drain_fd, NULL, EPOLLIN) ||
	    !watch_add(&d->loop, W_MAINT_TIMER, maint_fd, NULL, EPOLLIN) ||
	    !watch_add(&d->loop, W_RINGBUF, ringbuf_drain_fd(&d->drain), NULL, EPOLLIN) ||
	    !watch_add(&d->loop, W_AGENT_LISTEN, agent_fd, NULL, EPOLLIN) ||
	    !watch_add(&d->loop, W_QUERY_LISTEN, query_fd, NULL, EPOLLIN))
		goto cleanup;
	if (sampler_exec_ringbuf_fd(d->sampler) >= 0) {
		execs = ring_buffer__new(sampler_exec_ringbuf_fd(d->sampler), on_exec_event, d, NULL);
		if (!execs || !watch_add(&d->loop, W_EXEC, ring_buffer__epoll_fd(execs), execs, EPOLLIN))
			log_warn("cannot watch exec events: new JVMs are found by the periodic scan");
	}
	/* A daemon that meant to drop its capabilities and could not does not
	 * run with them. */
	if (!d->opt.keep_caps &&
	    privileges_drop(d->opt.sample_events == SAMPLE_EVENTS_THREADS, err, sizeof(err)) != 0) {
		log_err("%s: not running with more than it needs (--keep-caps to run anyway)", err);
		goto cleanup;
	}

	log_info("sampling at %u Hz (timers on %s), %u-byte fragments; queries on %s, agents on %s; attach %s",
		 d->opt.frequency_hz,
		 d->opt.sample_events == SAMPLE_EVENTS_CPUS ? "every CPU" : "the profiled processes' threads",
		 d->opt.fragment_bytes, d->opt.socket_path,
		 d->opt.agent_socket_path, d->opt.attach == ATTACH_AUTO ? "auto" : "off");
	discovery_tick(&d->discovery, monotonic_ns()); /* the JVMs already running */
	service_notify_init(monotonic_ns());
	service_notify_ready(service_status(d));
	d->next_drain_ns = monotonic_ns() + d->opt.drain_ms * 1000000ull;
	rc = run(d) == 0 ? 0 : 1;
	service_notify_stopping();
	log_info("stopping");
	if (d->opt.state_dir[0]) {
		ringbuf_drain_run(&d->drain, 0); /* what is decodable now goes into the save */
		for (size_t i = 0; i < d->processes.all.n; i++)
			process_settle_waiting(&d->processes, d->processes.all.v[i]);
		native_live_free(d, 2000); /* their native frames, as far as they come */
		save_state(d, monotonic_ns());
	}

cleanup:
	native_live_free(d, 0);
	agents_close_all(d);
	queries_close_all(d);
	kernel_symbols_free();
	discovery_free(&d->discovery);
	loop_free(&d->loop);
	ring_buffer__free(execs);
	if (query_fd >= 0) {
		close(query_fd);
		if (!activated)
			unlink(d->opt.socket_path);
	}
	if (agent_fd >= 0) {
		close(agent_fd);
		unlink(d->opt.agent_socket_path);
	}
	if (sig_fd >= 0)
		close(sig_fd);
	if (drain_fd >= 0)
		close(drain_fd);
	if (maint_fd >= 0)
		close(maint_fd);
	if (d->drain.rb)
		ringbuf_drain_close(&d->drain);
	sampler_close(d->sampler);
	if (d->processes.recording) {
		if (recording_error(d->processes.recording))
			log_err("the recording %s is incomplete (write error)", d->opt.record_path);
		else
			log_info("recorded %llu events to %s (%llu stack bytes written as their thread's last ones)",
				 (unsigned long long)recording_events(d->processes.recording), d->opt.record_path,
				 (unsigned long long)recording_shared_bytes(d->processes.recording));
		recording_close(d->processes.recording);
	}
	process_table_free(&d->processes);
	uid_counts_free(&d->agent_conns);
	uid_counts_free(&d->query_conns);
	return rc;
}
