/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Per-process state: the JVM model its agent reported, the samples waiting
 * for it, the calling-context tree and the counters. A process stays
 * queryable after it exits, for the configured retention.
 *
 * process_take_sample is the hot path: a sample is decoded at once when the
 * model covers it, and only copied into the held queue when it does not.
 */
#ifndef JSAMPLED_PROCESS_H
#define JSAMPLED_PROCESS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "daemon/decode/frozen_chunks.h"
#include "daemon/decode/kernel_stacks.h"
#include "daemon/process/event_profiles.h"
#include "daemon/process/off_cpu_waits.h"
#include "userspace/profile/kernel_symbols.h"
#include "userspace/common/u64_map.h"
#include "userspace/common/vec.h"
#include "userspace/profile/cct.h"
#include "daemon/decode/jvm_model.h"
#include "pid_namespace.h"
#include "sample_queue.h"
#include "daemon/decode/stack_bottoms.h"
#include "stats.h"
#include "daemon/decode/truncated_context.h"

struct agent_link;
struct recording;
struct batch_info;

enum process_state {
	PROCESS_LIVE,       /* agent connected */
	PROCESS_AGENT_LOST, /* agent gone, process still running: no longer sampled */
	PROCESS_EXITED,
};

struct process_limits {
	uint32_t cct_max_nodes;
	size_t cct_max_bytes; /* 0: no byte cap */
	size_t held_max_bytes;
	uint64_t hold_ns; /* how long a sample may wait for the code map */
	uint64_t drain_ns; /* how long a sample may wait in the ring (the drain period) */
	uint32_t slice_s; /* the finest time slice of the CCTs (0: the default) */
	size_t slice_max_bytes; /* the time slices of one CCT (0: the default) */
};

/* The thread pool frame of a thread's last sample, kept while the
 * thread's name is the one it came from (slot tid % PROCESS_POOL_SLOTS):
 * a sample then costs no name folding and interning. */
#define PROCESS_POOL_SLOTS 16
struct thread_pool_slot {
	uint32_t tid, id; /* id 0: empty */
	char from[48];    /* the agent's name for the thread, or its comm */
};

struct process {
	pid_t pid;
	uid_t uid;
	uint64_t start_time; /* /proc/<pid>/stat start time: with pid, the instance (set by admission) */
	bool restored;       /* profile loaded from a saved state */
	uint64_t seen_ns; /* CLOCK_MONOTONIC */
	uint64_t exited_ns;
	enum process_state state;
	char comm[16];     /* its name, escaped (set by admission) */
	char vm[96];
	/* Why it has no agent, when an attach failed or cannot be made (the
	 * JVM's own words when it refused the library): shown by list and
	 * stats; cleared when an agent comes. */
	char agent_problem[256];
	struct agent_link *link;
	struct jvm_model jvm;
	uint64_t agent_cut_ns; /* agent clock of the newest complete batch */
	struct sample_queue held;
	struct cct cct;
	struct event_profiles events; /* its agent's allocation and lock samples */
	struct decode_stats stats;
	uint64_t hold_ns;
	bool wants_fetch; /* held samples need newer agent data */
	bool sampled;     /* in the BPF program's targets */
	struct pidns_map tids; /* the agent's tids -> the host's */
	/* Per sampled thread (host tid): the learned end of its bottom Java
	 * frame, or COPY_END_DISABLED once a trimmed copy proved too short. */
	struct u64_map copy_ends;
	struct u64_map max_copies; /* host tid -> raised copy limit */
	struct context_table contexts; /* where incomplete traces go */
	struct stack_bottoms bottoms;  /* per deep thread: its stack as samples showed it */
	struct walk_reuse reuse;       /* per thread: its last complete walk */
	struct u64_map internal_threads; /* host tid -> 1: told the BPF program to copy nothing */
	struct kernel_stacks kstacks;    /* kernel stacks waiting for their samples */
	struct off_cpu_waits waits;      /* off-CPU samples' weights waiting for their samples */
	struct frozen_chunks chunks;     /* virtual threads' frozen frames waiting for their samples */
	struct u64_map carriers;         /* host tid -> 1: told the BPF program to copy them */
	struct enter_special enter_special; /* learned by the decoder (decode_ctx) */
	struct name_refs names;          /* the native frames' names its tree holds (kernel_symbols.h) */
	struct thread_pool_slot pool_slots[PROCESS_POOL_SLOTS];
	size_t native_bytes;             /* samples waiting for their native frames (native_live.h) */
	/* --native-stacks: the hook's per-process state, freed with it. */
	void *native_state;
	void (*native_state_free)(void *state);
	bool native_failed;
	/* A non-Java process profiled on request (native_processes.h): no
	 * agent, no Java decoding; its traces are its native and kernel frames. */
	bool native_only;
	/* Its own user may not read it as ptrace would not let them (setuid
	 * or setgid, not dumpable, capabilities: process_access.h): its
	 * profile is for root and the readers group only. */
	bool root_only;
	uint64_t foreign_threads; /* THREAD records naming tids not of this process (ignored) */
	/* Its agent was cut off for sending more than its limit: a reconnect is
	 * refused at once rather than read again. */
	bool over_limit;
	/* Its agent's connection ended with BYE (the JVM past VMDeath, its
	 * last code news sent), not cut by the exit. */
	bool agent_said_bye;
	/* Sampled from its exec, before any agent (jvm_startup.h): its samples
	 * wait for the agent, whenever it comes; early_target while the BPF
	 * program still has the target without JVM facts. */
	bool early;
	bool early_target;
	uint64_t early_since_ns; /* when sampling began (CLOCK_MONOTONIC) */
	uint64_t agent_since_ns; /* when its agent said HELLO; 0 before */
	uint64_t unloads_dropped_ns; /* when unloaded classes were last dropped */
	/* The kernel's count of its CPU time (utime + stime), as last read,
	 * and the CPU time its profile's samples stand for. */
	uint64_t cpu_ns;
	uint64_t cpu_read_ns; /* when cpu_ns was read (CLOCK_MONOTONIC) */
	uint64_t profiled_ns;
	uint64_t offcpu_ns; /* the off-CPU time its profile's off-CPU samples stand for */
};

