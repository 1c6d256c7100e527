/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * jsampled-unwind: the native helper's process (native_helper.h). jsampled
 * starts it with its socket on descriptor 3, already as an unprivileged
 * user with no_new_privs and its limits (native_client.c); it refuses to
 * run otherwise. Before it reads anything it narrows its system calls to
 * what the request path needs: reading and writing its socket, reading
 * and mapping the descriptors it gets (never executable), memory, time,
 * and exiting. Anything else ends it with SIGSYS, and it says which call.
 */
#include <errno.h>
#include <fcntl.h>
#include <seccomp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "native_helper.h"
#include "native_protocol.h"

#define SOCK 3
#define MAX_FDS 4
/* Messages read while a walk waits for its debug file, at most. */
#define STASH_MAX_BYTES (64u << 20)

struct stashed {
	struct stashed *next;
	size_t len;
	unsigned nfds;
	int fds[MAX_FDS];
	uint8_t data[];
};

static struct stashed *stash_head, *stash_tail;
static size_t stash_bytes;
static uint8_t *inbuf;

/* Answers wait here until no request is pending (or the batch is full),
 * then go out in one sendmmsg: jsampled sleeps between drains, and woken
 * once an answer it woke 700-2,000 times a second at 10 kHz (bench-cost),
 * each wake-up ~50 us of CPU on these VMs. */
#define BATCH_MAX 64
#define BATCH_BYTES (1u << 20)
static uint8_t *batch;
static size_t batch_len, batch_off[BATCH_MAX + 1];
static unsigned batch_n;

static void say(const char *msg)
{
	ssize_t r = write(2, msg, strlen(msg));
	(void)r;
}

/* A file mapped by libdw was truncated under it: the walk gives up (it
 * returns here only outside a walk: then the helper ends). */
static void on_sigbus(int sig)
{
	(void)sig;
	native_helper_on_sigbus();
	say("jsampled-unwind: SIGBUS outside a walk\n");
	_exit(72);
}

static void on_sigsys(int sig, siginfo_t *si, void *uc)
{
	char msg[96];
	int n;

	(void)sig;
	(void)uc;
	n = snprintf(msg, sizeof(msg), "jsampled-unwind: system call %d refused by its filter\n", si->si_syscall);
	if (n > 0)
		say(msg);
	_exit(70);
}

/* The allow-list. Files arrive open; open() itself fails (libdw may try a
 * path of its own: it finds nothing). */
static int sandbox(void)
{
	static const int allowed[] = {
		SCMP_SYS(read), SCMP_SYS(write), SCMP_SYS(readv), SCMP_SYS(writev), SCMP_SYS(pread64),
		SCMP_SYS(recvmsg), SCMP_SYS(sendmsg), SCMP_SYS(sendmmsg), SCMP_SYS(recvfrom), SCMP_SYS(sendto), SCMP_SYS(close), SCMP_SYS(fstat), SCMP_SYS(lseek),
		SCMP_SYS(dup), SCMP_SYS(fcntl), SCMP_SYS(munmap), SCMP_SYS(mremap), SCMP_SYS(madvise),
		SCMP_SYS(brk), SCMP_SYS(futex), SCMP_SYS(exit), SCMP_SYS(exit_group), SCMP_SYS(rt_sigreturn),
		SCMP_SYS(rt_sigprocmask), SCMP_SYS(clock_gettime), SCMP_SYS(gettimeofday), SCMP_SYS(getpid),
		SCMP_SYS(gettid), SCMP_SYS(sched_yield), SCMP_SYS(getrlimit), SCMP_SYS(prlimit64),
		SCMP_SYS(sigaltstack), SCMP_SYS(rt_sigaction), SCMP_SYS(nanosleep), SCMP_SYS(clock_nanosleep),
		SCMP_SYS(getrandom), SCMP_SYS(sysinfo), /* glibc qsort sizes its buffer by it */
	};
	static const int refused[] = {
		SCMP_SYS(open), SCMP_SYS(openat), SCMP_SYS(openat2), SCMP_SYS(stat), SCMP_SYS(lstat),
		SCMP_SYS(readlink), SCMP_SYS(readlinkat), SCMP_SYS(access), SCMP_SYS(faccessat),
		SCMP_SYS(faccessat2), SCMP_SYS(statx), SCMP_SYS(ioctl),
	};
	scmp_filter_ctx f = seccomp_init(SCMP_ACT_TRAP);
	int rc = -1;

	if (!f)
		return -1;
	for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
		if (seccomp_rule_add(f, SCMP_ACT_ALLOW, allowed[i], 0) != 0)
			goto out;
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		if (seccomp_rule_add(f, SCMP_ACT_ERRNO(EACCES), refused[i], 0) != 0)
			goto out;
	/* fstat through fstatat(fd, "", AT_EMPTY_PATH) only: no path lookups. */
	if (seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(newfstatat), 1,
			     SCMP_A3(SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH, AT_EMPTY_PATH)) != 0 ||
	    seccomp_rule_add(f, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(newfstatat), 1,
			     SCMP_A3(SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH, 0)) != 0)
		goto out;
	/* Memory and mapped files, never executable. */
	if (seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 1, SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0)) != 0 ||
	    seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(mprotect), 1, SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0)) != 0)
		goto out;
	rc = seccomp_load(f);
