/* SPDX-License-Identifier: GPL-2.0-only */
#include "procfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include "userspace/common/fd_io.h"
#include "userspace/profile/safe_text.h"

ssize_t procfs_read(pid_t pid, const char *name, char *buf, size_t cap)
{
	char path[64];
	ssize_t len;
	int fd;

	if (cap == 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	len = fd_read_upto(fd, buf, cap - 1);
	close(fd);
	buf[len > 0 ? len : 0] = 0;
	return len;
}

int procfs_parse_status(char *buf, pid_t pid, struct proc_status *st)
{
	char *line, *save = NULL;
	int have = 0;

	memset(st, 0, sizeof(*st));
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long a, b;
		if (sscanf(line, "Uid: %lu %lu", &a, &b) == 2) {
			st->euid = (uid_t)b;
			have |= 1;
		} else if (sscanf(line, "Gid: %lu %lu", &a, &b) == 2) {
			st->egid = (gid_t)b;
			have |= 2;
		} else if (strncmp(line, "NSpid:", 6) == 0) {
			/* "NSpid: host ... innermost": the last is the process's own view. */
			char *last = strrchr(line, '\t');
			last = last ? last : strrchr(line, ' ');
			if (last)
				st->nspid = (pid_t)strtol(last + 1, NULL, 10);
			have |= 4;
		} else if (sscanf(line, "PPid: %lu", &a) == 1) {
			st->ppid = (pid_t)a;
		} else if (strncmp(line, "SigCgt:", 7) == 0) {
			st->sig_caught = strtoull(line + 7, NULL, 16);
			have |= 8;
		}
	}
	if (!(have & 4))
		st->nspid = pid; /* kernels without NSpid: no pid namespaces */
	return (have & 11) == 11 ? 0 : -1;
}

int procfs_status(pid_t pid, struct proc_status *st)
{
	char buf[4096];

	memset(st, 0, sizeof(*st));
	if (procfs_read(pid, "status", buf, sizeof(buf)) <= 0)
		return -1;
	return procfs_parse_status(buf, pid, st);
}

uint64_t procfs_start_time(pid_t pid)
{
	char buf[1024];

	if (procfs_read(pid, "stat", buf, sizeof(buf)) <= 0)
		return 0;
	return procfs_parse_start_time(buf);
}

/* Field n (n >= 3) of a /proc/<pid>/stat line as a number, 0 if absent. */
static uint64_t stat_field(const char *buf, int n)
{
	const char *p;
	int field = 2;

	/* comm (field 2) may hold spaces and parentheses: skip to its last ')'. */
	p = strrchr(buf, ')');
	if (!p)
		return 0;
	p++;
	while (*p && field < n) {
		while (*p == ' ')
			p++;
		field++;
		if (field == n)
			return strtoull(p, NULL, 10);
		while (*p && *p != ' ')
			p++;
	}
	return 0;
}

uint64_t procfs_parse_start_time(const char *buf)
{
	return stat_field(buf, 22);
}

uint64_t procfs_cpu_ns(pid_t pid, uint64_t start_time)
{
	char buf[1024];
	long hz = sysconf(_SC_CLK_TCK);

	if (hz <= 0 || procfs_read(pid, "stat", buf, sizeof(buf)) <= 0 || stat_field(buf, 22) != start_time)
		return 0;
	/* utime (14) + stime (15), in clock ticks. */
	return (stat_field(buf, 14) + stat_field(buf, 15)) * (1000000000ull / (uint64_t)hz);
}

bool procfs_maps_line_has(char *line, const char *suffix)
{
	size_t sl = strlen(suffix), n = strlen(line);

	while (n && (line[n - 1] == '\n' || line[n - 1] == ' '))
		line[--n] = 0;
	/* " (deleted)": an upgraded package's old file is still that library. */
	if (n > 10 && strcmp(line + n - 10, " (deleted)") == 0)
		line[n -= 10] = 0;
	return n >= sl && memcmp(line + n - sl, suffix, sl) == 0;
}

int procfs_maps_has(pid_t pid, const char *suffix)
{
	char path[64], line[4096];
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (!found && fgets(line, sizeof(line), f))
		found = procfs_maps_line_has(line, suffix);
	fclose(f);
	return found;
}

int procfs_exe(pid_t pid, char *out, size_t cap)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, out, cap - 1);
	if (n < 0)
		return -1;
	out[n] = 0;
	return 0;
}

int procfs_cgroup(pid_t pid, char *out, size_t cap)
{
	char buf[4096];

	if (procfs_read(pid, "cgroup", buf, sizeof(buf)) <= 0)
		return -1;
	return procfs_parse_cgroup(buf, out, cap);
}

int procfs_parse_cgroup(char *buf, char *out, size_t cap)
{
	char *line, *save = NULL;

	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (strncmp(line, "0::", 3) == 0) {
			snprintf(out, cap, "%s", line + 3);
			return 0;
		}
	return -1;
}

/* Whether the whitespace-separated list holds arg. */
static bool words_hold(const char *list, const char *arg)
{
	size_t al = strlen(arg);

	for (const char *p = list; *p;) {
		size_t n;
		while (*p == ' ' || *p == '\t')
			p++;
		n = strcspn(p, " \t");
		if (n == al && memcmp(p, arg, al) == 0)
			return true;
		p += n;
	}
	return false;
}

bool procfs_args_hold(const char *buf, size_t n, const char *arg)
{
	for (size_t i = 0; i < n; i += strnlen(buf + i, n - i) + 1)
		if (strnlen(buf + i, n - i) == strlen(arg) && memcmp(buf + i, arg, strlen(arg)) == 0)
			return true;
	return false;
}

bool procfs_env_options_hold(const char *buf, size_t n, const char *arg)
{
	static const char *const vars[] = {"JAVA_TOOL_OPTIONS=", "JDK_JAVA_OPTIONS=", "_JAVA_OPTIONS="};

	/* buf is NUL-terminated at n (procfs_read), so each entry is too. */
	for (size_t i = 0; i < n; i += strnlen(buf + i, n - i) + 1)
		for (size_t v = 0; v < sizeof(vars) / sizeof(vars[0]); v++)
			if (strncmp(buf + i, vars[v], strlen(vars[v])) == 0 && words_hold(buf + i + strlen(vars[v]), arg))
				return true;
	return false;
}

bool procfs_java_option(pid_t pid, const char *arg)
{
	static char buf[256 * 1024]; /* one thread: not on the stack */
	ssize_t n = procfs_read(pid, "cmdline", buf, sizeof(buf));

	if (n > 0 && procfs_args_hold(buf, (size_t)n, arg))
		return true;
	n = procfs_read(pid, "environ", buf, sizeof(buf));
	return n > 0 && procfs_env_options_hold(buf, (size_t)n, arg);
}

uint64_t procfs_ns_inode(pid_t pid, const char *ns)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)pid, ns);
	return stat(path, &st) == 0 ? (uint64_t)st.st_ino : 0;
}

bool procfs_task_of(pid_t pid, uint32_t tid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/task/%u", (int)pid, tid);
	return tid && stat(path, &st) == 0;
}

bool pidfd_running(int pidfd)
{
	struct pollfd p = {.fd = pidfd, .events = POLLIN};

	return pidfd >= 0 && poll(&p, 1, 0) == 0;
}

void procfs_comm(pid_t pid, char *out, size_t cap)
{
	char buf[64] = "";

	if (procfs_read(pid, "comm", buf, sizeof(buf)) < 0)
		buf[0] = 0;
	buf[strcspn(buf, "\n")] = 0;
	safe_text(out, cap, buf, strlen(buf)); /* the process chose it */
}
