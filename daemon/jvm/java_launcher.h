/* SPDX-License-Identifier: GPL-2.0-only */
/* Whether a process's program is a Java launcher (java, javac, jshell, a
 * jpackage launcher...): an ELF executable that links libjli.so or
 * libjvm.so. Read through /proc/PID/exe, so it works for programs in
 * containers too. Any user's exec makes jsampled ask, so the answer comes
 * from a fixed number of bounded reads (ELF header, program headers, the
 * PT_DYNAMIC entries, the DT_NEEDED names: a few KiB, no allocation, no
 * ELF library), answers are cached per file (device, inode, size, mtime),
 * and files not in the cache are read at most 100 times a second per
 * user. */
#ifndef JSAMPLED_JAVA_LAUNCHER_H
#define JSAMPLED_JAVA_LAUNCHER_H

#include <stdint.h>
#include <sys/types.h>

/* 1 if pid's program links the JVM's launcher library or the JVM itself,
 * 0 if not, -1 if it cannot be read (gone, not ELF, or its user is over
 * the rate). */
int java_launcher_check(pid_t pid);
/* The same for an open file (read, not mapped; not rate limited). */
int java_launcher_file(int fd);

struct java_launcher_counters {
	uint64_t cached;       /* answered from the cache */
	uint64_t read;         /* files read */
	uint64_t rate_limited; /* not read: the exec'ing user was over the rate */
};
const struct java_launcher_counters *java_launcher_counters(void);

#endif
