/* SPDX-License-Identifier: GPL-2.0-only */
#include "target_root.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "procfs.h"
#include "userspace/common/fd_io.h"

#define AGENT_MAX_BYTES (64u << 20)

/* Who the files jsampled makes in a JVM's root belong to. In the JVM's own
 * user namespace when that is ours (uid 0, as on the host); in another one
 * (rootless podman or docker, user-namespaced pods) our uid 0 is mapped to
 * nothing there, and the filesystems that namespace mounted refuse to
 * create a file of an unmapped owner (EOVERFLOW). There they are made as
 * the JVM's own user (its effective uid and gid, as the host sees them),
 * by switching the filesystem ids for the while (setfsuid: CAP_SETUID,
 * which the daemon keeps for attaching). */
struct owner {
	uid_t uid;
	gid_t gid;
	bool switched;
};

/* Back to our own filesystem ids, if owner_begin switched them. */
static void owner_end(struct owner *o)
{
	int e = errno;

	if (!o->switched)
		return;
	setfsuid(geteuid());
	setfsgid(getegid());
	o->switched = false;
	errno = e;
}

static void owner_begin(pid_t pid, struct owner *o)
{
	struct proc_status st;
	uint64_t theirs = procfs_ns_inode(pid, "user"), ours = procfs_ns_inode(getpid(), "user");

	o->uid = geteuid();
	o->gid = getegid();
	o->switched = false;
	if (!theirs || !ours || theirs == ours || procfs_status(pid, &st) != 0)
		return;
	o->uid = st.euid;
	o->gid = st.egid;
	/* setfsuid answers the previous id whatever happens: check it took. */
	setfsgid(o->gid);
	setfsuid(o->uid);
	o->switched = true;
	if ((uid_t)setfsuid((uid_t)-1) != o->uid || (gid_t)setfsgid((gid_t)-1) != o->gid) {
		owner_end(o); /* as ourselves then: the namespace's refusal says why */
		o->uid = geteuid();
		o->gid = getegid();
	}
}


int openat_confined(int dirfd, const char *name, int flags, bool in_root)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC),
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | (in_root ? RESOLVE_IN_ROOT : RESOLVE_BENEATH),
	};

	if (flags & O_CREAT)
		how.mode = 0600;
	return (int)syscall(SYS_openat2, dirfd, name, &how, sizeof(how));
}

int target_tmp_open(pid_t pid)
{
	char path[64];
	int root, tmp, e;

	snprintf(path, sizeof(path), "/proc/%d/root", (int)pid);
	root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return -1;
	tmp = openat_confined(root, "tmp", O_PATH | O_DIRECTORY, true);
	e = errno;
	close(root);
	errno = e;
	return tmp;
}

