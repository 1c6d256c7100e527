/* SPDX-License-Identifier: GPL-2.0-only */
#include "peer_identity.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "procfs.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77 /* Linux 6.5: a pidfd of the peer as it was at connect */
#endif

static bool alive(const struct peer_identity *id)
{
	return pidfd_running(id->pidfd);
}

int peer_identity_from_socket(int fd, struct peer_identity *id)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int pidfd = -1;

	memset(id, 0, sizeof(*id));
	id->pidfd = -1;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.pid <= 0)
		return -1;
	id->pid = cred.pid;
	id->uid = cred.uid;
	len = sizeof(pidfd);
	/* Older kernels: a pidfd opened now names whatever has the pid now;
	 * the start time read in peer_identity_pin, and the liveness after it,
	 * tie it to the instance (a reuse in between is caught there unless
	 * the connecting process exited within microseconds of connecting). */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) != 0 || pidfd < 0)
		pidfd = pidfd_open(cred.pid, 0);
	if (pidfd < 0)
		return -1;
	id->pidfd = pidfd;
	return 0;
}

static int read_program(pid_t pid, uint64_t *dev, uint64_t *ino)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	if (stat(path, &st) != 0)
		return -1;
	*dev = st.st_dev;
	*ino = st.st_ino;
	return 0;
}

int peer_identity_pin(struct peer_identity *id, char *why, size_t whylen)
{
	struct proc_status st;

	id->start_time = procfs_start_time(id->pid);
	/* Read through /proc, then checked alive: the reads were of the
	 * instance the pidfd holds. */
	if (!id->start_time || read_program(id->pid, &id->exe_dev, &id->exe_ino) != 0 ||
	    procfs_status(id->pid, &st) != 0 || !alive(id)) {
		snprintf(why, whylen, "the process exited");
		return -1;
	}
	if (st.euid != id->uid) {
		snprintf(why, whylen, "the process changed its user since it connected");
		return -1;
	}
	return 0;
}

enum peer_state peer_identity_check(const struct peer_identity *id)
{
	struct proc_status st;
	uint64_t dev, ino;

	/* The pidfd names the instance: while it runs, its pid is its own. */
	if (!alive(id))
		return PEER_EXITED;
	if (read_program(id->pid, &dev, &ino) != 0 || procfs_status(id->pid, &st) != 0)
		return alive(id) ? PEER_CHANGED : PEER_EXITED;
	if (!alive(id))
		return PEER_EXITED;
	if (dev != id->exe_dev || ino != id->exe_ino || st.euid != id->uid)
		return PEER_CHANGED;
	return PEER_SAME;
}

bool peer_identity_running(const struct peer_identity *id)
{
	return alive(id);
}

void peer_identity_close(struct peer_identity *id)
{
	if (id->pidfd >= 0)
		close(id->pidfd);
	id->pidfd = -1;
}
