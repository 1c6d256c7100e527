/* SPDX-License-Identifier: GPL-2.0-only */
#include "process_access.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "userspace/common/fd_io.h"
#include "daemon/jvm/procfs.h"

int proc_creds_parse_status(const char *status, struct proc_creds *c)
{
	const char *line = status;
	int have = 0;

	while (line && *line) {
		unsigned long u[4];
		unsigned long long caps;

		if (sscanf(line, "Uid: %lu %lu %lu %lu", &u[0], &u[1], &u[2], &u[3]) == 4) {
			for (int i = 0; i < 4; i++)
				c->uid[i] = (uid_t)u[i];
			have |= 1;
		} else if (sscanf(line, "Gid: %lu %lu %lu %lu", &u[0], &u[1], &u[2], &u[3]) == 4) {
			for (int i = 0; i < 4; i++)
				c->gid[i] = (gid_t)u[i];
			have |= 2;
		} else if (sscanf(line, "CapPrm: %llx", &caps) == 1) {
			c->cap_prm = caps;
			have |= 4;
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return have == 7 ? 0 : -1;
}

int proc_creds_read(pid_t pid, struct proc_creds *c)
{
	char buf[4096], path[64];
	struct stat st, exe;
	ssize_t len;
	int fd;

	memset(c, 0, sizeof(*c));
	if (pid <= 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	/* The files of a process that is not dumpable belong to root (the
	 * directory itself may still show the old owner). */
	len = fstat(fd, &st) == 0 ? fd_read_upto(fd, buf, sizeof(buf) - 1) : -1;
	close(fd);
	if (len <= 0)
		return -1;
	buf[len] = 0;
	if (proc_creds_parse_status(buf, c) != 0)
		return -1;
	c->dumpable = st.st_uid == c->uid[1];
	c->userns = procfs_ns_inode(pid, "user");
	c->start_time = procfs_start_time(pid);
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	if (stat(path, &exe) == 0) {
		c->exe_dev = exe.st_dev;
		c->exe_ino = exe.st_ino;
	}
	return c->start_time ? 0 : -1;
}

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77 /* Linux 6.5 */
#endif

int proc_creds_of_peer(int sockfd, struct proc_creds *c)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int pidfd = -1, r;

	if (getsockopt(sockfd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.pid <= 0)
		return -1;
	len = sizeof(pidfd);
	if (getsockopt(sockfd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) != 0 || pidfd < 0)
		pidfd = pidfd_open(cred.pid, 0);
	if (pidfd < 0)
		return -1;
	/* Running after the reads: the pid named that process all along. */
	r = pidfd_running(pidfd) && proc_creds_read(cred.pid, c) == 0 && pidfd_running(pidfd) ? 0 : -1;
	close(pidfd);
	return r;
}

static bool fail(char *why, size_t whylen, const char *what)
{
	snprintf(why, whylen, "%s", what);
	return false;
}

bool proc_may_read(const struct proc_creds *r, const struct proc_creds *t, char *why, size_t whylen)
{
	if (r->uid[1] == 0)
		return true;
	for (int i = 0; i < 3; i++)
		if (t->uid[i] != r->uid[3])
			return fail(why, whylen, "its real, effective and saved uids are not all yours");
	for (int i = 0; i < 3; i++)
		if (t->gid[i] != r->gid[3])
			return fail(why, whylen, "its real, effective and saved gids are not all yours (setgid?)");
	if (!t->dumpable)
		return fail(why, whylen, "it is not dumpable");
	if (!t->userns || t->userns != r->userns)
		return fail(why, whylen, "it is in another user namespace");
	if (t->cap_prm & ~r->cap_prm)
		return fail(why, whylen, "it holds capabilities you do not");
	return true;
}

bool proc_owner_may_read(const struct proc_creds *t)
{
	struct proc_creds owner = *t;
	char why[96];

	for (int i = 0; i < 4; i++) {
		owner.uid[i] = t->uid[1];
		owner.gid[i] = t->gid[1];
	}
	if (t->uid[1] == 0)
		owner.uid[1] = 1; /* judged as any user would be, not waved through as root */
	return proc_may_read(&owner, t, why, sizeof(why));
}

bool proc_creds_unchanged(pid_t pid, const struct proc_creds *creds)
{
	struct proc_creds now;

	if (proc_creds_read(pid, &now) != 0)
		return false;
	return now.start_time == creds->start_time && now.exe_dev == creds->exe_dev && now.exe_ino == creds->exe_ino &&
	       memcmp(now.uid, creds->uid, sizeof(now.uid)) == 0 && memcmp(now.gid, creds->gid, sizeof(now.gid)) == 0 &&
	       now.cap_prm == creds->cap_prm && now.dumpable == creds->dumpable;
}
