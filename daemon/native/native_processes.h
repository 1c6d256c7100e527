/* SPDX-License-Identifier: GPL-2.0-only */
/* Non-Java processes, profiled only when asked: `profile <pid>` on the
 * query socket (root, or the process's owner) samples the process like a
 * JVM but with no agent: each sample's native frames (native_frames.c,
 * named from ELF symbols and, for JIT code, /tmp/perf-PID.map) and kernel
 * frames make its trace. The process is dropped from sampling when it
 * exits or execs another program (the BPF program drops it at the exec). */
#ifndef JSAMPLED_NATIVE_PROCESSES_H
#define JSAMPLED_NATIVE_PROCESSES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct daemon;
struct process;

/* Starts profiling pid for the client at the other end of requester_fd,
 * if it may read pid as ptrace would let it (process_access.h; checked
 * again once the target is in). 0, or -1 with why (not found, not
 * allowed, a JVM, already profiled, over the limits, no native
 * unwinding). */
int native_process_start(struct daemon *d, pid_t pid, int requester_fd, char *why, size_t whylen);
/* pid exec'd: a native process's profile ends there (the new program may
 * be setuid). */
void native_processes_on_exec(struct daemon *d, pid_t pid, uint64_t now_ns);
/* Maintenance: a native process that exited or exec'd is no longer
 * sampled (its profile stays for the retention). */
void native_processes_check(struct daemon *d, uint64_t now_ns);

#endif
