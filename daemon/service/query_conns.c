/* SPDX-License-Identifier: GPL-2.0-only */
#include "query_conns.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <seccomp.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "userspace/profile/cct_format.h"
#include "daemon.h"
#include "daemon/support/log.h"
#include "privileges.h"
#include "query_server.h"
#include "userspace/common/fd_io.h"

#define QUERY_TIMEOUT_NS (10ull * 1000000000) /* to send a request */
/* To wait for a render slot: renders run at nice 0 and four 1M-node JSON
 * answers on a loaded 2-CPU machine took more than 10 s (test_hostile). */
#define RENDER_SLOT_WAIT_NS (60ull * 1000000000)
#define RENDER_DEADLINE_NS (120ull * 1000000000)
#define RENDER_SEND_TIMEOUT_S 20 /* a client that stops reading */
#define MAX_RENDERS 4
#define MAX_RENDERS_PER_USER 2

/* Render children alive. */
struct render_child {
	pid_t pid;
	uid_t uid;
	bool privileged; /* root's or the readers group's */
	uint64_t started_ns;
	bool killed;
};
static struct render_child renders[MAX_RENDERS];

static bool privileged(const struct daemon *d, const struct query_conn *q)
{
	return q->uid == 0 || (d->has_readers && q->gid == d->readers_gid);
}

/* Whether q may have a render slot now: a user at most
 * MAX_RENDERS_PER_USER, and one slot always kept for root and the readers
 * group (two users could hold all of them otherwise). */
static bool slot_for(const struct daemon *d, const struct query_conn *q)
{
	unsigned all = 0, mine = 0, others = 0;

	for (int i = 0; i < MAX_RENDERS; i++) {
		if (renders[i].pid <= 0)
			continue;
		all++;
		mine += renders[i].uid == q->uid;
		others += !renders[i].privileged;
	}
	if (all >= MAX_RENDERS)
		return false;
	if (q->uid == 0)
		return true;
	return mine < MAX_RENDERS_PER_USER && (privileged(d, q) || others < MAX_RENDERS - 1);
}

static void close_query(struct daemon *d, struct watch *w)
{
	struct query_conn *q = w->obj;

	uid_count_add(&d->query_conns, q->uid, -1);
	watch_del(&d->loop, w); /* before its fd closes (watch.h) */
	query_conn_free(q);
}

void queries_accept(struct daemon *d, int lfd)
{
	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct query_conn *q;

		if (fd < 0)
			return;
		q = query_conn_new(fd, monotonic_ns());
		if (!q) {
			close(fd);
			continue;
		}
		if (q->uid != 0 && uid_count(&d->query_conns, q->uid) >= d->opt.max_queries_per_user) {
			d->counters.queries_refused_user_limit++;
			query_conn_free(q);
			continue;
		}
		if (!watch_add(&d->loop, W_QUERY, fd, q, EPOLLIN)) {
			query_conn_free(q);
			continue;
		}
		uid_count_add(&d->query_conns, q->uid, 1);
	}
}

/* A render works for one client and a big one takes seconds of CPU: it
 * runs at an ordinary process's priority, not at the daemon's (nice -10 by
 * default, to keep up with the ring), so that it outruns neither the JVMs
 * nor the clients whose small queries wait meanwhile (six renders at -10
 * held `jsamplectl list` for ~1 s: test_hostile's attack 10). A daemon
 * configured nicer than 0 keeps its own. */
static void lower_priority(void)
{
	errno = 0;
	int nice_now = getpriority(PRIO_PROCESS, 0);

	if (errno == 0 && nice_now < 0)
		(void)setpriority(PRIO_PROCESS, 0, 0); /* raising one's nice value needs no privilege */
}

/* A render reads its snapshot and writes to its client: anything else
 * fails (EPERM). Its address space may grow by RENDER_MAX_GROWTH. */
