/* SPDX-License-Identifier: GPL-2.0-only */
#include "listen_sockets.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "daemon/support/log.h"
#include "privileges.h"

int listen_unix(const char *path, mode_t mode)
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

int open_query_socket(const char *path, const char *group, bool *activated)
{
	char why[256];
	int n = sd_listen_fds(1), fd;

	*activated = false;
	for (int i = 0; i < n; i++) {
		fd = SD_LISTEN_FDS_START + i;
		if (sd_is_socket_unix(fd, SOCK_STREAM, 1, path, 0) > 0) {
			fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
			fcntl(fd, F_SETFD, FD_CLOEXEC);
			*activated = true;
			log_info("query socket %s from systemd", path);
			return fd;
		}
		log_warn("ignoring a socket from systemd that is not %s", path);
	}
	fd = listen_unix(path, 0600);
	if (fd >= 0 && privileges_socket_access(path, group, why, sizeof(why)) != 0)
		log_warn("%s", why);
	return fd;
}

void raise_fd_limit(unsigned long limit)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return;
	rl.rlim_cur = rl.rlim_max < limit ? rl.rlim_max : limit;
	if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
		log_warn("cannot raise the descriptor limit: %s", strerror(errno));
}