/* The caps of a process's allocation and lock trees: a quarter of the
 * CPU tree's each. */
void process_event_caps(const struct process_limits *l, struct event_caps *caps);

#define COPY_END_DISABLED UINT64_MAX
/* The vm name of a process sampled since its exec, until its agent names it. */
#define PROCESS_VM_EARLY "early"

/* What the sample path tells the sampler (NULL members: nothing, as in
 * replay). jsampled mirrors all of it into the BPF maps (sampler_targets.c). */
struct process_hooks {
	void *ctx;
	/* The host's tid of a thread the agent names (its pid namespace may
	 * be another); NULL: the same. */
	uint32_t (*host_tid)(void *ctx, struct process *p, uint32_t ns_tid);
	/* A Java thread a batch started or ended. */
	void (*on_thread)(void *ctx, struct process *p, const struct jvm_thread *t);
	/* A thread's copy end was learned (end > 0) or given up (end == 0). */
	void (*on_copy_end)(void *ctx, struct process *p, uint32_t tid, uint64_t end);
	/* A thread's copy limit was raised (its stack is deeper than the copy). */
	void (*on_max_copy)(void *ctx, struct process *p, uint32_t tid, uint32_t bytes);
	/* A deep thread's stack image lost its words (its older frames
	 * changed): its next copy should bring the rest of its stack. */
	void (*on_image_lost)(void *ctx, struct process *p, uint32_t tid);
	/* A thread's walk met a virtual thread's return barrier: it is a
	 * carrier, whose samples should bring the frozen frames. */
	void (*on_carrier)(void *ctx, struct process *p, uint32_t tid);
	/* A thread turned out to be JVM-internal (by its name): no stack needed. */
	void (*on_internal_thread)(void *ctx, struct process *p, uint32_t tid);
	/* Every final decoding outcome (the replay tool's outcomes, extracts
	 * and explanations). */
	void (*on_decoded)(void *ctx, struct process *p, const struct js_sample *s, enum decode_status st, int reason,
			   const struct trace *tr);
	/* Native frames for a decoded trace (--native-stacks, native_frames.h:
	 * the decoding core unwinds none itself). tr's first java_n frames are
	 * the Java ones (with the thread's context below an incomplete trace),
	 * kernel frames may follow. Returns true if it took the
	 * trace to finish later (process_finish_deferred), false if tr is
	 * final now. */
	bool (*add_native_frames)(void *ctx, struct recording *rec, struct process *p, const struct js_sample *s,
				  enum decode_status st, struct trace *tr, uint32_t java_n);
};

struct process_table {
	struct u64_map by_pid;          /* pid -> newest struct process * */
	VEC(struct process *) all;      /* including exited ones */
	struct process_limits limits;
	struct decode_stats retired;    /* counters of processes already forgotten */
	uint64_t unknown_pid_samples;   /* records for a pid with no process */
	uint64_t malformed_samples;
	struct recording *recording;    /* when set, every input below is recorded */
	struct process_hooks hooks;
	uint32_t fragment_bytes;     /* the configured copy size */
	uint32_t max_fragment_bytes; /* how far a deep thread's copy may grow (0: never) */
	/* Every walk goes to the bottom of the stack, never joining the
	 * thread's previous one (jsreplay --no-walk-reuse, to compare). */
	bool no_walk_reuse;
	/* Wall clock minus the samples' clock (CLOCK_REALTIME - CLOCK_MONOTONIC,
	 * kept current by jsampled; 0 in a replay): the time slices of the
	 * CCTs are by wall-clock second. */
	uint64_t wall_offset_ns;
	/* The sampling period (0: unknown, as in a replay): each sample in a
	 * profile stands for that much CPU time (process.cpu_ns compares). */
	uint64_t period_ns;
	struct trace *trace;            /* decoding's working memory (decoder.h) */
	struct decode_scratch *scratch;
	struct js_sample *extended;     /* a held sample with its older words (stack_bottoms_extend) */
	size_t extended_size;
};

