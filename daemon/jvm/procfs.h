/* SPDX-License-Identifier: GPL-2.0-only */
/* Small readers of /proc/<pid>/ files, used to find JVMs, decide whether to
 * profile them, and attach to them. Every reader is bounded and returns -1
 * when the process is gone or unreadable. */
#ifndef JSAMPLED_PROCFS_H
#define JSAMPLED_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Reads up to cap-1 bytes of /proc/<pid>/<name>, NUL-terminated; returns
 * the length (embedded NULs kept, as in cmdline and environ) or -1. */
ssize_t procfs_read(pid_t pid, const char *name, char *buf, size_t cap);

struct proc_status {
	uid_t euid;
	gid_t egid;
	pid_t nspid;       /* the pid inside the process's own pid namespace */
	pid_t ppid;        /* 0 if unknown */
	uint64_t sig_caught; /* SigCgt */
};
int procfs_status(pid_t pid, struct proc_status *st);

/* Field 22 of /proc/<pid>/stat: start time in clock ticks since boot. With
 * the pid it names a process instance (pids are reused). 0 if unknown. */
uint64_t procfs_start_time(pid_t pid);

/* The process's CPU time so far (utime + stime of all its threads, live
 * and exited), in ns; 0 if it is not that instance any more. */
uint64_t procfs_cpu_ns(pid_t pid, uint64_t start_time);

/* Whether a mapped file's path ends in suffix (e.g. "/libjvm.so"). */
int procfs_maps_has(pid_t pid, const char *suffix);

/* The process's name (comm), escaped; "" if unknown. */
void procfs_comm(pid_t pid, char *out, size_t cap);

/* The executable's path, or the cgroup v2 path ("/system.slice/x.service"). */
int procfs_exe(pid_t pid, char *out, size_t cap);
int procfs_cgroup(pid_t pid, char *out, size_t cap);

/* Whether an argument of cmdline, or of JAVA_TOOL_OPTIONS / JDK_JAVA_OPTIONS /
 * _JAVA_OPTIONS in environ, is exactly arg. */
bool procfs_java_option(pid_t pid, const char *arg);

/* Whether the process a pidfd names is still running (its pidfd is not
 * readable yet). Needs no permission over the process, unlike a signal. */
bool pidfd_running(int pidfd);

/* Whether tid is a thread of process pid (/proc/<pid>/task/<tid>). */
bool procfs_task_of(pid_t pid, uint32_t tid);

/* The parsers behind the readers, on text already read (the fuzzers call
 * them directly). buf is modified where it is not const. */
int procfs_parse_status(char *buf, pid_t pid, struct proc_status *st);
uint64_t procfs_parse_start_time(const char *buf);
bool procfs_maps_line_has(char *line, const char *suffix);
int procfs_parse_cgroup(char *buf, char *out, size_t cap);
/* cmdline (NUL-separated args) holds arg; environ's Java option variables
 * hold it as a word. buf[n] must be 0. */
bool procfs_args_hold(const char *buf, size_t n, const char *arg);
bool procfs_env_options_hold(const char *buf, size_t n, const char *arg);

/* Inode of /proc/<pid>/ns/<ns> ("mnt", "pid"), 0 if unknown. */
uint64_t procfs_ns_inode(pid_t pid, const char *ns);

#endif