#define RENDER_MAX_GROWTH (1ull << 30)
static void render_sandbox(const struct daemon *d)
{
	static const int allowed[] = {
		SCMP_SYS(write), SCMP_SYS(writev), SCMP_SYS(sendto), SCMP_SYS(sendmsg), SCMP_SYS(close),
		SCMP_SYS(brk), SCMP_SYS(munmap), SCMP_SYS(mremap), SCMP_SYS(madvise), SCMP_SYS(futex),
		SCMP_SYS(exit), SCMP_SYS(exit_group), SCMP_SYS(rt_sigreturn), SCMP_SYS(rt_sigprocmask),
		SCMP_SYS(clock_gettime), SCMP_SYS(gettimeofday), SCMP_SYS(getpid), SCMP_SYS(fstat), SCMP_SYS(lseek),
		SCMP_SYS(sysinfo), SCMP_SYS(getrandom), SCMP_SYS(poll), SCMP_SYS(gettid),
		/* what a sanitizer build's runtime calls on its own */
		SCMP_SYS(sigaltstack), SCMP_SYS(rt_sigaction), SCMP_SYS(getrlimit), SCMP_SYS(prlimit64),
		SCMP_SYS(sched_yield), SCMP_SYS(nanosleep), SCMP_SYS(clock_nanosleep),
	};
	scmp_filter_ctx f;
	struct rlimit lim;
	unsigned long long pages = 0;
	FILE *statm = fopen("/proc/self/statm", "re");

	if (statm) {
		if (fscanf(statm, "%llu", &pages) != 1)
			pages = 0;
		fclose(statm);
	}
	/* Another uid first (its capabilities go with root's uid), or at
	 * least none of them. */
	if (d->has_sandbox_user ? privileges_become(d->sandbox_uid, d->sandbox_gid) != 0 : privileges_drop_all() != 0)
		_exit(1);
#if !defined(__SANITIZE_ADDRESS__)
	if (pages) {
		lim.rlim_cur = lim.rlim_max = pages * (uint64_t)sysconf(_SC_PAGESIZE) + RENDER_MAX_GROWTH;
		setrlimit(RLIMIT_AS, &lim);
	}
#endif
	lim = (struct rlimit){0, 0};
	setrlimit(RLIMIT_CORE, &lim);
	setrlimit(RLIMIT_NPROC, &lim);
	if (!(f = seccomp_init(SCMP_ACT_ERRNO(EPERM))))
		_exit(1);
	for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
		if (seccomp_rule_add(f, SCMP_ACT_ALLOW, allowed[i], 0) != 0)
			_exit(1);
	if (seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(newfstatat), 1,
			     SCMP_A3(SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH, AT_EMPTY_PATH)) != 0 ||
	    seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 1, SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0)) != 0 ||
	    seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(mprotect), 1, SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0)) != 0 ||
	    seccomp_load(f) != 0)
		_exit(1);
	seccomp_release(f);
}

/* The child: writes "OK" and the rendering to the client, then exits. It
 * holds a copy-on-write snapshot of everything; it keeps only the client's
 * descriptor, no capability and not root's uid, under a seccomp filter. */
static void render_child(struct daemon *d, struct query_conn *q)
{
	struct timeval tv = {.tv_sec = RENDER_SEND_TIMEOUT_S};
	struct wbuf out;
	sigset_t none;
	int fd = q->fd;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (fd > 3)
		close_range(3, (unsigned)fd - 1, 0);
	close_range((unsigned)fd + 1, ~0u, 0);
	lower_priority();
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	render_sandbox(d);
	wbuf_init(&out);
	if (query_render(d, &q->render, &out, fd) != 0)
		_exit(1);
	_exit(out.len && sock_send_all(fd, out.data, out.len) != 0 ? 1 : 0);
}

/* Starts q's render if a slot is free; the connection then belongs to the
 * child. Returns true if started (w is gone then). */