out:
	seccomp_release(f);
	return rc;
}

static int flush_answers(void)
{
	struct mmsghdr mm[BATCH_MAX];
	struct iovec iov[BATCH_MAX];
	unsigned sent = 0;

	for (unsigned i = 0; i < batch_n; i++) {
		iov[i] = (struct iovec){batch + batch_off[i], batch_off[i + 1] - batch_off[i]};
		mm[i] = (struct mmsghdr){.msg_hdr = {.msg_iov = &iov[i], .msg_iovlen = 1}};
	}
	while (sent < batch_n) {
		int r = sendmmsg(SOCK, mm + sent, batch_n - sent, MSG_NOSIGNAL);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		sent += (unsigned)r;
	}
	batch_n = 0;
	batch_len = 0;
	return 0;
}

static int queue_answer(const uint8_t *data, size_t len)
{
	if ((batch_n == BATCH_MAX || batch_len + len > BATCH_BYTES) && flush_answers() != 0)
		return -1;
	memcpy(batch + batch_len, data, len);
	batch_off[batch_n] = batch_len;
	batch_len += len;
	batch_off[++batch_n] = batch_len;
	return 0;
}

/* One message from jsampled: blocking (the helper has nothing else to
 * do) once the answers so far are sent. Its length, or 0 when jsampled
 * has gone; -1 on an error. */
static ssize_t receive(uint8_t *buf, int *fds, unsigned *nfds)
{
	char ctl[CMSG_SPACE(MAX_FDS * sizeof(int))];
	struct iovec iov = {buf, NATIVE_MSG_MAX};
	struct msghdr mh;
	struct cmsghdr *cm;
	ssize_t r;
	int flags = MSG_CMSG_CLOEXEC | MSG_DONTWAIT;

	*nfds = 0;
	for (;;) {
		mh = (struct msghdr){.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof(ctl)};
		r = recvmsg(SOCK, &mh, flags);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EAGAIN && (flags & MSG_DONTWAIT)) {
			if (flush_answers() != 0)
				return -1;
			flags &= ~MSG_DONTWAIT;
			continue;
		}
		break;
	}
	if (r <= 0)
		return r;
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		unsigned n;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		n = (unsigned)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		for (unsigned i = 0; i < n; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
			if (*nfds < MAX_FDS)
				fds[(*nfds)++] = fd;
			else
				close(fd);
		}
	}
	return (mh.msg_flags & MSG_TRUNC) ? -1 : r;
}

static int send_msg(const uint8_t *data, size_t len)
{
	ssize_t r;

	do
		r = send(SOCK, data, len, MSG_NOSIGNAL);
	while (r < 0 && errno == EINTR);
	return r == (ssize_t)len ? 0 : -1;
}

/* native_debug_ask_fn: WANT_DEBUG, then everything read meanwhile waits in
 * the stash until the DEBUG answer for this build ID comes. */
