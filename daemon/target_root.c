#include "target_root.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/un.h>
#include <unistd.h>

bool target_sees_same(pid_t pid, const char *path)
{
	char there[512];
	struct stat a, b;

	if (path[0] != '/' || snprintf(there, sizeof(there), "/proc/%d/root%s", (int)pid, path) >= (int)sizeof(there))
		return false;
	return stat(path, &a) == 0 && stat(there, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* <root>/tmp/.jsampled, created if needed, and only if it is a real
 * directory of ours that nobody else may write. */
static int open_our_dir(pid_t pid, char *why, size_t whylen)
{
	char path[64];
	struct stat st;
	int tmp, dir;

	snprintf(path, sizeof(path), "/proc/%d/root/tmp", (int)pid);
	tmp = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (tmp < 0) {
		snprintf(why, whylen, "no usable /tmp in the JVM's root: %s", strerror(errno));
		return -1;
	}
	if (mkdirat(tmp, ".jsampled", 0755) != 0 && errno != EEXIST) {
		snprintf(why, whylen, "cannot create %s in the JVM's root: %s", TARGET_DIR, strerror(errno));
		close(tmp);
		return -1;
	}
	dir = openat(tmp, ".jsampled", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	close(tmp);
	if (dir < 0 || fstat(dir, &st) != 0 || st.st_uid != geteuid() || (st.st_mode & 022)) {
		snprintf(why, whylen, "%s in the JVM's root is not a directory of jsampled's alone", TARGET_DIR);
		if (dir >= 0)
			close(dir);
		return -1;
	}
	return dir;
}

static int copy_file(int src, int dstdir, const char *name)
{
	char buf[65536], tmp[128];
	int out, r = 0;

	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", name, (int)getpid());
	unlinkat(dstdir, tmp, 0);
	out = openat(dstdir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (out < 0)
		return -1;
	for (;;) {
		ssize_t n = read(src, buf, sizeof(buf)), w = 0;
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = (int)n;
			break;
		}
		while (w < n) {
			ssize_t k = write(out, buf + w, (size_t)(n - w));
			if (k <= 0) {
				r = -1;
				break;
			}
			w += k;
		}
		if (r)
			break;
	}
	if (fchmod(out, 0644) != 0)
		r = -1;
	if (close(out) != 0)
		r = -1;
	if (r == 0 && renameat(dstdir, tmp, dstdir, name) != 0)
		r = -1;
	if (r != 0)
		unlinkat(dstdir, tmp, 0);
	return r;
}

int target_agent_path(pid_t pid, const char *agent_path, char *out, size_t outlen, char *why, size_t whylen)
{
	char name[96];
	struct stat src_st, dst_st;
	struct statvfs vfs;
	int src, dir;

	if (target_sees_same(pid, agent_path)) {
		snprintf(out, outlen, "%s", agent_path);
		return 0;
	}
	src = open(agent_path, O_RDONLY | O_CLOEXEC);
	if (src < 0 || fstat(src, &src_st) != 0) {
		snprintf(why, whylen, "cannot read the agent %s: %s", agent_path, strerror(errno));
		if (src >= 0)
			close(src);
		return -1;
	}
	dir = open_our_dir(pid, why, whylen);
	if (dir < 0) {
		close(src);
		return -1;
	}
	if (fstatvfs(dir, &vfs) == 0 && (vfs.f_flag & ST_NOEXEC)) {
		snprintf(why, whylen, "the JVM's /tmp is mounted noexec: it could not load a copy of the agent");
		close(src);
		close(dir);
		return -1;
	}
	/* Named by content identity, so an upgrade writes a new file and a
	 * JVM that loaded the old one keeps it. */
	snprintf(name, sizeof(name), "libjsagent-%llx-%llx.so", (unsigned long long)src_st.st_size,
		 (unsigned long long)src_st.st_mtime);
	if (fstatat(dir, name, &dst_st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(dst_st.st_mode) ||
	    dst_st.st_size != src_st.st_size) {
		if (copy_file(src, dir, name) != 0) {
			snprintf(why, whylen, "cannot copy the agent into the JVM's root: %s", strerror(errno));
			close(src);
			close(dir);
			return -1;
		}
	}
	close(src);
	close(dir);
	snprintf(out, outlen, "%s/%s", TARGET_DIR, name);
	return 0;
}

int target_listen(pid_t pid, char *why, size_t whylen)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int dir = open_our_dir(pid, why, whylen), fd;

	if (dir < 0)
		return -1;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	/* Through our descriptor of the checked directory: no name inside the
	 * container is resolved again. */
	snprintf(a.sun_path, sizeof(a.sun_path), "/proc/self/fd/%d/agent.sock", dir);
	unlinkat(dir, "agent.sock", 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    fchmodat(dir, "agent.sock", 0666, 0) != 0 || listen(fd, 64) != 0) {
		snprintf(why, whylen, "cannot listen in the JVM's root: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		close(dir);
		return -1;
	}
	close(dir);
	return fd;
}
