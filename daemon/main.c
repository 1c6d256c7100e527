/*
 * jsampled: always-on, safepoint-free CPU profiles of every JVM on the host.
 *
 * Data flow (one thread, one epoll loop):
 *   BPF ring buffer --(ringbuf_drain)--> per-process sample path (process.c,
 *   held in sample_queue when the code map lags) --(decoder)--> CCT (cct.c)
 *   --(query_server)--> clients.
 * Agents connect on their own socket (agent_link.c) and are pulled for code
 * maps; the BPF program samples only processes whose agent said HELLO.
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
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>
#include <systemd/sd-daemon.h>

#include "agent_link.h"
#include "daemon.h"
#include "log.h"
#include "privileges.h"
#include "process_rules.h"
#include "procfs.h"
#include "query_server.h"
#include "recording.h"
#include "reload.h"
#include "sampler.h"
#include "service_notify.h"
#include "state_file.h"

#define MAINTENANCE_MS 1000
#define REFRESH_FETCH_NS (1000ull * 1000000)  /* keep code maps fresh */
#define HELD_FETCH_NS (20ull * 1000000)      /* fetch soon for held samples */
#define FETCH_TIMEOUT_NS (15ull * 1000000000) /* an agent that stops answering */
#define HELLO_TIMEOUT_NS (5ull * 1000000000)
#define QUERY_TIMEOUT_NS (10ull * 1000000000)
#define CODE_GRACE_NS (60ull * 1000000000) /* keep unloaded code this long */

enum watch_kind { W_DRAIN_TIMER, W_MAINT_TIMER, W_SIGNAL, W_RINGBUF, W_EXEC, W_AGENT_LISTEN, W_AGENT, W_QUERY_LISTEN, W_QUERY };

struct watch {
	enum watch_kind kind;
	int fd;
	void *obj;
	struct watch *next; /* the connection list */
	uint64_t last_fetch_ns;
};

static struct daemon D;
static int epfd = -1;
static int saved_argc; /* for SIGHUP */
static char **saved_argv;
static uint64_t next_save_ns;
static struct watch *connections; /* agent and query connections */
static struct watch *fixed;       /* timers, signals, listening sockets */

static struct watch *watch_add(enum watch_kind kind, int fd, void *obj, uint32_t events)
{
	struct watch *w = calloc(1, sizeof(*w));
	struct epoll_event ev = {.events = events};

	if (!w)
		return NULL;
	w->kind = kind;
	w->fd = fd;
	w->obj = obj;
	ev.data.ptr = w;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
		free(w);
		return NULL;
	}
	if (kind == W_AGENT || kind == W_QUERY) {
		w->next = connections;
		connections = w;
	} else {
		w->next = fixed;
		fixed = w;
	}
	return w;
}

static void watch_mod(struct watch *w, uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.ptr = w};

	epoll_ctl(epfd, EPOLL_CTL_MOD, w->fd, &ev);
}

static void watch_del(struct watch *w)
{
	struct watch **pp;

	epoll_ctl(epfd, EPOLL_CTL_DEL, w->fd, NULL);
	for (pp = &connections; *pp; pp = &(*pp)->next)
		if (*pp == w) {
			*pp = w->next;
			break;
		}
	free(w);
}

