/* SPDX-License-Identifier: GPL-2.0-only */
/* JVMs profiled from their first instruction. A process that execs a Java
 * launcher (java_launcher.h) is sampled at once, before any agent: the BPF
 * program copies its threads' stacks from sp (no JVM facts yet) and the
 * samples wait in its held queue. The moment it installs its SIGQUIT
 * handler (the BPF program reports it: HotSpot's attach listener answers
 * SIGQUIT from then on) discovery attaches the agent, which reports the
 * code, methods and threads live at that point; the agent's HELLO takes
 * the process over (admission.c), and the held samples are decoded against
 * that model. A process that exits, execs something else or is not
 * attached within STARTUP_ATTACH_LIMIT_S is no longer sampled; its held
 * samples are settled as they are (counted, never dropped silently). */
#ifndef JSAMPLED_JVM_STARTUP_H
#define JSAMPLED_JVM_STARTUP_H

#include <stdint.h>
#include <sys/types.h>

struct daemon;
struct process;

#define STARTUP_ATTACH_LIMIT_S 120

/* An exec event (after the agent table and before discovery saw it). */
void jvm_startup_on_exec(struct daemon *d, pid_t pid, uint64_t now_ns);
/* Discovery found libjvm.so mapped in a process that exec'd while
 * jsampled ran but is no Java launcher (a JVM embedded in another
 * program): sampled from now on, like a launcher from its exec. */
void jvm_startup_on_jvm_found(struct daemon *d, pid_t pid, uint64_t now_ns);
/* A target installed a SIGQUIT handler: attach now if it waits for that. */
void jvm_startup_on_sigquit(struct daemon *d, pid_t pid, uint64_t now_ns);
/* Maintenance: ends early sampling of processes that exited or waited too
 * long, reads each live process's CPU time every CPU_READ_NS, and keeps
 * the SIGQUIT watch on exactly while some process waits for its attach. */
void jvm_startup_check(struct daemon *d, uint64_t now_ns);
/* Reads p's CPU time now into p->cpu_ns (a lower reading is ignored);
 * returns the reading, 0 if the instance is gone. */
uint64_t jvm_startup_read_cpu(struct process *p, uint64_t now_ns);

#endif
