/* SPDX-License-Identifier: GPL-2.0-only */
#include "native_client.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "daemon/support/clock.h"
#include "daemon/support/log.h"
#include "native_protocol.h"

/* Walks sent and not answered yet, at most: the helper keeps what it has
 * read but not answered (while it waits for a debug file) in its memory. */
#define MAX_IN_FLIGHT 256u
#define HELPER_FD 3
#define BACKOFF_FIRST_NS (1000000000ull)
#define BACKOFF_MAX_NS (60ull * 1000000000ull)
/* A helper that ran this long before it failed starts again at once. */
#define STABLE_NS (60ull * 1000000000ull)
/* Its CPU time, in all: a runaway parse ends here at the latest. */
#define HELPER_CPU_S 3600u
#define HELPER_FILES 16384u
/* Late by this many deadlines, whatever CPU it had: blocked. */
#define NATIVE_BLOCKED_FACTOR 15u
#define HELPER_ADDRESS_SPACE_EXTRA (4ull << 30) /* mapped files, beside the heap */

struct out_msg {
	struct out_msg *next;
	void *walk;
	size_t len;
	unsigned nfds;
	int fds[2];
	uint8_t data[];
};

struct in_flight {
	uint64_t seq;
	void *walk;
	uint64_t sent_ns;
	size_t len;
};

struct native_client {
	struct native_client_config cfg;
	uint32_t watched; /* the events the watch hook was given (0: none) */
	struct native_client_hooks hooks;
	int exe_fd;  /* the helper's executable, opened once */
	int fd;      /* its socket, -1 while none runs */
	pid_t pid;   /* its process, 0 once reaped */
	uint64_t gen;
	uint64_t started_ns;
	uint64_t restart_at_ns;
	uint64_t backoff_ns;
	struct out_msg *head, *tail;
	size_t queued_bytes; /* walks queued or in flight */
	struct in_flight flight[MAX_IN_FLIGHT];
	unsigned flight_head, flight_n;
	uint64_t next_seq;
	/* The oldest walk in flight when the tick last looked, and the
	 * helper's CPU time then: a late answer is a stall only if the helper
	 * spent CPU on it (on a busy host it may just wait for a CPU). */
	uint64_t watched_seq;
	uint64_t watched_cpu_ns;
	uint8_t *buf;
	struct native_client_counters k;
};