static int listen_unix(const char *path, mode_t mode)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	char dir[sizeof(addr.sun_path)];
	char *slash;
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
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0 || chmod(path, mode) != 0 ||
	    listen(fd, 128) != 0) {
		log_err("cannot listen on %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
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

/* Room for one more process under --max-processes: forgets the exited
 * process that ended longest ago, if there is one. */
static bool make_room(void)
{
	struct process *oldest = NULL;

	if (process_table_count(&D.processes) < D.opt.max_processes)
		return true;
	for (size_t i = 0; i < D.processes.all.n; i++) {
		struct process *p = D.processes.all.v[i];
		if (p->state != PROCESS_LIVE && !p->link && (!oldest || p->exited_ns < oldest->exited_ns))
			oldest = p;
	}
	if (!oldest)
		return false;
	oldest->exited_ns = 0; /* expires below, whatever the retention */
	oldest->state = PROCESS_EXITED;
	process_table_expire(&D.processes, monotonic_ns(), 1);
	D.counters.processes_evicted++;
	return process_table_count(&D.processes) < D.opt.max_processes;
}

static struct process *on_hello(void *ctx, struct agent_link *l, const char *vm_name,
				const char *vm_version)
{
	struct process *old = process_lookup(&D.processes, l->pid), *p;
	char vm[96], why[256];

	(void)ctx;
	if (old && old->link) {
		log_warn("refusing a second agent for pid %d", (int)l->pid);
		D.counters.agents_refused++;
		return NULL;
	}
	/* The same rules as for attaching: an -agentpath JVM obeys them too. */
	if (!process_rules_allow(&D.opt.rules, l->pid, l->uid, why, sizeof(why))) {
		log_info("not profiling pid %d: %s", (int)l->pid, why);
		D.counters.agents_refused_by_rules++;
		return NULL;
	}
	snprintf(vm, sizeof(vm), "%s %s", vm_name, vm_version);
	/* The agent of a process we already know (it reconnected, or jsampled
	 * restarted and restored its profile): carry on in the same tree. */
	if (old && old->start_time && old->start_time == procfs_start_time(l->pid)) {
		process_revive(&D.processes, old);
		snprintf(old->vm, sizeof(old->vm), "%s", vm);
		old->link = l;
		log_info("agent of pid %d is back: continuing its profile (%llu samples so far)", (int)l->pid,
			 (unsigned long long)old->cct.samples);
		return old;
	}
	if (old)
		process_agent_gone(&D.processes, old, false, monotonic_ns()); /* superseded */
	if (!make_room()) {
		log_warn("not profiling pid %d: %u processes tracked already (--max-processes)", (int)l->pid,
			 D.opt.max_processes);
		D.counters.processes_refused_limit++;
		return NULL;
	}
	p = process_create(&D.processes, l->pid, l->uid, vm);
	if (!p)
		return NULL;
	p->link = l;
	return p;
}

/* Sampling starts with the agent's first batch: by then jsampled knows the
 * VM layout and every thread (so samples carry frame anchors and thread
 * states), and samples need not wait for the code map wholesale. */
static void start_sampling(struct process *p)
{
	const struct vm_layout *L = &p->jvm.layout;
	struct js_target tg = {0};

	if (p->sampled || !L->valid)
		return;
	if (L->tls_modid > 0 && L->tls_modid < 0xffff && L->tls_thread_offset >= 0 &&
	    L->tls_thread_offset < 0xffff && L->thread_anchor > 0 && L->thread_anchor < 0xffff) {
		tg.tls_modid = (uint32_t)L->tls_modid;
		tg.tls_offset = (uint32_t)L->tls_thread_offset;
		tg.anchor_off = (uint32_t)L->thread_anchor;
		tg.anchor_sp_off = (uint16_t)L->anchor_sp;
		tg.anchor_fp_off = (uint16_t)L->anchor_fp;
		tg.anchor_pc_off = (uint16_t)L->anchor_pc;
		if (L->thread_state > 0 && L->thread_state < 0xffff)
			tg.state_off = (uint32_t)L->thread_state;
	}
	tg.code_low = L->code_low;
	tg.code_high = L->code_high;
	if (sampler_add_target(D.sampler, p->pid, &tg) != 0) {
		log_err("cannot add pid %d to the sampler's targets (limit %d)", (int)p->pid, JS_MAX_TARGETS);
		return;
	}
	p->sampled = true;
	log_info("profiling pid %d (%s, uid %u, %s)", (int)p->pid, p->comm, (unsigned)p->uid, p->vm);
}

static int on_batch(void *ctx, struct agent_link *l, const void *payload, size_t len,
		    struct batch_info *info)
{
	int r;

	(void)ctx;
	r = process_apply_batch(&D.processes, l->proc, payload, len, info);
	if (r == 0)
		start_sampling(l->proc);
	return r;
}

/* A Java thread started or ended: mirror it into the BPF thread map, so
 * samples of it carry its frame anchor and copy only its real stack. */
static void on_thread(void *ctx, struct process *p, const struct jvm_thread *t)
{
	const struct vm_layout *L = &p->jvm.layout;
	uint32_t host = pidns_host_tid(&p->tids, p->pid, t->tid);
	struct js_thread_info ti = {0};

	(void)ctx;
	if (!host)
		return;
	if (!t->alive || !t->stack_base || !t->stack_size) {
		sampler_forget_thread(D.sampler, (pid_t)host);
		return;
	}
	ti.stack_end = t->stack_base;
	ti.stack_low = t->stack_base - t->stack_size;
	if (L->valid && L->thread_anchor > 0 && t->java_thread) {
		ti.anchor_addr = t->java_thread + (uint64_t)L->thread_anchor;
		ti.anchor_sp_off = (uint16_t)L->anchor_sp;
		ti.anchor_fp_off = (uint16_t)L->anchor_fp;
		ti.anchor_pc_off = (uint16_t)L->anchor_pc;
	}
	if (L->valid && L->thread_state > 0 && t->java_thread)
		ti.state_addr = t->java_thread + (uint64_t)L->thread_state;
	ti.from_jvm = 1;
	if (sampler_set_thread(D.sampler, (pid_t)host, &ti) != 0)
		log_debug("cannot register thread %u of pid %d", host, (int)p->pid);
	else
		log_debug("thread %u (%s) of pid %d: stack %#llx-%#llx, anchor at %#llx", host, t->name,
			  (int)p->pid, (unsigned long long)ti.stack_low, (unsigned long long)ti.stack_end,
			  (unsigned long long)ti.anchor_addr);
}

static void on_copy_end(void *ctx, struct process *p, uint32_t tid, uint64_t end)
{
	(void)ctx;
	(void)p;
	sampler_set_copy_end(D.sampler, (pid_t)tid, end);
}

static void on_max_copy(void *ctx, struct process *p, uint32_t tid, uint32_t bytes)
{
	(void)ctx;
	log_debug("pid %d thread %u: stack deeper than the copy, now copying up to %u bytes", (int)p->pid,
		  tid, bytes);
	sampler_set_max_copy(D.sampler, (pid_t)tid, bytes);
}

static void on_internal_thread(void *ctx, struct process *p, uint32_t tid)
{
	(void)ctx;
	(void)p;
	sampler_set_thread_flags(D.sampler, (pid_t)tid, JS_THREAD_NO_STACK);
}

static const struct agent_link_hooks link_hooks = {.on_hello = on_hello, .on_batch = on_batch};

static void close_agent(struct watch *w)
{
	struct agent_link *l = w->obj;
	struct process *p = l->proc;

	if (p) {
		/* After BYE the JVM is past VMDeath: count it as exited. */
		bool alive = !l->said_bye && process_alive(p->pid);
		log_info("agent of pid %d disconnected: %s%s", (int)p->pid, l->why_closed,
			 alive ? " (process still running: no longer sampled)" : "");
		if (p->sampled)
			sampler_remove_target(D.sampler, p->pid);
		p->sampled = false;
		/* Samples still in the ring are decoded with what we have. */
		ringbuf_drain_run(&D.drain);
		p->link = NULL;
		process_agent_gone(&D.processes, p, alive, monotonic_ns());
	} else {
		log_debug("agent connection from pid %d closed: %s", (int)l->pid, l->why_closed);
		D.counters.agents_closed_bad_input++;
	}
	agent_link_free(l);
	watch_del(w);
}

static void handle_agent(struct watch *w, uint32_t events)
{
	struct agent_link *l = w->obj;

	if ((events & EPOLLIN) && agent_link_on_readable(l, &link_hooks) != 0) {
		close_agent(w);
		return;
	}
	if ((events & (EPOLLERR | EPOLLHUP)) && !(events & EPOLLIN)) {
		snprintf(l->why_closed, sizeof(l->why_closed), "connection error");
		close_agent(w);
		return;
	}
	if (agent_link_flush(l) != 0) {
		close_agent(w);
		return;
	}
	watch_mod(w, EPOLLIN | (agent_link_wants_write(l) ? EPOLLOUT : 0));
}

static void handle_query(struct watch *w, uint32_t events)
{
	struct query_conn *q = w->obj;
	int r = 0;

	if (events & EPOLLIN)
		r = query_conn_on_readable(q, &D);
	if (r == 0)
		r = query_conn_flush(q);
	if (r != 0 || (events & (EPOLLERR | EPOLLHUP))) {
		query_conn_free(q);
		watch_del(w);
		return;
	}
	watch_mod(w, q->answered ? EPOLLOUT : EPOLLIN);
}

static void accept_all(int lfd, enum watch_kind kind)
{
	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		void *obj;

		if (fd < 0)
			return;
		obj = kind == W_AGENT ? (void *)agent_link_new(fd, monotonic_ns())
				      : (void *)query_conn_new(fd, monotonic_ns());
		if (!obj || !watch_add(kind, fd, obj, EPOLLIN)) {
			if (obj && kind == W_AGENT)
				agent_link_free(obj);
			else if (obj)
				query_conn_free(obj);
			else
				close(fd);
			continue;
		}
		if (kind == W_AGENT)
			D.counters.agents_accepted++;
	}
}

/* After each drain: pull agents whose processes have samples waiting, and
 * refresh the others' code maps now and then. */
static void schedule_fetches(uint64_t now)
{
	for (struct watch *w = connections; w; w = w->next) {
		struct agent_link *l;
		struct process *p;
		uint64_t wait;

		if (w->kind != W_AGENT)
			continue;
		l = w->obj;
		p = l->proc;
		if (!p || l->fetch_in_flight)
			continue;
		wait = p->wants_fetch ? HELD_FETCH_NS : REFRESH_FETCH_NS;
		if (now - w->last_fetch_ns < wait)
			continue;
		w->last_fetch_ns = now;
		if (agent_link_fetch(l, now) != 0)
			continue; /* the error surfaces on the next read */
		watch_mod(w, EPOLLIN | (agent_link_wants_write(l) ? EPOLLOUT : 0));
	}
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

/* After a reload: agents of processes the new rules exclude are let go. */
static void apply_rules_to_agents(void)
{
	struct watch *w, *next;
	char why[256];

	for (w = connections; w; w = next) {
		struct agent_link *l = w->obj;
		next = w->next;
		if (w->kind != W_AGENT || !l->proc)
			continue;
		if (!process_rules_allow(&D.opt.rules, l->pid, l->uid, why, sizeof(why))) {
			snprintf(l->why_closed, sizeof(l->why_closed), "excluded after reload: %.90s", why);
			close_agent(w);
		}
	}
}

static int on_exec_event(void *ctx, void *data, size_t len)
{
	const struct js_exec_event *e = data;

	(void)ctx;
	if (len >= sizeof(*e))
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
	if (!watch_add(W_AGENT_LISTEN, fd, NULL, EPOLLIN))
		log_err("cannot watch an agent socket");
}

static void maintenance(uint64_t now)
{
	struct watch *w, *next;

	for (w = connections; w; w = next) {
		next = w->next;
		if (w->kind == W_AGENT) {
			struct agent_link *l = w->obj;
			if (!l->proc && now - l->connected_ns > HELLO_TIMEOUT_NS) {
				snprintf(l->why_closed, sizeof(l->why_closed), "no HELLO in time");
				close_agent(w);
			} else if (l->fetch_in_flight && now - l->fetch_sent_ns > FETCH_TIMEOUT_NS) {
				snprintf(l->why_closed, sizeof(l->why_closed), "agent stopped answering");
				close_agent(w);
			}
		} else if (w->kind == W_QUERY) {
			struct query_conn *q = w->obj;
			if (now - q->opened_ns > QUERY_TIMEOUT_NS) {
				query_conn_free(q);
				watch_del(w);
			}
		}
	}
	for (size_t i = 0; i < D.processes.all.n; i++) {
		struct process *p = D.processes.all.v[i];

		if (p->state == PROCESS_LIVE)
			process_retry_held(&D.processes, p);
		if (p->state == PROCESS_AGENT_LOST && !process_alive(p->pid))
			p->state = PROCESS_EXITED;
		/* Unloaded code stays until no sample can still refer to it. */
		if (p->state == PROCESS_LIVE && now > CODE_GRACE_NS && !sample_queue_len(&p->held))
			codemap_prune(&p->jvm.code, now - CODE_GRACE_NS);
	}
	process_table_expire(&D.processes, now, D.opt.retention_s * 1000000000ull);
	discovery_tick(&D.discovery, now);
	if (D.opt.state_dir[0] && now >= next_save_ns) {
		save_state(now);
		next_save_ns = now + D.opt.save_interval_s * 1000000000ull;
	}
	service_notify_tick(now, service_status());
}

static int run(void)
{
	struct epoll_event evs[64];
	uint64_t ticks;

	while (!D.stop) {
		int n = epoll_wait(epfd, evs, 64, -1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			log_err("epoll_wait: %s", strerror(errno));
			return -1;
		}
		for (int i = 0; i < n; i++) {
			struct watch *w = evs[i].data.ptr;

			switch (w->kind) {
			case W_DRAIN_TIMER:
			case W_RINGBUF:
				if (w->kind == W_DRAIN_TIMER && read(w->fd, &ticks, sizeof(ticks)) < 0)
					break;
				ringbuf_drain_run(&D.drain);
				D.counters.drains++;
				schedule_fetches(monotonic_ns());
				break;
			case W_EXEC:
				ring_buffer__consume(w->obj);
				break;
			case W_MAINT_TIMER:
				if (read(w->fd, &ticks, sizeof(ticks)) >= 0)
					maintenance(monotonic_ns());
				break;
			case W_SIGNAL: {
				struct signalfd_siginfo si;
				if (read(w->fd, &si, sizeof(si)) == sizeof(si)) {
					if (si.ssi_signo == SIGHUP) {
						service_notify_reloading();
						if (daemon_reload(&D, saved_argc, saved_argv) == 0)
							apply_rules_to_agents();
						service_notify_ready(service_status());
					} else {
						D.stop = true;
					}
				}
				break;
			}
			case W_AGENT_LISTEN:
				accept_all(w->fd, W_AGENT);
				break;
			case W_QUERY_LISTEN:
				accept_all(w->fd, W_QUERY);
				break;
			case W_AGENT:
				handle_agent(w, evs[i].events);
				break;
			case W_QUERY:
				handle_query(w, evs[i].events);
				break;
			}
		}
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

int main(int argc, char **argv)
{
	struct sampler_config sc;
	struct process_limits limits;
	struct discovery_hooks dh = {.has_agent = discovery_has_agent, .on_listener = discovery_listener};
	struct ring_buffer *execs = NULL;
	char err[512];
	sigset_t mask;
	bool activated = false;
	int r, rc = 1;
	int agent_fd = -1, query_fd = -1, sig_fd = -1, drain_fd = -1, maint_fd = -1;
	uint32_t byte_nodes;

	saved_argc = argc;
	saved_argv = argv;
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

	byte_nodes = cct_nodes_for_bytes(D.opt.cct_max_bytes);
	limits.cct_max_nodes = byte_nodes < D.opt.cct_max_nodes ? byte_nodes : D.opt.cct_max_nodes;
	limits.held_max_bytes = D.opt.held_max_bytes;
	limits.hold_ns = D.opt.hold_ms * 1000000ull;
	process_table_init(&D.processes, &limits);
	D.processes.on_thread = on_thread;
	D.processes.on_copy_end = on_copy_end;
	D.processes.on_max_copy = on_max_copy;
	D.processes.on_internal_thread = on_internal_thread;
	D.processes.fragment_bytes = D.opt.fragment_bytes;
	D.processes.max_fragment_bytes = D.opt.max_fragment_bytes;
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
		r = state_restore(&D.processes, D.opt.state_dir, monotonic_ns(), err, sizeof(err));
		if (r < 0)
			log_err("cannot restore profiles from %s: %s (set aside as %s.bad)", D.opt.state_dir, err,
				STATE_FILE_NAME);
		else if (r > 0)
			log_info("restored %d profiles from %s", r, D.opt.state_dir);
		next_save_ns = monotonic_ns() + D.opt.save_interval_s * 1000000000ull;
	}

	sc.frequency_hz = D.opt.frequency_hz;
	sc.fragment_bytes = D.opt.fragment_bytes;
	sc.ringbuf_bytes = D.opt.ringbuf_bytes;
	sc.wakeup_watermark = D.opt.wakeup_bytes;
	sc.watch_exec = 1; /* cheap; attach=off may turn into auto on reload */
	if (sampler_open(&D.sampler, &sc, err, sizeof(err)) != 0) {
		log_err("%s", err);
		goto cleanup;
	}
	if (ringbuf_drain_open(&D.drain, sampler_ringbuf_fd(D.sampler), &D.processes) != 0) {
		log_err("cannot open the ring buffer: %s", strerror(errno));
		goto cleanup;
	}

	epfd = epoll_create1(EPOLL_CLOEXEC);
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sig_fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	drain_fd = timer_every(D.opt.drain_ms);
	maint_fd = timer_every(MAINTENANCE_MS);
	agent_fd = listen_unix(D.opt.agent_socket_path, 0666); /* any JVM user; trusted for its own pid */
	query_fd = open_query_socket(&activated);              /* and filtered by SO_PEERCRED */
	if (epfd < 0 || sig_fd < 0 || drain_fd < 0 || maint_fd < 0 || agent_fd < 0 || query_fd < 0)
		goto cleanup;
	if (!watch_add(W_SIGNAL, sig_fd, NULL, EPOLLIN) || !watch_add(W_DRAIN_TIMER, drain_fd, NULL, EPOLLIN) ||
	    !watch_add(W_MAINT_TIMER, maint_fd, NULL, EPOLLIN) ||
	    !watch_add(W_RINGBUF, ringbuf_drain_fd(&D.drain), NULL, EPOLLIN) ||
	    !watch_add(W_AGENT_LISTEN, agent_fd, NULL, EPOLLIN) ||
	    !watch_add(W_QUERY_LISTEN, query_fd, NULL, EPOLLIN))
		goto cleanup;
	if (sampler_exec_ringbuf_fd(D.sampler) >= 0) {
		execs = ring_buffer__new(sampler_exec_ringbuf_fd(D.sampler), on_exec_event, NULL, NULL);
		if (!execs || !watch_add(W_EXEC, ring_buffer__epoll_fd(execs), execs, EPOLLIN))
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
	while (connections) {
		struct watch *w = connections;
		if (w->kind == W_AGENT)
			agent_link_free(w->obj);
		else
			query_conn_free(w->obj);
		watch_del(w);
	}
	while (fixed) {
		struct watch *w = fixed;
		fixed = w->next;
		free(w);
	}
	discovery_free(&D.discovery);
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
	if (epfd >= 0)
		close(epfd);
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
	return rc;
}
