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
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>
#include <systemd/sd-daemon.h>

#include "agent_conns.h"
#include "agent_link.h"
#include "daemon.h"
#include "log.h"
#include "privileges.h"
#include "procfs.h"
#include "query_conns.h"
#include "recording.h"
#include "reload.h"
#include "sampler.h"
#include "sampler_targets.h"
#include "service_notify.h"
#include "state_file.h"

#define MAINTENANCE_MS 1000
#define CODE_GRACE_NS (60ull * 1000000000) /* keep unloaded code this long */
#define FD_LIMIT 65536 /* descriptors: thousands of connections must not hit EMFILE */

static struct daemon D;

static int listen_unix(const char *path, mode_t mode)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	char dir[sizeof(addr.sun_path)];
	char *slash;
	mode_t old;
	int fd;

	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = 0;
		if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
			log_err("cannot create %s: %s", dir, strerror(errno));
			return -1;
		}
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	unlink(path); /* a stale socket from a previous run */
	old = umask(~mode & 0777); /* the file has its mode from the start */
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0 || listen(fd, 128) != 0) {
		umask(old);
		log_err("cannot listen on %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	umask(old);
	return fd;
}

static int timer_every(unsigned ms)
{
	struct itimerspec its = {
		.it_interval = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000},
		.it_value = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000},
	};
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);

	if (fd >= 0 && timerfd_settime(fd, 0, &its, NULL) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* /proc/<pid> exists (the process has not been reaped). */
static bool process_alive(pid_t pid)
{
	return kill(pid, 0) == 0 || errno == EPERM;
}

/* One line for `systemctl status`. */
static const char *service_status(void)
{
	static char buf[160];
	uint64_t samples = 0;
	unsigned live = 0;

	for (size_t i = 0; i < D.processes.all.n; i++) {
		const struct process *p = D.processes.all.v[i];
		samples += p->stats.samples;
		live += p->state == PROCESS_LIVE;
	}
	snprintf(buf, sizeof(buf), "profiling %u JVMs (%zu known), %llu samples", live, D.processes.all.n,
		 (unsigned long long)samples);
	return buf;
}

static void save_state(uint64_t now)
{
	char why[512];

	if (state_save(&D.processes, D.opt.state_dir, now, why, sizeof(why)) != 0) {
		D.counters.state_save_errors++;
		log_err("cannot save profiles: %s", why);
		return;
	}
	D.counters.state_saves++;
	log_debug("saved %zu profiles to %s", D.processes.all.n, D.opt.state_dir);
}

static int on_exec_event(void *ctx, void *data, size_t len)
{
	const struct js_exec_event *e = data;

	(void)ctx;
	if (len < sizeof(*e))
		return 0;
	/* An agent's authority ends with its program (the BPF program already
	 * stopped sampling a target at its exec). */
	agents_on_exec(&D, (pid_t)e->pid);
	discovery_on_exec(&D.discovery, (pid_t)e->pid, monotonic_ns());
	return 0;
}

static bool discovery_has_agent(void *ctx, pid_t pid)
{
	struct process *p = process_lookup(&D.processes, pid);

	(void)ctx;
	return p && p->link;
}

static void discovery_listener(void *ctx, int fd)
{
	(void)ctx;
	if (!watch_add(&D.loop, W_AGENT_LISTEN, fd, NULL, EPOLLIN))
		log_err("cannot watch an agent socket");
}

static void discovery_listener_closed(void *ctx, int fd)
{
	(void)ctx;
	for (struct watch *w = D.loop.fixed; w; w = w->next)
		if (w->kind == W_AGENT_LISTEN && w->fd == fd) {
			watch_del(&D.loop, w);
			return;
		}
}

static bool discovery_ns_in_use(void *ctx, uint64_t mnt_ns)
{
	(void)ctx;
	for (size_t i = 0; i < D.processes.all.n; i++) {
		const struct process *p = D.processes.all.v[i];
		if (p->link && procfs_ns_inode(p->pid, "mnt") == mnt_ns)
			return true;
	}
	return false;
}

/* Every child jsampled forks (attaches, query renders) is reaped here. */
static void reap_children(uint64_t now)
{
	int ws;
	pid_t pid;

	while ((pid = waitpid(-1, &ws, WNOHANG)) > 0)
		if (!discovery_child_exited(&D.discovery, pid, ws, now))
			queries_child_exited(&D, pid, ws);
}

static void maintenance(uint64_t now)
{
	reap_children(now);
	agents_maintain(&D, now);
	queries_maintain(&D, now);
	for (size_t i = 0; i < D.processes.all.n; i++) {
		struct process *p = D.processes.all.v[i];

		if (p->state == PROCESS_LIVE)
			process_retry_held(&D.processes, p, now);
		if (p->state == PROCESS_AGENT_LOST && !process_alive(p->pid))
			p->state = PROCESS_EXITED;
		/* Unloaded code stays until no sample can still refer to it. */
		if (p->state == PROCESS_LIVE && now > CODE_GRACE_NS && !sample_queue_len(&p->held))
			codemap_prune(&p->jvm.code, now - CODE_GRACE_NS);
	}
	process_table_expire(&D.processes, now, D.opt.retention_s * 1000000000ull);
	discovery_tick(&D.discovery, now);
	if (D.opt.state_dir[0] && now >= D.next_save_ns) {
		save_state(now);
		D.next_save_ns = now + D.opt.save_interval_s * 1000000000ull;
	}
	service_notify_tick(now, service_status());
}

static void on_signal(int fd)
{
	struct signalfd_siginfo si;

	while (read(fd, &si, sizeof(si)) == sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGHUP:
			service_notify_reloading();
			if (daemon_reload(&D, D.argc, D.argv) == 0)
				agents_apply_rules(&D);
			service_notify_ready(service_status());
			break;
		case SIGCHLD:
			reap_children(monotonic_ns());
			break;
		default:
			D.stop = true;
		}
	}
}