static void close_fds(int *fds, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

struct native_client *native_client_new(const struct native_client_config *cfg,
					 const struct native_client_hooks *hooks)
{
	struct native_client *c = calloc(1, sizeof(*c));

	if (!c || !(c->buf = malloc(NATIVE_MSG_MAX))) {
		free(c);
		return NULL;
	}
	c->cfg = *cfg;
	c->hooks = *hooks;
	c->fd = -1;
	c->backoff_ns = BACKOFF_FIRST_NS;
	c->exe_fd = open(cfg->helper_path, O_PATH | O_CLOEXEC);
	if (c->exe_fd < 0)
		log_warn("cannot find the native helper %s: %s (native frames off)", cfg->helper_path, strerror(errno));
	return c;
}

/* --- The helper's process --- */

/* In the child, between fork and exec: the sandbox (native_client.h). */
static void __attribute__((noreturn)) become_helper(const struct native_client *c, int sock)
{
	static char *const argv[] = {"jsampled-unwind", NULL};
	char *envp[3] = {NULL};
	int ne = 0, null_fd, exe;
	const char *v;
	sigset_t none;
	struct rlimit lim;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	/* The socket to 3 and the executable to 4, from numbers above both
	 * (either may be 3 or 4 now). */
	sock = fcntl(sock, F_DUPFD_CLOEXEC, HELPER_FD + 2);
	exe = fcntl(c->exe_fd, F_DUPFD_CLOEXEC, HELPER_FD + 2);
	if (sock < 0 || exe < 0 || dup2(sock, HELPER_FD) != HELPER_FD || dup2(exe, HELPER_FD + 1) != HELPER_FD + 1)
		_exit(126);
	if ((null_fd = open("/dev/null", O_RDWR | O_CLOEXEC)) >= 0)
		dup2(null_fd, 0);
	close_range(HELPER_FD + 2, ~0u, 0);
	if (setgroups(0, NULL) != 0 || setresgid(c->cfg.gid, c->cfg.gid, c->cfg.gid) != 0 ||
	    setresuid(c->cfg.uid, c->cfg.uid, c->cfg.uid) != 0 || geteuid() == 0)
		_exit(126); /* never runs with our rights */
	/* After the uid change, which would clear it; then the parent may
	 * already be gone. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		_exit(0);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_DUMPABLE, 0) != 0)
		_exit(126);
	lim = (struct rlimit){0, 0};
	setrlimit(RLIMIT_CORE, &lim);
	setrlimit(RLIMIT_NPROC, &lim);
	lim = (struct rlimit){HELPER_FILES, HELPER_FILES};
	setrlimit(RLIMIT_NOFILE, &lim);
	lim = (struct rlimit){HELPER_CPU_S, HELPER_CPU_S + 10};
	setrlimit(RLIMIT_CPU, &lim);
#if !defined(__SANITIZE_ADDRESS__)
	/* (Sanitizer builds map terabytes of shadow: no memory limit there.) */
	lim = (struct rlimit){c->cfg.memory_bytes, c->cfg.memory_bytes};
	if (setrlimit(RLIMIT_DATA, &lim) != 0)
		_exit(126);
	lim.rlim_cur = lim.rlim_max = c->cfg.memory_bytes + HELPER_ADDRESS_SPACE_EXTRA;
	setrlimit(RLIMIT_AS, &lim);
#endif
	/* Nothing of our environment but a sanitizer build's settings. */
	if ((v = getenv("ASAN_OPTIONS")) && asprintf(&envp[ne], "ASAN_OPTIONS=%s", v) > 0)
		ne++;
	if ((v = getenv("UBSAN_OPTIONS")) && asprintf(&envp[ne], "UBSAN_OPTIONS=%s", v) > 0)
		ne++;
	syscall(SYS_execveat, HELPER_FD + 1, "", argv, envp, AT_EMPTY_PATH);
	_exit(127);
}

static void watch(struct native_client *c)
{
	uint32_t events = c->fd < 0 ? 0 : EPOLLIN | (native_client_wants_out(c) ? EPOLLOUT : 0);

	if (events == c->watched || !c->hooks.watch)
		return;
	c->watched = events;
	c->hooks.watch(c->hooks.ctx, events ? c->fd : -1, events);
}

static void on_restart(struct native_client *c)
{
	if (c->hooks.on_restart)
		c->hooks.on_restart(c->hooks.ctx);
}

static int start(struct native_client *c, uint64_t now)
{
	int sv[2], size = 1 << 20;
	pid_t pid;

	if (c->exe_fd < 0 || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
		goto failed;
	for (int i = 0; i < 2; i++) {
		(void)setsockopt(sv[i], SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
		(void)setsockopt(sv[i], SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	}
	pid = fork();
	if (pid == 0) {
		close(sv[0]);
		become_helper(c, sv[1]);
	}
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		goto failed;
	}
	fcntl(sv[0], F_SETFL, fcntl(sv[0], F_GETFL) | O_NONBLOCK);
	c->fd = sv[0];
	c->pid = pid;
	c->gen++;
	c->started_ns = now;
	c->k.starts++;
	log_debug("native helper started: pid %d, uid %u", (int)pid, (unsigned)c->cfg.uid);
	watch(c);
	on_restart(c);
	return 0;
failed:
	c->k.start_failed++;
	c->restart_at_ns = now + c->backoff_ns;
	log_warn("cannot start the native helper: %s (native frames off for %llu s)", strerror(errno),
		 (unsigned long long)(c->backoff_ns / 1000000000ull));
	return -1;
}

static void free_msg(struct out_msg *m)
{
	close_fds(m->fds, m->nfds);
	free(m);
}

/* Every walk in flight and queued is lost (the oldest one blamed if
 * blame), every queued message dropped. */
static void drop_everything(struct native_client *c, bool blame)
{
	struct out_msg *m;

	for (unsigned i = 0; i < c->flight_n; i++) {
		struct in_flight *f = &c->flight[(c->flight_head + i) % MAX_IN_FLIGHT];

		c->k.lost++;
		c->hooks.on_lost(c->hooks.ctx, f->walk, blame && i == 0);
	}
	c->flight_n = 0;
	while ((m = c->head)) {
		c->head = m->next;
		if (m->walk) {
			c->k.lost++;
			c->hooks.on_lost(c->hooks.ctx, m->walk, false);
		}
		free_msg(m);
	}
	c->tail = NULL;
	c->queued_bytes = 0;
}

/* The helper is gone (or must go): every walk it had and every message
 * for it is dropped; the walk it worked on is blamed. */
static void lose_helper(struct native_client *c, const char *why, uint64_t now)
{
	if (c->fd < 0)
		return;
	if (c->pid > 0)
		kill(c->pid, SIGKILL);
	{
		int fd = c->fd;

		c->fd = -1;
		watch(c); /* unwatched before its number can be reused */
		close(fd);
	}
	c->k.exits++;
	if (now - c->started_ns >= STABLE_NS)
		c->backoff_ns = BACKOFF_FIRST_NS;
	c->restart_at_ns = now + c->backoff_ns;
	log_warn("native helper (pid %d) %s: %u walks lost, restarting in %llu s", (int)c->pid, why, c->flight_n,
		 (unsigned long long)(c->backoff_ns / 1000000000ull));
	if (c->backoff_ns < BACKOFF_MAX_NS)
		c->backoff_ns = c->backoff_ns * 2 < BACKOFF_MAX_NS ? c->backoff_ns * 2 : BACKOFF_MAX_NS;
	drop_everything(c, true);
}

bool native_client_child_exited(struct native_client *c, pid_t pid, int status)
{
	char why[64];

	if (!c || pid <= 0 || pid != c->pid)
		return false;
	c->pid = 0;
	if (WIFSIGNALED(status))
		snprintf(why, sizeof(why), "was killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		snprintf(why, sizeof(why), "exited with status %d", WEXITSTATUS(status));
	if (c->fd >= 0)
		lose_helper(c, why, monotonic_ns());
	else
		log_info("native helper (pid %d) %s", (int)pid, why);
	return true;
}

/* --- Sending --- */

static bool running(struct native_client *c, uint64_t now)
{
	if (c->fd >= 0)
		return true;
	if (now < c->restart_at_ns)
		return false;
	return start(c, now) == 0;
}

static void send_queue(struct native_client *c);

static void flush(struct native_client *c)
{
	send_queue(c);
	watch(c);
}

static void send_queue(struct native_client *c)
{
	struct out_msg *m;

	while (c->fd >= 0 && (m = c->head)) {
		char ctl[CMSG_SPACE(2 * sizeof(int))];
		struct iovec iov = {m->data, m->len};
		struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
		ssize_t r;

		if (m->walk && c->flight_n >= MAX_IN_FLIGHT)
			return;
		if (m->nfds) {
			struct cmsghdr *cm;

			memset(ctl, 0, sizeof(ctl));
			mh.msg_control = ctl;
			mh.msg_controllen = CMSG_SPACE(m->nfds * sizeof(int));
			cm = CMSG_FIRSTHDR(&mh);
			cm->cmsg_level = SOL_SOCKET;
			cm->cmsg_type = SCM_RIGHTS;
			cm->cmsg_len = CMSG_LEN(m->nfds * sizeof(int));
			memcpy(CMSG_DATA(cm), m->fds, m->nfds * sizeof(int));
		}
		r = sendmsg(c->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (r < 0) {
			char why[96];

			snprintf(why, sizeof(why), "stopped reading (%s)", strerror(errno));
			lose_helper(c, why, monotonic_ns());
			return;
		}
		c->k.bytes_sent += m->len;
		c->head = m->next;
		if (!c->head)
			c->tail = NULL;
		if (m->walk) {
			struct in_flight *f = &c->flight[(c->flight_head + c->flight_n++) % MAX_IN_FLIGHT];

			memcpy(&f->seq, m->data + 8, 8);
			f->walk = m->walk;
			f->sent_ns = monotonic_ns();
			f->len = m->len;
			c->k.walks++;
		}
		free_msg(m);
	}
}

static int enqueue(struct native_client *c, uint32_t type, uint32_t key, uint64_t seq, struct wbuf *msg, int *fds,
		   unsigned nfds, void *walk, bool first)
{
	struct out_msg *m;

	if (msg->oom || msg->len < NATIVE_MSG_HEAD || msg->len > NATIVE_MSG_MAX || nfds > 2 ||
	    !(m = malloc(sizeof(*m) + msg->len))) {
		close_fds(fds, nfds);
		return -1;
	}
	wbuf_patch_u32(msg, 0, type);
	wbuf_patch_u32(msg, 4, key);
	memcpy(msg->data + 8, &seq, 8);
	memcpy(m->data, msg->data, msg->len);
	m->len = msg->len;
	m->walk = walk;
	m->nfds = nfds;
	for (unsigned i = 0; i < nfds; i++)
		m->fds[i] = fds[i];
	if (walk)
		c->queued_bytes += msg->len;
	if (first) {
		m->next = c->head;
		c->head = m;
		if (!c->tail)
			c->tail = m;
	} else {
		m->next = NULL;
		if (c->tail)
			c->tail->next = m;
		else
			c->head = m;
		c->tail = m;
	}
	return 0;
}

int native_client_send(struct native_client *c, uint32_t type, uint32_t key, struct wbuf *msg, int *fds,
		       unsigned nfds, void *walk)
{
	if (!running(c, monotonic_ns()) || (walk && c->queued_bytes + msg->len > c->cfg.queue_bytes)) {
		close_fds(fds, nfds);
		if (walk)
			c->k.queue_full++;
		return walk ? -1 : 0;
	}
	if (enqueue(c, type, key, walk ? ++c->next_seq : 0, msg, fds, nfds, walk, false) != 0) {
		if (walk)
			c->k.queue_full++;
		return walk ? -1 : 0;
	}
	flush(c);
	return 0;
}

/* --- Answers --- */

static void on_want_debug(struct native_client *c, uint32_t key, struct rbuf *r)
{
	unsigned n = rbuf_u8(r);
	const unsigned char *id = rbuf_bytes(r, n);
	int fds[2] = {-1, -1}, have[2];
	unsigned nfds = 0;
	struct wbuf w;

	if (r->err || n == 0 || n > NATIVE_BUILD_ID_MAX) {
		c->k.bad_answers++;
		lose_helper(c, "asked for a debug file out of protocol", monotonic_ns());
		return;
	}
	c->k.debug_asks++;
	if (c->hooks.on_want_debug)
		c->hooks.on_want_debug(c->hooks.ctx, key, id, n, fds);
	wbuf_init(&w);
	wbuf_put(&w, (uint8_t[NATIVE_MSG_HEAD]){0}, NATIVE_MSG_HEAD);
	wbuf_u8(&w, (uint8_t)n);
	wbuf_put(&w, id, n);
	wbuf_u8(&w, (uint8_t)((fds[0] >= 0 ? 1 : 0) | (fds[1] >= 0 ? 2 : 0)));
	for (int i = 0; i < 2; i++)
		if (fds[i] >= 0)
			have[nfds++] = fds[i];
	/* Ahead of the queue: the helper waits for it. */
	(void)enqueue(c, NATIVE_MSG_DEBUG, key, 0, &w, have, nfds, NULL, true);
	wbuf_free(&w);
}

static void read_answers(struct native_client *c)
{
	while (c->fd >= 0) {
		char ctl[CMSG_SPACE(4 * sizeof(int))];
		struct iovec iov = {c->buf, NATIVE_MSG_MAX};
		struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof(ctl)};
		ssize_t r = recvmsg(c->fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		struct cmsghdr *cm;
		struct rbuf rb;
		uint32_t type, key;
		uint64_t seq;

		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (r <= 0) {
			lose_helper(c, r == 0 ? "closed its socket" : "broke its socket", monotonic_ns());
			return;
		}
		/* The helper sends no descriptors: any that came are closed. */
		for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
			if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
				close_fds((int *)CMSG_DATA(cm), (unsigned)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int)));
		rbuf_init(&rb, c->buf, (size_t)r);
		type = rbuf_u32(&rb);
		key = rbuf_u32(&rb);
		seq = rbuf_u64(&rb);
		if (!rb.err && type == NATIVE_MSG_WANT_DEBUG) {
			on_want_debug(c, key, &rb);
			flush(c);
			continue;
		}
		if (rb.err || type != NATIVE_MSG_FRAMES || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || c->flight_n == 0 ||
		    c->flight[c->flight_head].seq != seq) {
			c->k.bad_answers++;
			lose_helper(c, "answered out of protocol", monotonic_ns());
			return;
		}
		{
			struct in_flight f = c->flight[c->flight_head];

			c->flight_head = (c->flight_head + 1) % MAX_IN_FLIGHT;
			c->flight_n--;
			c->queued_bytes -= f.len < c->queued_bytes ? f.len : c->queued_bytes;
			c->k.answers++;
			c->hooks.on_frames(c->hooks.ctx, f.walk, c->buf, (size_t)r);
		}
	}
}

void native_client_on_event(struct native_client *c, uint32_t events)
{
	if (c->fd < 0)
		return;
	if (events & EPOLLIN)
		read_answers(c);
	if (c->fd >= 0 && (events & (EPOLLHUP | EPOLLERR))) {
		read_answers(c); /* what it said before it went */
		lose_helper(c, "hung up", monotonic_ns());
		return;
	}
	flush(c);
}

/* The helper's CPU time (user + system), 0 if unknown. */
static uint64_t helper_cpu_ns(pid_t pid)
{
	char path[40], buf[1024], *p;
	unsigned long long ut = 0, st = 0;
	long hz = sysconf(_SC_CLK_TCK);
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (pid <= 0 || hz <= 0 || (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	/* utime and stime: fields 14 and 15, after comm's closing paren */
	if (!(p = strrchr(buf, ')')) ||
	    sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return 0;
	return (ut + st) * (1000000000ull / (uint64_t)hz);
}

void native_client_tick(struct native_client *c, uint64_t now)
{
	const struct in_flight *oldest;

	if (c->fd < 0)
		return;
	read_answers(c); /* an answer waiting in the socket is not late */
	if (c->fd < 0 || c->flight_n == 0) {
		if (c->fd >= 0)
			flush(c);
		return;
	}
	oldest = &c->flight[c->flight_head];
	if (oldest->seq != c->watched_seq) {
		c->watched_seq = oldest->seq;
		c->watched_cpu_ns = helper_cpu_ns(c->pid);
	}
	/* Late, and it worked on it for half the deadline: stalled on what
	 * it parses. Late by far (blocked, say): gone too. */
	if (now - oldest->sent_ns > c->cfg.deadline_ns &&
	    (helper_cpu_ns(c->pid) - c->watched_cpu_ns > c->cfg.deadline_ns / 2 ||
	     now - oldest->sent_ns > NATIVE_BLOCKED_FACTOR * c->cfg.deadline_ns)) {
		c->k.timeouts++;
		lose_helper(c, "did not answer in time", now);
		return;
	}
	flush(c);
}

int native_client_fd(const struct native_client *c)
{
	return c ? c->fd : -1;
}

bool native_client_wants_out(const struct native_client *c)
{
	return c && c->fd >= 0 && c->head && !(c->head->walk && c->flight_n >= MAX_IN_FLIGHT);
}

uint64_t native_client_generation(const struct native_client *c)
{
	return c ? c->gen : 0;
}

bool native_client_ready(struct native_client *c)
{
	return c && running(c, monotonic_ns());
}

void native_client_forgive(struct native_client *c)
{
	if (!c)
		return;
	c->backoff_ns = BACKOFF_FIRST_NS;
	c->restart_at_ns = 0;
}

const struct native_client_counters *native_client_counters(const struct native_client *c)
{
	static const struct native_client_counters none;

	return c ? &c->k : &none;
}

uint64_t native_client_helper_cpu_ns(const struct native_client *c)
{
	return c && c->pid > 0 ? helper_cpu_ns(c->pid) : 0;
}

size_t native_client_queued_bytes(const struct native_client *c)
{
	return c ? c->queued_bytes : 0;
}

void native_client_free(struct native_client *c)
{
	if (!c)
		return;
	drop_everything(c, false);
	if (c->fd >= 0) {
		int fd = c->fd;

		c->fd = -1;
		watch(c);
		close(fd);
	}
	if (c->pid > 0)
		kill(c->pid, SIGKILL);
	if (c->exe_fd >= 0)
		close(c->exe_fd);
	free(c->buf);
	free(c);
}
