/* SPDX-License-Identifier: GPL-2.0-only */
#include "native_sources.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "native_protocol.h"
#include "native_unwind.h" /* NATIVE_*_MAX: the limits the helper holds to */
#include "perf_map.h"
#include "userspace/common/maps_line.h"

static bool keeps(const struct maps_line *m)
{
	return m->path && (m->path[0] == '/' || (m->path_len == 6 && memcmp(m->path, "[vdso]", 6) == 0));
}

int native_sources_maps(pid_t pid, char **text, size_t *lenp)
{
	char path[40], *in = NULL, *out = NULL;
	size_t n = 0, cap = 1u << 16, o = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	for (;;) {
		ssize_t r;

		if (!in || n == cap) {
			char *g;

			if (in)
				cap *= 2;
			if (cap > 4 * NATIVE_MAPS_MAX_BYTES || !(g = realloc(in, cap)))
				goto fail;
			in = g;
		}
		r = read(fd, in + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			goto fail;
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	fd = -1;
	if (!(out = malloc(n ? n : 1)))
		goto fail;
	for (size_t at = 0; at < n;) {
		char *nl = memchr(in + at, '\n', n - at);
		size_t ll = nl ? (size_t)(nl - (in + at)) : n - at;
		struct maps_line m;

		if (maps_line_parse(in + at, ll, &m) && keeps(&m)) {
			memcpy(out + o, in + at, ll);
			o += ll;
			out[o++] = '\n';
		}
		at += ll + 1;
	}
	free(in);
	if (o == 0 || o > NATIVE_MAPS_MAX_BYTES) {
		free(out);
		return -1;
	}
	*text = out;
	*lenp = o;
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	free(in);
	free(out);
	return -1;
}

bool native_sources_next_exec(const char *text, size_t len, size_t *pos, struct native_mapped_file *f)
{
	while (*pos < len) {
		const char *line = text + *pos, *nl = memchr(line, '\n', len - *pos);
		size_t ll = nl ? (size_t)(nl - line) : len - *pos;
		struct maps_line m;

		*pos += ll + 1;
		if (!maps_line_parse(line, ll, &m) || m.perms[2] != 'x' || !m.path || m.path[0] != '/' ||
		    m.path_len >= sizeof(f->name) || memchr(m.path, 0, m.path_len))
			continue;
		if (m.path_len > 10 && memcmp(m.path + m.path_len - 10, " (deleted)", 10) == 0)
			continue; /* not the file at that path any more */
		memcpy(f->name, m.path, m.path_len);
		f->name[m.path_len] = 0;
		f->path = f->name;
		f->dev = makedev(m.major, m.minor);
		f->ino = m.ino;
		f->lo = m.lo;
		f->hi = m.hi;
		return true;
	}
	return false;
}

bool native_sources_vdso_range(const char *text, size_t len, uint64_t *lo, uint64_t *hi)
{
	for (size_t at = 0; at < len;) {
		const char *line = text + at, *nl = memchr(line, '\n', len - at);
		size_t ll = nl ? (size_t)(nl - line) : len - at;
		struct maps_line m;

		at += ll + 1;
		if (maps_line_parse(line, ll, &m) && m.path && m.path_len == 6 && memcmp(m.path, "[vdso]", 6) == 0 &&
		    m.lo < m.hi) {
			*lo = m.lo;
			*hi = m.hi;
			return true;
		}
	}
	return false;
}

int native_sources_root(pid_t pid)
{
	char path[40];

	snprintf(path, sizeof(path), "/proc/%d/root", (int)pid);
	return open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

bool native_sources_same_root(pid_t pid)
{
	char path[48];
	struct stat a, b;

	snprintf(path, sizeof(path), "/proc/%d/root/", (int)pid);
	return stat(path, &a) == 0 && stat("/", &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* path inside root_fd as O_PATH; links followed inside the root only if
 * links. */
static int open_path(int root_fd, const char *path, bool links)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC | (links ? 0 : O_NOFOLLOW),
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | (links ? 0 : RESOLVE_NO_SYMLINKS),
	};

	if (root_fd < 0 || path[0] != '/')
		return -1;
	return (int)syscall(SYS_openat2, root_fd, path, &how, sizeof(how));
}

/* An O_PATH descriptor of a regular file reopened for reading (closed). */
static int reopen(int pfd, struct stat *st, enum native_source_refusal *why)
{
	char self[40];
	int fd;

	if (pfd < 0) {
		*why = NATIVE_SOURCE_MISSING;
		return -1;
	}
	if (fstat(pfd, st) != 0 || !S_ISREG(st->st_mode)) {
		*why = NATIVE_SOURCE_NOT_REGULAR;
		close(pfd);
		return -1;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	close(pfd);
	*why = fd >= 0 ? NATIVE_SOURCE_OK : NATIVE_SOURCE_MISSING;
	return fd;
}

int native_sources_open_mapped(int root_fd, const struct native_mapped_file *f, enum native_source_refusal *why)
{
	struct stat st;
	int fd = reopen(open_path(root_fd, f->path, false), &st, why);

	if (fd < 0)
		return -1;
	if ((uint64_t)st.st_dev != f->dev || (uint64_t)st.st_ino != f->ino) {
		*why = NATIVE_SOURCE_NOT_MAPPED;
		close(fd);
		return -1;
	}
	if ((uint64_t)st.st_size > NATIVE_FILE_MAX_BYTES) {
		*why = NATIVE_SOURCE_TOO_LARGE;
		close(fd);
		return -1;
	}
	return fd;
}

int native_sources_open_perf_map(int root_fd, pid_t ns_pid, uid_t uid, off_t *size, int64_t *mtime_ns,
				 enum native_source_refusal *why)
{
	char path[48];
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)ns_pid);
	fd = reopen(open_path(root_fd, path, false), &st, why);
	if (fd < 0)
		return -1;
	/* As perf itself wants it: the process's own file, not another's
	 * planted (or hard-linked) under its name. */
	if (st.st_uid != uid || st.st_nlink != 1) {
		*why = NATIVE_SOURCE_NOT_OWNED;
		close(fd);
		return -1;
	}
	if ((uint64_t)st.st_size > PERF_MAP_MAX_BYTES) {
		*why = NATIVE_SOURCE_TOO_LARGE;
		close(fd);
		return -1;
	}
	*size = st.st_size;
	*mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	return fd;
}

/* A debug file at path inside root_fd (links inside it allowed), at most
 * NATIVE_FILE_MAX_BYTES: a descriptor, or -1. */
static int open_debug_in(int root_fd, const char *path)
{
	enum native_source_refusal why;
	struct stat st;
	int fd = reopen(open_path(root_fd, path, true), &st, &why);

	if (fd >= 0 && (uint64_t)st.st_size > NATIVE_FILE_MAX_BYTES) {
		close(fd);
		fd = -1;
	}
	return fd;
}

void native_sources_open_debug(int root_fd, bool same_root, const unsigned char *id, unsigned n, int fds[2])
{
	char path[64 + 2 * NATIVE_BUILD_ID_MAX];
	int off, host;

	fds[0] = fds[1] = -1;
	if (n < 3 || n > NATIVE_BUILD_ID_MAX)
		return;
	off = snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%02x/", id[0]);
	for (unsigned i = 1; i < n; i++)
		off += snprintf(path + off, sizeof(path) - (size_t)off, "%02x", id[i]);
	snprintf(path + off, sizeof(path) - (size_t)off, ".debug");
	fds[0] = open_debug_in(root_fd, path);
	if (same_root || (host = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return;
	fds[1] = open_debug_in(host, path);
	close(host);
}

ssize_t native_sources_vdso(pid_t pid, uint64_t lo, uint64_t hi, void *buf, size_t cap)
{
	char path[40];
	ssize_t got;
	int fd;

	if (hi <= lo || hi - lo > cap)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	got = pread(fd, buf, hi - lo, (off_t)lo);
	close(fd);
	return got == (ssize_t)(hi - lo) ? got : -1;
}
