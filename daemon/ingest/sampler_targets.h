/* SPDX-License-Identifier: GPL-2.0-only */
/* What the BPF sampler is told about each profiled process and thread: the
 * VM layout translated into the targets map (how to find a thread's
 * JavaThread and frame anchor from its first sample), each Java thread's
 * stack bounds and anchor address in the threads map, and the copy sizes
 * the decoder learns per thread. Everything written comes from an agent,
 * so it is checked first: a process is sampled only while it is the
 * instance its agent connected from, a thread entry only for a thread of
 * that process, and anchor offsets only where the BPF program can read
 * them. */
#ifndef JSAMPLED_SAMPLER_TARGETS_H
#define JSAMPLED_SAMPLER_TARGETS_H

#include <stdint.h>

struct daemon;
struct process;
struct jvm_thread;
struct vm_layout;

/* Starts sampling p once its layout is known (idempotent). */
void sampler_targets_start(struct daemon *d, struct process *p);
/* Starts sampling p with no JVM facts: every thread's stack is copied
 * from sp, no frame anchor is read (a process before its agent, or one
 * that has none). 0, or -1 if the BPF map refuses it. */
int sampler_targets_start_bare(struct daemon *d, struct process *p);
/* Stops sampling p (its agent is gone, it exited) and drains the ring:
 * its last samples are taken while it is still live. Not from a drain. */
void sampler_targets_stop(struct daemon *d, struct process *p);

/* process_hooks for the process table (ctx: the daemon). */
uint32_t sampler_targets_host_tid(void *ctx, struct process *p, uint32_t ns_tid);
void sampler_targets_on_thread(void *ctx, struct process *p, const struct jvm_thread *t);
void sampler_targets_on_copy_end(void *ctx, struct process *p, uint32_t tid, uint64_t end);
void sampler_targets_on_max_copy(void *ctx, struct process *p, uint32_t tid, uint32_t bytes);
/* A walk of the thread met a virtual thread's return barrier: its samples
 * bring the frozen frames from now on (JS_THREAD_CONTINUATIONS). */
void sampler_targets_on_carrier(void *ctx, struct process *p, uint32_t tid);
void sampler_targets_on_image_lost(void *ctx, struct process *p, uint32_t tid);
void sampler_targets_on_internal_thread(void *ctx, struct process *p, uint32_t tid);

#endif