void process_table_init(struct process_table *t, const struct process_limits *limits);
void process_table_free(struct process_table *t);
struct process *process_lookup(const struct process_table *t, pid_t pid);
/* Frees a process that is in no table (or was just taken out of one). */
void process_free(struct process *p);
/* A new live process for pid (an older entry with that pid is kept until
 * its retention ends, but lookups find the new one). */
struct process *process_create(struct process_table *t, pid_t pid, uid_t uid, const char *vm);
/* Moves every process of from into t (from is left empty and freed);
 * returns how many moved. */
size_t process_table_adopt(struct process_table *t, struct process_table *from);
/* Gives a superseded entry's profile to a new live process of the same
 * instance (an agent reconnecting after a restart of jsampled): p keeps
 * its tree and counters, the model starts afresh. */
void process_revive(struct process_table *t, struct process *p);
/* Live and remembered processes. */
size_t process_table_count(const struct process_table *t);
/* Forgets one process that is not live (to make room); false if it is not
 * in the table. */
bool process_table_forget(struct process_table *t, struct process *p);
/* Forgets exited processes older than retention_ns. Returns how many. */
size_t process_table_expire(struct process_table *t, uint64_t now_ns, uint64_t retention_ns);

/* The inputs of the sample path (each one recorded when recording, with
 * now_ns, CLOCK_MONOTONIC as the samples' clock: a sample held past its
 * hold time by jsampled's own clock is settled even if the agent never
 * reports a newer state):
 * a sample to decode now or hold until the model catches up; */
void process_take_sample(struct process_table *t, struct process *p, const struct js_sample *s, uint64_t now_ns);
/* Everything p makes jsampled hold: its agent's model, held samples, tree
 * and time slices, stack images and walk memos, the native names it holds,
 * samples waiting for native frames. */
/* Where a process's memory goes; process_memory_bytes is the sum, which
 * its user's limits count (the shared names and bodies whole: what they
 * would cost it alone). */
struct process_memory {
	size_t record;      /* the process itself */
	size_t code_map;
	size_t methods;     /* the method table's own records, indexes and memo */
	size_t shared;      /* the names and method bodies it refers to, counted whole */
	size_t threads;
	size_t trees;       /* its CPU tree with its time slices */
	size_t event_trees; /* allocation and lock trees */
	size_t held;        /* samples waiting for agent data */
	size_t images;      /* deep threads' stack images, last walks and traces */
	size_t native;      /* native frames' names, samples waiting for them */
};
void process_memory(const struct process *p, struct process_memory *m);
/* sum += m, part by part; returns m's total. */
size_t process_memory_add(struct process_memory *sum, const struct process_memory *m);
size_t process_memory_bytes(const struct process *p);
/* A trace the add_native_frames hook took, with its native frames now (or
 * without, if they could not be had): into p's tree, as st says. s needs
 * only its header (tid, time). */
void process_finish_deferred(struct process_table *t, struct process *p, const struct js_sample *s,
			     enum decode_status st, struct trace *tr);
/* a BATCH from the agent, after which held samples are retried; the model
 * may grow to max_model_bytes (0: no limit). Returns enum batch_result; */
int process_apply_batch(struct process_table *t, struct process *p, const void *payload, size_t len,
			struct batch_info *info, size_t max_model_bytes, uint64_t now_ns);
/* the agent of a process sampled since its exec (created with vm
 * PROCESS_VM_EARLY) arrived: its held samples can be decoded from now on; */
void process_agent_came(struct process_table *t, struct process *p, uint64_t now_ns);
/* a periodic retry of held samples; */
void process_retry_held(struct process_table *t, struct process *p, uint64_t now_ns);
/* the end of agent data: the process exited, or its agent went away while
 * it keeps running (agent_lost). Held samples are settled. */
/* Traces waiting for a later sample of their thread (stack_bottoms.h)
 * are settled as they are: no more samples will come for them. */
void process_settle_waiting(struct process_table *t, struct process *p);
void process_agent_gone(struct process_table *t, struct process *p, bool agent_lost, uint64_t now_ns);

#endif
