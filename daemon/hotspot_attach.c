#include "hotspot_attach.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "procfs.h"
#include "../userspace/common/fd_io.h"

#define ATTACH_TIMEOUT_S 20      /* the whole exchange, enforced by alarm() */
#define LISTENER_WAIT_MS 10000   /* for the JVM to create its socket */
#define REPLY_MAX 4096

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
	[ATTACH_PROTOCOL] = "bad_reply",
	[ATTACH_LOAD_FAILED] = "load_failed",
	[ATTACH_AGENT_FAILED] = "agent_onattach_failed",
	[ATTACH_TIMEOUT] = "timeout",
	[ATTACH_CRASHED] = "attach_child_crashed",
};

const char *attach_result_name(int r)
{
	return r >= 0 && r < ATTACH_RESULT_COUNT ? names[r] : "unknown";
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* Connects to <tmp>/.java_pid<nspid> through our fd of the JVM's /tmp (a
 * magic link: no path component inside the target is followed). */
static int connect_listener(int tmpfd, pid_t nspid)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	snprintf(a.sun_path, sizeof(a.sun_path), "/proc/self/fd/%d/.java_pid%d", tmpfd, (int)nspid);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Reads the reply to EOF and interprets it: "<status>\n" then, for load,
 * the agent's return code ("0" in JDK 17, "return code: 0" later). */
static enum attach_result read_reply(int fd)
{
	char buf[REPLY_MAX];
	size_t len = 0;
	char *p, *end;
	long status, rc;

	for (;;) {
		ssize_t n = read(fd, buf + len, sizeof(buf) - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
		if (len == sizeof(buf) - 1)
			break;
	}
	buf[len] = 0;
	status = strtol(buf, &end, 10);
	if (end == buf)
		return ATTACH_PROTOCOL;
	if (status != 0) {
		fprintf(stderr, "jsampled attach: the JVM reported %ld: %.200s\n", status, end);
		return ATTACH_LOAD_FAILED;
	}
	for (p = end; *p && !(*p >= '0' && *p <= '9') && *p != '-'; p++)
		;
	if (!*p)
		return ATTACH_OK; /* no code: older JVMs report only the status */
	rc = strtol(p, NULL, 10);
	return rc == 0 ? ATTACH_OK : ATTACH_AGENT_FAILED;
}

enum attach_result hotspot_attach_run(pid_t pid, const char *agent_path, const char *options)
{
	struct proc_status st;
	char path[64], trigger[32], req[4096];
	int tmpfd, fd, n;
	bool created = false;
	enum attach_result r;

	if (procfs_status(pid, &st) != 0)
		return ATTACH_GONE;
	if (!(st.sig_caught & (1ull << (SIGQUIT - 1))))
		return ATTACH_NOT_READY;
	/* Become the JVM's effective user (it trusts only that, or root). */
	if (st.egid != getegid() || st.euid != geteuid()) {
		if (setgroups(0, NULL) != 0 && errno != EPERM)
			return ATTACH_CREDENTIALS;
		if (setresgid(st.egid, st.egid, st.egid) != 0 || setresuid(st.euid, st.euid, st.euid) != 0)
			return ATTACH_CREDENTIALS;
	}
	snprintf(path, sizeof(path), "/proc/%d/root/tmp", (int)pid);
	tmpfd = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (tmpfd < 0)
		return errno == ENOENT && kill(pid, 0) != 0 ? ATTACH_GONE : ATTACH_NO_TMP;

	fd = connect_listener(tmpfd, st.nspid); /* a listener from an earlier attach */
	if (fd < 0) {
		int tfd;
		snprintf(trigger, sizeof(trigger), ".attach_pid%d", (int)st.nspid);
		tfd = openat(tmpfd, trigger, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (tfd < 0) {
			close(tmpfd);
			return ATTACH_TRIGGER;
		}
		close(tfd);
		created = true;
		if (kill(pid, SIGQUIT) != 0) {
			r = errno == ESRCH ? ATTACH_GONE : ATTACH_SIGNAL;
			goto cleanup;
		}
		for (unsigned waited = 0, step = 20; fd < 0 && waited < LISTENER_WAIT_MS; waited += step) {
			sleep_ms(step);
			step = step < 200 ? step * 2 : 200;
			fd = connect_listener(tmpfd, st.nspid);
			if (fd < 0 && kill(pid, 0) != 0 && errno == ESRCH) {
				r = ATTACH_GONE;
				goto cleanup;
			}
		}
		if (fd < 0) {
			r = ATTACH_NO_LISTENER;
			goto cleanup;
		}
	}
	/* "<protocol>\0<command>\0<arg0>\0<arg1>\0<arg2>\0" */
	n = snprintf(req, sizeof(req), "1%cload%c%s%ctrue%c%s%c", 0, 0, agent_path, 0, 0, options ? options : "", 0);
	if (n <= 0 || (size_t)n >= sizeof(req) || sock_send_all(fd, req, (size_t)n) != 0) {
		r = ATTACH_CONNECT;
		goto cleanup;
	}
	r = read_reply(fd);

cleanup:
	if (fd >= 0)
		close(fd);
	if (created)
		unlinkat(tmpfd, trigger, 0);
	close(tmpfd);
	return r;
}

pid_t hotspot_attach_start(pid_t pid, const char *agent_path, const char *options)
{
	pid_t child = fork();
	sigset_t none;

	if (child != 0)
		return child;
	/* The child: default signal handling, a hard deadline, no stdio
	 * buffers of the parent's to flush twice. */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGALRM, SIG_DFL);
	signal(SIGPIPE, SIG_IGN);
	alarm(ATTACH_TIMEOUT_S);
	_exit((int)hotspot_attach_run(pid, agent_path, options));
}

enum attach_result hotspot_attach_result(int ws)
{
	if (WIFEXITED(ws))
		return WEXITSTATUS(ws) < ATTACH_RESULT_COUNT ? (enum attach_result)WEXITSTATUS(ws) : ATTACH_CRASHED;
	if (WIFSIGNALED(ws) && WTERMSIG(ws) == SIGALRM)
		return ATTACH_TIMEOUT;
	return ATTACH_CRASHED;
}