static int run(void)
{
	struct epoll_event evs[64];
	uint64_t ticks;

	while (!D.stop) {
		int n = epoll_wait(D.loop.epfd, evs, 64, -1);

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
			case W_RINGBUF:
				if (w->kind == W_DRAIN_TIMER && read(w->fd, &ticks, sizeof(ticks)) < 0)
					break;
				ringbuf_drain_run(&D.drain);
				D.counters.drains++;
				agents_schedule_fetches(&D, monotonic_ns());
				break;
			case W_EXEC:
				ring_buffer__consume(w->obj);
				break;
			case W_MAINT_TIMER:
				if (read(w->fd, &ticks, sizeof(ticks)) >= 0)
					maintenance(monotonic_ns());
				break;
			case W_SIGNAL:
				on_signal(w->fd);
				break;
			case W_AGENT_LISTEN:
				agents_accept(&D, w->fd);
				break;
			case W_QUERY_LISTEN:
				queries_accept(&D, w->fd);
				break;
			case W_AGENT:
				agents_on_event(&D, w, evs[i].events);
				break;
			case W_AGENT_PIDFD:
				agents_on_exit(&D, w);
				break;
			case W_QUERY:
				queries_on_event(&D, w, evs[i].events);
				break;
			}
		}
		loop_collect(&D.loop);
	}
	return 0;
}

/* The query socket: handed over by systemd (jsampled.socket, which sets
 * its owner and mode), or made here as root:<socket group> 0660. */
static int open_query_socket(bool *activated)
{
	char why[256];
	int n = sd_listen_fds(1), fd;

	*activated = false;
	for (int i = 0; i < n; i++) {
		fd = SD_LISTEN_FDS_START + i;
		if (sd_is_socket_unix(fd, SOCK_STREAM, 1, D.opt.socket_path, 0) > 0) {
			fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
			fcntl(fd, F_SETFD, FD_CLOEXEC);
			*activated = true;
			log_info("query socket %s from systemd", D.opt.socket_path);
			return fd;
		}
		log_warn("ignoring a socket from systemd that is not %s", D.opt.socket_path);
	}
	fd = listen_unix(D.opt.socket_path, 0600);
	if (fd >= 0 && privileges_socket_access(D.opt.socket_path, D.opt.socket_group, why, sizeof(why)) != 0)
		log_warn("%s", why);
	return fd;
}