bool target_sees_same(pid_t pid, const char *path)
{
	char there[512];
	struct stat a, b;

	if (path[0] != '/' || snprintf(there, sizeof(there), "/proc/%d/root%s", (int)pid, path) >= (int)sizeof(there))
		return false;
	return stat(path, &a) == 0 && stat(there, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* <root>/tmp/.jsampled, created if needed, and only if it is a directory of
 * ours (o's) that nobody else may write. */
static int open_our_dir(pid_t pid, const struct owner *o, char *why, size_t whylen)
{
	struct stat st;
	int tmp, dir;

	tmp = target_tmp_open(pid);
	if (tmp < 0) {
		snprintf(why, whylen, "no usable /tmp in the JVM's root: %s", strerror(errno));
		return -1;
	}
	/* mkdirat never follows a link in the last component. */
	if (mkdirat(tmp, ".jsampled", 0755) != 0 && errno != EEXIST) {
		snprintf(why, whylen, "cannot create %s in the JVM's root: %s", TARGET_DIR, strerror(errno));
		close(tmp);
		return -1;
	}
	dir = openat_confined(tmp, ".jsampled", O_RDONLY | O_DIRECTORY | O_NOFOLLOW, false);
	close(tmp);
	if (dir < 0 || fstat(dir, &st) != 0 || st.st_uid != o->uid || (st.st_mode & 022)) {
		snprintf(why, whylen, "%s in the JVM's root is not a directory of jsampled's alone", TARGET_DIR);
		if (dir >= 0)
			close(dir);
		return -1;
	}
	return dir;
}

/* Reads a whole file of at most AGENT_MAX_BYTES; NULL on failure. */
static uint8_t *read_all(int fd, size_t size)
{
	uint8_t *buf;

	if (size > AGENT_MAX_BYTES || !(buf = malloc(size ? size : 1)))
		return NULL;
	if (fd_read_upto(fd, buf, size) != (ssize_t)size) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Whether dir/name is a reusable copy of the agent (see target_agent_path). */
static bool copy_is_ours(int dir, const struct owner *o, const char *name, const uint8_t *agent, size_t size)
{
	struct stat st;
	uint8_t *there;
	bool same;
	int fd = openat_confined(dir, name, O_RDONLY | O_NOFOLLOW, false);

	if (fd < 0)
		return false;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != o->uid || st.st_nlink != 1 ||
	    (st.st_mode & 022) || (size_t)st.st_size != size) {
		close(fd);
		return false;
	}
	there = read_all(fd, size);
	close(fd);
	same = there && memcmp(there, agent, size) == 0;
	free(there);
	return same;
}

/* Writes the agent to dir/name: a new file (O_EXCL never follows a link)
 * renamed over whatever had the name. */
static int write_copy(int dir, const char *name, const uint8_t *agent, size_t size)
{
	char tmp[128];
	int out, r = 0;

	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", name, (int)getpid());
	unlinkat(dir, tmp, 0);
	out = openat_confined(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, false);
	if (out < 0)
		return -1;
	for (size_t off = 0; off < size && r == 0;) {
		ssize_t k = write(out, agent + off, size - off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			r = -1;
		else
			off += (size_t)k;
	}
	if (fchmod(out, 0644) != 0 || close(out) != 0)
		r = -1;
	if (r == 0 && renameat(dir, tmp, dir, name) != 0)
		r = -1;
	if (r != 0)
		unlinkat(dir, tmp, 0);
	return r;
}

int target_agent_path(pid_t pid, const char *agent_path, char *out, size_t outlen, char *why, size_t whylen)
{
	char name[96];
	struct stat src_st;
	struct statvfs vfs;
	uint8_t *agent = NULL;
	int src, dir = -1, r = -1;
	struct owner o = {0};

	if (target_sees_same(pid, agent_path)) {
		snprintf(out, outlen, "%s", agent_path);
		return 0;
	}
	src = open(agent_path, O_RDONLY | O_CLOEXEC);
	if (src < 0 || fstat(src, &src_st) != 0 || !(agent = read_all(src, (size_t)src_st.st_size))) {
		snprintf(why, whylen, "cannot read the agent %s: %s", agent_path, strerror(errno ? errno : EIO));
		goto out;
	}
	owner_begin(pid, &o);
	dir = open_our_dir(pid, &o, why, whylen);
	if (dir < 0)
		goto out;
	if (fstatvfs(dir, &vfs) == 0 && (vfs.f_flag & ST_NOEXEC)) {
		snprintf(why, whylen, "the JVM's /tmp is mounted noexec: it could not load a copy of the agent");
		goto out;
	}
	/* Named by content identity, so an upgrade writes a new file and a
	 * JVM that loaded the old one keeps it. */
	snprintf(name, sizeof(name), "libjsagent-%llx-%llx.so", (unsigned long long)src_st.st_size,
		 (unsigned long long)src_st.st_mtime);
	if (!copy_is_ours(dir, &o, name, agent, (size_t)src_st.st_size) &&
	    write_copy(dir, name, agent, (size_t)src_st.st_size) != 0) {
		snprintf(why, whylen, "cannot copy the agent into the JVM's root: %s", strerror(errno));
		goto out;
	}
	snprintf(out, outlen, "%s/%s", TARGET_DIR, name);
	r = 0;
out:
	owner_end(&o);
	free(agent);
	if (src >= 0)
		close(src);
	if (dir >= 0)
		close(dir);
	return r;
}

int target_listen(pid_t pid, struct target_socket *ts, char *why, size_t whylen)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	struct stat st;
	struct owner o;
	int dir, fd;
	mode_t old;

	ts->fd = -1;
	owner_begin(pid, &o);
	dir = open_our_dir(pid, &o, why, whylen);
	if (dir < 0) {
		owner_end(&o);
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	/* Through our descriptor of the checked directory: no name inside the
	 * container is resolved again. bind makes a new file and fails if the
	 * name exists (even as a link); the umask gives it mode 0666 at once. */
	snprintf(a.sun_path, sizeof(a.sun_path), "/proc/self/fd/%d/%s", dir, TARGET_SOCKET_NAME);
	unlinkat(dir, TARGET_SOCKET_NAME, 0);
	old = umask(0111);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		umask(old);
		goto fail;
	}
	umask(old);
	if (fstatat(dir, TARGET_SOCKET_NAME, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISSOCK(st.st_mode) ||
	    listen(fd, 64) != 0)
		goto fail;
	ts->fd = fd;
	ts->dev = st.st_dev;
	ts->ino = st.st_ino;
	close(dir);
	owner_end(&o);
	return 0;
fail:
	snprintf(why, whylen, "cannot listen in the JVM's root: %s", strerror(errno));
	if (fd >= 0)
		close(fd);
	close(dir);
	owner_end(&o);
	return -1;
}

/* Runs f on the socket's directory in pid's root if the socket there is
 * still the one ts made. */
static bool with_our_socket(pid_t pid, const struct target_socket *ts, bool unlink_it)
{
	char why[128];
	struct stat st;
	struct owner o;
	bool same;
	int dir;

	owner_begin(pid, &o);
	dir = open_our_dir(pid, &o, why, sizeof(why));
	if (dir < 0) {
		owner_end(&o);
		return false;
	}
	same = fstatat(dir, TARGET_SOCKET_NAME, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISSOCK(st.st_mode) &&
	       st.st_dev == ts->dev && st.st_ino == ts->ino;
	if (same && unlink_it)
		unlinkat(dir, TARGET_SOCKET_NAME, 0);
	close(dir);
	owner_end(&o);
	return same;
}

bool target_socket_present(pid_t pid, const struct target_socket *ts)
{
	return with_our_socket(pid, ts, false);
}

void target_socket_unlink(pid_t pid, const struct target_socket *ts)
{
	with_our_socket(pid, ts, true);
}