static bool start_render(struct daemon *d, struct watch *w)
{
	struct query_conn *q = w->obj;
	int slot = -1;
	pid_t child;

	if (!slot_for(d, q))
		return false;
	for (int i = 0; i < MAX_RENDERS && slot < 0; i++)
		if (renders[i].pid <= 0)
			slot = i;
	child = fork();
	if (child < 0) {
		log_warn("cannot fork to render a query: %s", strerror(errno));
		return false;
	}
	if (child == 0)
		render_child(d, q);
	renders[slot] = (struct render_child){
		.pid = child, .uid = q->uid, .privileged = privileged(d, q), .started_ns = monotonic_ns()};
	close_query(d, w); /* our copy of the connection */
	return true;
}

void queries_on_event(struct daemon *d, struct watch *w, uint32_t events)
{
	struct query_conn *q = w->obj;
	int r = 0;

	if ((events & (EPOLLERR | EPOLLHUP)) && !(events & EPOLLIN)) {
		close_query(d, w); /* the client is gone */
		return;
	}
	if (events & EPOLLIN)
		r = query_conn_on_readable(q, d);
	if (r == 0 && q->render_waiting) {
		if (!start_render(d, w))
			watch_mod(&d->loop, w, 0); /* waits for a slot (queries_maintain) */
		return;
	}
	if (r == 0)
		r = query_conn_flush(q);
	if (r != 0 || (events & (EPOLLERR | EPOLLHUP))) {
		close_query(d, w);
		return;
	}
	watch_mod(&d->loop, w, q->answered ? EPOLLOUT : EPOLLIN);
}

/* The first query connection to act on now: one waiting for a render slot
 * that is free now, or one past its time. */
static struct watch *due(struct daemon *d, uint64_t now, bool *timed_out)
{
	for (struct watch *w = d->loop.connections; w; w = w->next) {
		struct query_conn *q = w->obj;

		if (w->kind != W_QUERY)
			continue;
		*timed_out = now - q->opened_ns > (q->render_waiting ? RENDER_SLOT_WAIT_NS : QUERY_TIMEOUT_NS);
		if (*timed_out)
			return w;
		if (q->render_waiting && slot_for(d, q))
			return w;
	}
	return NULL;
}

void queries_maintain(struct daemon *d, uint64_t now)
{
	struct watch *w;
	bool timed_out;

	for (int i = 0; i < MAX_RENDERS; i++)
		if (renders[i].pid > 0 && !renders[i].killed && now - renders[i].started_ns > RENDER_DEADLINE_NS) {
			kill(renders[i].pid, SIGKILL); /* our unreaped child: the pid is still its */
			renders[i].killed = true;
			d->counters.renders_killed++;
		}
	while ((w = due(d, now, &timed_out))) {
		struct query_conn *q = w->obj;
		if (timed_out) {
			if (q->render_waiting) {
				/* Busy: say so rather than leave the client hanging. */
				const char busy[] = "ERROR busy: too many queries rendering; try again\n";
				send(q->fd, busy, sizeof(busy) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
			}
			close_query(d, w);
		} else if (!start_render(d, w)) {
			break; /* fork failed: next tick */
		}
	}
}

bool queries_child_exited(struct daemon *d, pid_t pid, int status)
{
	(void)d;
	(void)status;
	for (int i = 0; i < MAX_RENDERS; i++)
		if (renders[i].pid == pid) {
			renders[i].pid = 0;
			return true;
		}
	return false;
}

void queries_close_all(struct daemon *d)
{
	for (;;) {
		struct watch *w = d->loop.connections;
		while (w && w->kind != W_QUERY)
			w = w->next;
		if (!w)
			break;
		close_query(d, w);
	}
	for (int i = 0; i < MAX_RENDERS; i++)
		if (renders[i].pid > 0) {
			kill(renders[i].pid, SIGKILL);
			waitpid(renders[i].pid, NULL, 0);
			renders[i].pid = 0;
		}
}
