/* SPDX-License-Identifier: GPL-2.0-only */
#include "hotspot_attach.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daemon/service/privileges.h"
#include "procfs.h"
#include "target_root.h"
#include "userspace/common/fd_io.h"

#define LISTENER_WAIT_MS 10000 /* for the JVM to create its socket */
#define REPLY_MAX 4096
/* HotSpot can swallow the trigger's SIGQUIT without starting its listener
 * (an "Attach Listener" thread it could not start resets the state, and
 * prints nothing). OpenJDK's own attach sends SIGQUIT again once half its
 * timeout has passed (sun.tools.attach.VirtualMachineImpl, Linux); we do it
 * sooner and repeatedly, since a listener normally answers in ~100 ms. */
#define RESEND_FIRST_MS 1000
#define RESEND_EVERY_MS 2000
/* The socket is looked for every 10 ms for this long, then every 200 ms:
 * a JVM sampled since its exec holds its samples until its agent comes
 * (a stat a poll; polls growing to 200 ms apart kept JDK 25 JVMs, whose
 * listener comes up 0.1-0.6 s after the exec, waiting 100-200 ms more). */
#define FAST_POLL_MS 2000

static const char *const names[ATTACH_RESULT_COUNT] = {
	[ATTACH_OK] = "ok",
	[ATTACH_GONE] = "process_gone",
	[ATTACH_NOT_READY] = "sigquit_not_handled",
	[ATTACH_CREDENTIALS] = "cannot_take_credentials",
	[ATTACH_NO_TMP] = "no_tmp_dir",
	[ATTACH_TRIGGER] = "cannot_create_trigger",
	[ATTACH_SIGNAL] = "cannot_signal",
	[ATTACH_NO_LISTENER] = "no_attach_listener",
	[ATTACH_CONNECT] = "connect_refused",
	[ATTACH_NOT_THE_JVM] = "listener_not_the_jvm",
	[ATTACH_PROTOCOL] = "bad_reply",
	[ATTACH_LOAD_FAILED] = "load_failed",
	[ATTACH_AGENT_FAILED] = "agent_onattach_failed",
	[ATTACH_TIMEOUT] = "timeout",
	[ATTACH_CRASHED] = "attach_child_crashed",
	[ATTACH_NOT_LIVE] = "not_live_yet",
};

const char *attach_result_name(int r)
{
	return r >= 0 && r < ATTACH_RESULT_COUNT ? names[r] : "unknown";
}

static bool instance_alive(int pidfd)
{
	return pidfd_running(pidfd);
}

enum attach_result attach_target_open(pid_t pid, uint64_t start_time, struct attach_target *t)
{
	t->pid = pid;
	t->tmpfd = -1;
	t->pidfd = pidfd_open(pid, 0);
	/* The pidfd names whatever has the pid now; the start time read after
	 * it (and the liveness checked after that) says it is the instance. */
	if (t->pidfd < 0 || procfs_start_time(pid) != start_time || !instance_alive(t->pidfd)) {
		attach_target_close(t);
		return ATTACH_GONE;
	}
	t->tmpfd = target_tmp_open(pid);
	if (t->tmpfd < 0) {
		attach_target_close(t);
		return ATTACH_NO_TMP;
	}
	return ATTACH_OK;
}

void attach_target_close(struct attach_target *t)
{
	if (t->pidfd >= 0)
		close(t->pidfd);
	if (t->tmpfd >= 0)
		close(t->tmpfd);
	t->pidfd = t->tmpfd = -1;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* Connects to the JVM's <tmp>/.java_pid<nspid>. ATTACH_NO_LISTENER while
 * there is none; ATTACH_NOT_THE_JVM if the name is not a socket of the
 * JVM's user, or the peer is not the JVM. *out is the connected socket. */
static enum attach_result connect_listener(const struct attach_target *t, pid_t nspid, uid_t euid, int *out)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	char name[32];
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct stat st;
	int fd;

	*out = -1;
	snprintf(name, sizeof(name), ".java_pid%d", (int)nspid);
	if (fstatat(t->tmpfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return ATTACH_NO_LISTENER;
	if (!S_ISSOCK(st.st_mode) || st.st_uid != euid)
		return ATTACH_NOT_THE_JVM;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return ATTACH_CONNECT;
	/* Through our descriptor of the JVM's /tmp (a magic link: no path
	 * component inside the target is resolved again). */
	snprintf(a.sun_path, sizeof(a.sun_path), "/proc/self/fd/%d/%s", t->tmpfd, name);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		close(fd);
		return ATTACH_NO_LISTENER;
	}
	/* The name may have been swapped since the check: the peer decides. */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.pid != t->pid || cred.uid != euid) {
		close(fd);
		return ATTACH_NOT_THE_JVM;
	}
	*out = fd;
	return ATTACH_OK;
}

enum attach_result hotspot_parse_reply(const char *buf, size_t len)
{
	char text[REPLY_MAX + 1];
	char *p, *end;
	long status, rc;