static int ask_debug(void *ctx, uint32_t key, const unsigned char *id, unsigned n, int fds[2])
{
	uint8_t out[NATIVE_MSG_HEAD + 1 + NATIVE_BUILD_ID_MAX];
	uint32_t type = NATIVE_MSG_WANT_DEBUG;
	uint64_t seq = 0;

	(void)ctx;
	fds[0] = fds[1] = -1;
	memcpy(out, &type, 4);
	memcpy(out + 4, &key, 4);
	memcpy(out + 8, &seq, 8);
	out[NATIVE_MSG_HEAD] = (uint8_t)n;
	memcpy(out + NATIVE_MSG_HEAD + 1, id, n);
	if (flush_answers() != 0 || send_msg(out, NATIVE_MSG_HEAD + 1 + n) != 0)
		return -1;
	for (;;) {
		int got[MAX_FDS];
		unsigned ngot;
		ssize_t len = receive(inbuf, got, &ngot);
		struct stashed *s;
		uint32_t t, k;

		if (len <= 0)
			return -1;
		memcpy(&t, inbuf, 4);
		memcpy(&k, inbuf + 4, 4);
		if (len >= (ssize_t)(NATIVE_MSG_HEAD + 2 + n) && t == NATIVE_MSG_DEBUG && k == key &&
		    inbuf[NATIVE_MSG_HEAD] == n && memcmp(inbuf + NATIVE_MSG_HEAD + 1, id, n) == 0) {
			uint8_t have = inbuf[NATIVE_MSG_HEAD + 1 + n];
			unsigned used = 0;

			for (int pass = 0; pass < 2; pass++)
				if ((have & (1u << pass)) && used < ngot)
					fds[pass] = got[used++];
			while (used < ngot)
				close(got[used++]);
			return 0;
		}
		if (stash_bytes + (size_t)len > STASH_MAX_BYTES) {
			say("jsampled-unwind: too much to keep while waiting for a debug file\n");
			_exit(71);
		}
		if (!(s = malloc(sizeof(*s) + (size_t)len))) {
			say("jsampled-unwind: out of memory (--native-helper-mb)\n");
			_exit(73);
		}
		s->next = NULL;
		s->len = (size_t)len;
		s->nfds = ngot;
		memcpy(s->fds, got, ngot * sizeof(int));
		memcpy(s->data, inbuf, (size_t)len);
		stash_bytes += (size_t)len;
		if (stash_tail)
			stash_tail->next = s;
		else
			stash_head = s;
		stash_tail = s;
	}
}

int main(void)
{
	struct sigaction sa = {.sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO};
	struct native_helper *h;
	struct wbuf out;
	uint8_t *msg;

	if (geteuid() == 0 || getuid() == 0 || prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1 ||
	    fcntl(SOCK, F_GETFD) < 0) {
		say("jsampled-unwind: runs only as jsampled starts it (unprivileged, no_new_privs, its socket on fd 3)\n");
		return 64;
	}
	sigaction(SIGSYS, &sa, NULL);
	signal(SIGBUS, on_sigbus);
	inbuf = malloc(NATIVE_MSG_MAX);
	msg = malloc(NATIVE_MSG_MAX);
	batch = malloc(BATCH_BYTES);
	h = native_helper_new(ask_debug, NULL);
	wbuf_init(&out);
	if (!inbuf || !msg || !batch || !h || wbuf_reserve(&out, NATIVE_MSG_MAX) != 0) {
		say("jsampled-unwind: out of memory\n");
		return 65;
	}
	if (sandbox() != 0) {
		say("jsampled-unwind: cannot install its seccomp filter\n");
		return 66;
	}
	for (;;) {
		int fds[MAX_FDS];
		unsigned nfds;
		size_t len;

		if (stash_head) {
			struct stashed *s = stash_head;

			stash_head = s->next;
			if (!stash_head)
				stash_tail = NULL;
			stash_bytes -= s->len;
			memcpy(msg, s->data, s->len);
			memcpy(fds, s->fds, s->nfds * sizeof(int));
			nfds = s->nfds;
			len = s->len;
			free(s);
		} else {
			ssize_t r = receive(msg, fds, &nfds);

			if (r == 0)
				return 0; /* jsampled closed: done */
			if (r < 0)
				return 67;
			len = (size_t)r;
		}
		(void)native_helper_handle(h, msg, len, fds, nfds, &out);
		if (out.len && (out.len > BATCH_BYTES || queue_answer(out.data, out.len) != 0))
			return 68;
		if (native_helper_worn_out(h))
			return flush_answers() != 0 ? 68 : 0; /* jsampled starts a fresh one */
	}
}
