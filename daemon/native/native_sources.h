/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What jsampled gives the native helper of a profiled process, read and
 * opened here but never parsed: the lines of /proc/PID/maps that name a
 * file or the vDSO (kernel text), the vDSO's bytes, and descriptors of the
 * files the helper parses.
 *
 * Every file is opened inside the process's root (/proc/PID/root, with
 * openat2 RESOLVE_IN_ROOT, so a container's absolute links stay in it),
 * as O_PATH first: only a regular file is then opened for reading (no
 * FIFO or device is ever opened). A mapped file is opened without
 * following any symbolic link (RESOLVE_NO_SYMLINKS: the maps show its real
 * path) and used only if it is the very file mapped (device and inode as
 * the maps show them). A perf map must also belong to the process's user,
 * have one link, and stay under PERF_MAP_MAX_BYTES. Debug files are looked
 * for by build ID only (links inside the root allowed, as distributions
 * ship them).
 */
#ifndef JSAMPLED_NATIVE_SOURCES_H
#define JSAMPLED_NATIVE_SOURCES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The lines of pid's maps that name a file (a path) or the vDSO, into a
 * new buffer (*text, *len; the caller frees it). 0, or -1 (gone, or more
 * than NATIVE_MAPS_MAX_BYTES of such lines). */
int native_sources_maps(pid_t pid, char **text, size_t *len);

/* One executable file mapping of a maps text. */
struct native_mapped_file {
	const char *path; /* into the text, NUL-terminated copy in name */
	char name[4096];
	uint64_t dev, ino;
	uint64_t lo, hi;
};
/* The next executable mapping of a file after *pos in text (start with
 * *pos = 0): true and f filled in, or false at the end. */
bool native_sources_next_exec(const char *text, size_t len, size_t *pos, struct native_mapped_file *f);
/* The range of the [vdso] line, false if none. */
bool native_sources_vdso_range(const char *text, size_t len, uint64_t *lo, uint64_t *hi);

/* Why a file was not given to the helper. */
enum native_source_refusal {
	NATIVE_SOURCE_OK = 0,
	NATIVE_SOURCE_MISSING,   /* not there, or not reachable without links */
	NATIVE_SOURCE_NOT_REGULAR,
	NATIVE_SOURCE_NOT_MAPPED, /* another file than the one mapped */
	NATIVE_SOURCE_TOO_LARGE,
	NATIVE_SOURCE_NOT_OWNED,  /* a perf map of another user, or with several links */
};

/* pid's root, to open its files in (O_PATH), or -1. */
int native_sources_root(pid_t pid);
/* The mapped file f of the process whose root is root_fd: a read-only
 * descriptor, or -1 with why. */
int native_sources_open_mapped(int root_fd, const struct native_mapped_file *f, enum native_source_refusal *why);
/* Its /tmp/perf-NSPID.map if it belongs to uid: a descriptor, or -1 with
 * why; *size and *mtime_ns say which version it is. */
int native_sources_open_perf_map(int root_fd, pid_t ns_pid, uid_t uid, off_t *size, int64_t *mtime_ns,
				 enum native_source_refusal *why);
/* The debug file of a build ID (n bytes): fds[0] inside root_fd, fds[1]
 * on this machine (unless the roots are one); -1 each where none is. */
void native_sources_open_debug(int root_fd, bool same_root, const unsigned char *id, unsigned n, int fds[2]);
/* Whether pid's root is ours. */
bool native_sources_same_root(pid_t pid);

/* The vDSO's image [lo, hi) from pid's memory, into buf (cap bytes).
 * Its length, or -1. */
ssize_t native_sources_vdso(pid_t pid, uint64_t lo, uint64_t hi, void *buf, size_t cap);

#endif