	if (len > REPLY_MAX)
		len = REPLY_MAX;
	memcpy(text, buf, len);
	text[len] = 0;
	errno = 0;
	status = strtol(text, &end, 10);
	if (end == text || errno)
		return ATTACH_PROTOCOL;
	if (status != 0)
		return ATTACH_LOAD_FAILED;
	/* Then the agent's return code, a bare "0" (older JDKs) or "return
	 * code: 0"; or a message instead: JDK 25 answers a load before the
	 * live phase with status 0 and "Dynamic agent loading is only
	 * permitted in the live phase" (a start-up attach comes that early). */
	for (p = end; *p == '\n' || *p == '\r' || *p == ' '; p++)
		;
	if (!*p)
		return ATTACH_OK; /* no code: older JVMs report only the status */
	if (strncmp(p, "return code:", 12) == 0)
		p += 12;
	else if (!(*p >= '0' && *p <= '9') && *p != '-')
		return strstr(p, "live phase") ? ATTACH_NOT_LIVE : ATTACH_AGENT_FAILED;
	rc = strtol(p, NULL, 10);
	return rc == 0 ? ATTACH_OK : ATTACH_AGENT_FAILED;
}

size_t hotspot_reply_text(const char *buf, size_t len, char *out, size_t outlen)
{
	const char *p = memchr(buf, '\n', len);
	size_t k = 0;

	/* After the status line; a JVM that sent only a status has no words. */
	p = p ? p + 1 : buf + len;
	for (; p < buf + len && k + 1 < outlen; p++) {
		char c = *p;
		if (c == '\n' || c == '\r') {
			if (k > 0 && out[k - 1] != ' ' && p + 1 < buf + len && k + 3 < outlen) {
				out[k++] = ';';
				out[k++] = ' ';
			}
			continue;
		}
		out[k++] = c >= 0x20 && c < 0x7f ? c : '?';
	}
	while (k > 0 && (out[k - 1] == ' ' || out[k - 1] == ';'))
		k--;
	if (outlen)
		out[k] = 0;
	return k;
}

/* Reads the reply to EOF (at most REPLY_MAX bytes) and interprets it; a
 * refusal's words go to report_fd (the parent shows them in list). */
static enum attach_result read_reply(int fd, int report_fd)
{
	char buf[REPLY_MAX], shown[ATTACH_REPORT_MAX + 1];
	ssize_t n = fd_read_upto(fd, buf, sizeof(buf));
	size_t len = n > 0 ? (size_t)n : 0;
	enum attach_result r = hotspot_parse_reply(buf, len);

	if (r == ATTACH_LOAD_FAILED || r == ATTACH_AGENT_FAILED) {
		size_t k = hotspot_reply_text(buf, len, shown, sizeof(shown));
		fprintf(stderr, "jsampled attach: the JVM refused the load: %s\n", shown);
		if (report_fd >= 0 && k > 0 && write(report_fd, shown, k) < 0)
			fprintf(stderr, "jsampled attach: cannot report: %s\n", strerror(errno));
	}
	return r;
}

/* HotSpot renames its new socket over <tmp>/.java_pid<pid> and accepts only
 * an .attach_pid<pid> trigger of its own user. In a sticky /tmp the JVM
 * cannot replace a name another user owns (left by an earlier process with
 * this pid, maybe root's, or planted), so its listener would never start.
 * Removed here, while the attaching child still has jsampled's privileges:
 * no process of the JVM's user can have made them for this JVM. */
static void clear_foreign_names(const struct attach_target *t, pid_t nspid, uid_t euid)
{
	const char *const names[] = {".java_pid%d", ".attach_pid%d"};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char name[32];
		struct stat st;

		snprintf(name, sizeof(name), names[i], (int)nspid);
		if (fstatat(t->tmpfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_uid != euid &&
		    unlinkat(t->tmpfd, name, 0) == 0)
			fprintf(stderr, "jsampled attach: removed %s of uid %u from the JVM's /tmp (the JVM runs as uid %u)\n",
				name, (unsigned)st.st_uid, (unsigned)euid);
	}
}