/* Enough descriptors for thousands of connections (the per-user limits
 * keep any one user far below it). */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return;
	rl.rlim_cur = rl.rlim_max < FD_LIMIT ? rl.rlim_max : FD_LIMIT;
	setrlimit(RLIMIT_NOFILE, &rl);
}

static const struct process_hooks sampler_hooks = {
	.on_thread = sampler_targets_on_thread,
	.on_copy_end = sampler_targets_on_copy_end,
	.on_max_copy = sampler_targets_on_max_copy,
	.on_internal_thread = sampler_targets_on_internal_thread,
};

int main(int argc, char **argv)
{
	struct sampler_config sc;
	struct discovery_hooks dh = {
		.has_agent = discovery_has_agent,
		.on_listener = discovery_listener,
		.on_listener_closed = discovery_listener_closed,
		.ns_in_use = discovery_ns_in_use,
	};
	struct ring_buffer *execs = NULL;
	char err[512];
	sigset_t mask;
	bool activated = false;
	int r, rc = 1;
	int agent_fd = -1, query_fd = -1, sig_fd = -1, drain_fd = -1, maint_fd = -1;

	D.argc = argc;
	D.argv = argv;
	D.loop.epfd = -1;
	r = options_parse(&D.opt, argc, argv, NULL, 0);
	if (r != 0)
		return r > 0 ? 0 : 2;
	log_set_level(D.opt.verbose ? LOG_DEBUG : LOG_INFO);
	D.started_ns = monotonic_ns();
	/* Draining and decoding must keep up with the JVMs however busy they
	 * are: a starved consumer means held samples pile up and are dropped. */
	if (setpriority(PRIO_PROCESS, 0, D.opt.nice) != 0)
		log_warn("cannot set CPU priority %d: %s (samples may be dropped on a saturated host)",
			 D.opt.nice, strerror(errno));
	signal(SIGPIPE, SIG_IGN);
	raise_fd_limit();
	uid_counts_init(&D.agent_conns);
	uid_counts_init(&D.query_conns);

	process_table_init(&D.processes, &(struct process_limits){0});
	daemon_apply_limits(&D);
	D.processes.hooks = sampler_hooks;
	D.processes.hooks.ctx = &D;
	discovery_init(&D.discovery, &D.opt, &dh);
	if (D.opt.record_path[0]) {
		D.processes.recording = recording_create(D.opt.record_path, 1); /* fast: runs live */
		if (!D.processes.recording) {
			log_err("cannot create %s: %s", D.opt.record_path, strerror(errno));
			goto cleanup;
		}
		log_info("recording the sample path's inputs to %s", D.opt.record_path);
	}
	if (D.opt.state_dir[0]) {
		r = state_restore(&D.processes, D.opt.state_dir, monotonic_ns(), D.opt.max_processes, err,
				  sizeof(err));
		if (r < 0)
			log_err("cannot restore profiles from %s: %s (set aside as %s.bad)", D.opt.state_dir, err,
				STATE_FILE_NAME);
		else if (r > 0)
			log_info("restored %d profiles from %s", r, D.opt.state_dir);
		D.next_save_ns = monotonic_ns() + D.opt.save_interval_s * 1000000000ull;
	}

	sc.frequency_hz = D.opt.frequency_hz;
	sc.fragment_bytes = D.opt.fragment_bytes;
	sc.ringbuf_bytes = D.opt.ringbuf_bytes;
	sc.wakeup_watermark = D.opt.wakeup_bytes;
	sc.watch_exec = 1; /* cheap, and ends the authority of agents whose process execs */
	if (sampler_open(&D.sampler, &sc, err, sizeof(err)) != 0) {
		log_err("%s", err);
		goto cleanup;
	}
	if (ringbuf_drain_open(&D.drain, sampler_ringbuf_fd(D.sampler), &D.processes) != 0) {
		log_err("cannot open the ring buffer: %s", strerror(errno));
		goto cleanup;
	}

	if (loop_init(&D.loop) != 0)
		goto cleanup;
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sig_fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	drain_fd = timer_every(D.opt.drain_ms);
	maint_fd = timer_every(MAINTENANCE_MS);
	agent_fd = listen_unix(D.opt.agent_socket_path, 0666); /* any JVM user; trusted for its own process */
	query_fd = open_query_socket(&activated);              /* and filtered by SO_PEERCRED */
	if (sig_fd < 0 || drain_fd < 0 || maint_fd < 0 || agent_fd < 0 || query_fd < 0)
		goto cleanup;
	if (!watch_add(&D.loop, W_SIGNAL, sig_fd, NULL, EPOLLIN) ||
	    !watch_add(&D.loop, W_DRAIN_TIMER, drain_fd, NULL, EPOLLIN) ||
	    !watch_add(&D.loop, W_MAINT_TIMER, maint_fd, NULL, EPOLLIN) ||
	    !watch_add(&D.loop, W_RINGBUF, ringbuf_drain_fd(&D.drain), NULL, EPOLLIN) ||
	    !watch_add(&D.loop, W_AGENT_LISTEN, agent_fd, NULL, EPOLLIN) ||
	    !watch_add(&D.loop, W_QUERY_LISTEN, query_fd, NULL, EPOLLIN))
		goto cleanup;
	if (sampler_exec_ringbuf_fd(D.sampler) >= 0) {
		execs = ring_buffer__new(sampler_exec_ringbuf_fd(D.sampler), on_exec_event, NULL, NULL);
		if (!execs || !watch_add(&D.loop, W_EXEC, ring_buffer__epoll_fd(execs), execs, EPOLLIN))
			log_warn("cannot watch exec events: new JVMs are found by the periodic scan");
	}
	if (!D.opt.keep_caps && privileges_drop(err, sizeof(err)) != 0)
		log_warn("%s", err);

	log_info("sampling at %u Hz on %u CPUs, %u-byte fragments; queries on %s, agents on %s; attach %s",
		 D.opt.frequency_hz, sampler_cpus(D.sampler), D.opt.fragment_bytes, D.opt.socket_path,
		 D.opt.agent_socket_path, D.opt.attach == ATTACH_AUTO ? "auto" : "off");
	discovery_tick(&D.discovery, monotonic_ns()); /* the JVMs already running */
	service_notify_init(monotonic_ns());
	service_notify_ready(service_status());
	rc = run() == 0 ? 0 : 1;
	service_notify_stopping();
	log_info("stopping");
	if (D.opt.state_dir[0]) {
		ringbuf_drain_run(&D.drain); /* what is decodable now goes into the save */
		save_state(monotonic_ns());
	}

cleanup:
	agents_close_all(&D);
	queries_close_all(&D);
	discovery_free(&D.discovery);
	loop_free(&D.loop);
	ring_buffer__free(execs);
	if (query_fd >= 0) {
		close(query_fd);
		if (!activated)
			unlink(D.opt.socket_path);
	}
	if (agent_fd >= 0) {
		close(agent_fd);
		unlink(D.opt.agent_socket_path);
	}
	if (sig_fd >= 0)
		close(sig_fd);
	if (drain_fd >= 0)
		close(drain_fd);
	if (maint_fd >= 0)
		close(maint_fd);
	if (D.drain.rb)
		ringbuf_drain_close(&D.drain);
	sampler_close(D.sampler);
	if (D.processes.recording) {
		if (recording_error(D.processes.recording))
			log_err("the recording %s is incomplete (write error)", D.opt.record_path);
		else
			log_info("recorded %llu events to %s",
				 (unsigned long long)recording_events(D.processes.recording), D.opt.record_path);
		recording_close(D.processes.recording);
	}
	process_table_free(&D.processes);
	uid_counts_free(&D.agent_conns);
	uid_counts_free(&D.query_conns);
	return rc;
}