enum attach_result hotspot_attach_run(const struct attach_target *t, const char *agent_path, const char *options,
				      int report_fd)
{
	struct proc_status st;
	char trigger[32], req[4096];
	int fd = -1, n;
	bool created = false;
	enum attach_result r;

	if (!instance_alive(t->pidfd) || procfs_status(t->pid, &st) != 0 || !instance_alive(t->pidfd))
		return ATTACH_GONE;
	if (!(st.sig_caught & (1ull << (SIGQUIT - 1))))
		return ATTACH_NOT_READY;
	clear_foreign_names(t, st.nspid, st.euid);
	/* Become the JVM's effective user (it trusts only that, or root), with
	 * no capability left: the rest is plain file and socket work. */
	if (st.egid != getegid() || st.euid != geteuid()) {
		if (setgroups(0, NULL) != 0 && errno != EPERM)
			return ATTACH_CREDENTIALS;
		if (setresgid(st.egid, st.egid, st.egid) != 0 || setresuid(st.euid, st.euid, st.euid) != 0)
			return ATTACH_CREDENTIALS;
	}
	if (privileges_drop_all() != 0)
		return ATTACH_CREDENTIALS;

	r = connect_listener(t, st.nspid, st.euid, &fd); /* a listener from an earlier attach */
	/* A name that is not this JVM's socket (left behind by an earlier
	 * process with this pid, maybe another user's, or planted) is no
	 * reason to give up: HotSpot renames its new socket over it when the
	 * trigger starts its listener, and the peer check decides. */
	if (r == ATTACH_NO_LISTENER || r == ATTACH_NOT_THE_JVM) {
		int tfd;
		snprintf(trigger, sizeof(trigger), ".attach_pid%d", (int)st.nspid);
		/* O_NOFOLLOW: a link planted under the name is not followed;
		 * O_NONBLOCK: nor does a FIFO planted there hold us. */
		tfd = openat(t->tmpfd, trigger, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
		if (tfd < 0)
			return ATTACH_TRIGGER;
		struct stat tst;
		if (fstat(tfd, &tst) != 0 || !S_ISREG(tst.st_mode)) {
			close(tfd);
			return ATTACH_TRIGGER;
		}
		close(tfd);
		created = true;
		if (pidfd_send_signal(t->pidfd, SIGQUIT, NULL, 0) != 0) {
			r = errno == ESRCH ? ATTACH_GONE : ATTACH_SIGNAL;
			goto cleanup;
		}
		r = ATTACH_NO_LISTENER;
		for (unsigned waited = 0, step = 10, resend = RESEND_FIRST_MS;
		     (r == ATTACH_NO_LISTENER || r == ATTACH_NOT_THE_JVM) && waited < LISTENER_WAIT_MS; waited += step) {
			sleep_ms(step);
			step = waited < FAST_POLL_MS ? 10 : 200;
			r = connect_listener(t, st.nspid, st.euid, &fd);
			if (r != ATTACH_OK && !instance_alive(t->pidfd)) {
				r = ATTACH_GONE;
				goto cleanup;
			}
			/* Only after a failed connect: once the listener is up,
			 * a SIGQUIT prints a thread dump on the JVM's stdout. */
			if (r != ATTACH_OK && waited + step >= resend) {
				fprintf(stderr, "jsampled attach: no attach socket from pid %d after %u ms; sending SIGQUIT again\n",
					(int)t->pid, waited + step);
				if (pidfd_send_signal(t->pidfd, SIGQUIT, NULL, 0) != 0) {
					r = errno == ESRCH ? ATTACH_GONE : ATTACH_SIGNAL;
					goto cleanup;
				}
				resend += RESEND_EVERY_MS;
			}
		}
	}
	if (r != ATTACH_OK)
		goto cleanup;
	/* "<protocol>\0<command>\0<arg0>\0<arg1>\0<arg2>\0" */
	n = snprintf(req, sizeof(req), "1%cload%c%s%ctrue%c%s%c", 0, 0, agent_path, 0, 0, options ? options : "", 0);
	if (n <= 0 || (size_t)n >= sizeof(req) || sock_send_all(fd, req, (size_t)n) != 0) {
		r = ATTACH_CONNECT;
		goto cleanup;
	}
	r = read_reply(fd, report_fd);

cleanup:
	if (fd >= 0)
		close(fd);
	if (created)
		unlinkat(t->tmpfd, trigger, 0);
	return r;
}

/* Closes every descriptor but 0-2 and the kept ones (ascending, -1 for none). */
static void close_all_but(const int *keep, size_t n)
{
	unsigned from = 3;

	for (size_t i = 0; i < n; i++) {
		if (keep[i] < (int)from)
			continue;
		if ((unsigned)keep[i] > from)
			close_range(from, (unsigned)keep[i] - 1, 0);
		from = (unsigned)keep[i] + 1;
	}
	close_range(from, ~0u, 0);
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

pid_t hotspot_attach_start(const struct attach_target *t, const char *agent_path, const char *options, int report_fd)
{
	pid_t child = fork();
	sigset_t none;
	int keep[3] = {t->pidfd, t->tmpfd, report_fd};

	if (child != 0)
		return child;
	/* The child: default signal handling, only the descriptors it needs,
	 * no stdio buffers of the parent's to flush twice. */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_IGN);
	qsort(keep, 3, sizeof(keep[0]), cmp_int);
	close_all_but(keep, 3);
	_exit((int)hotspot_attach_run(t, agent_path, options, report_fd));
}

enum attach_result hotspot_attach_result(int ws)
{
	if (WIFEXITED(ws))
		return WEXITSTATUS(ws) < ATTACH_RESULT_COUNT ? (enum attach_result)WEXITSTATUS(ws) : ATTACH_CRASHED;
	return ATTACH_CRASHED;
}
