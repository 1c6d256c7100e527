/* SPDX-License-Identifier: GPL-2.0-only */
/* A decoded Java call trace: what the decoder produces and the CCT
 * consumes. Frames are stored leaf first, as the walk finds them. */
#ifndef JSAMPLED_TRACE_H
#define JSAMPLED_TRACE_H

#include <stdbool.h>
#include <stdint.h>

#define TRACE_MAX_FRAMES 4096

enum frame_type {
	FRAME_INTERPRETED = 0,
	FRAME_COMPILED = 1, /* the root method of a compiled frame */
	FRAME_INLINED = 2,  /* a method inlined into a compiled frame */
	FRAME_NATIVE = 3,   /* a native method (JNI wrapper or interpreter native entry) */
	FRAME_PSEUDO = 4,   /* [GC], [truncated], ...: method_id is enum pseudo_frame */
	FRAME_KERNEL = 5,   /* a kernel function: method_id is a kernel_symbols.h id */
	FRAME_C = 6,        /* a native (C/C++) function: method_id is a kernel_symbols.h name id */
	FRAME_JAVA = 7,     /* a Java method from the JVM's own stack walk (JVMTI): compiled or not is not told */
	FRAME_CLASS = 8,    /* the class an event concerns (allocated, locked): a kernel_symbols.h name id */
	/* The thread pool of the samples below it, at the top of each path:
	 * a kernel_symbols.h name id of its threads' name with every run of
	 * digits as '*' (thread_pools.h). Views leave it out unless asked. */
	FRAME_THREAD = 9,
	FRAME_TYPE_COUNT
};

/* Frames named by a kernel_symbols.h name id rather than a method id. */
static inline bool frame_named_by_symbol(uint8_t type)
{
	return type == FRAME_KERNEL || type == FRAME_C || type == FRAME_CLASS || type == FRAME_THREAD;
}

enum pseudo_frame {
	PSEUDO_TRUNCATED = 1, /* the stack continued beyond the copied fragment */
	PSEUDO_GC,
	PSEUDO_JIT,
	PSEUDO_VM,
	PSEUDO_OTHER_THREAD, /* a JVM-internal thread of no known role */
	PSEUDO_OVERFLOW,     /* [other]: the CCT reached its size limit */
	PSEUDO_NATIVE,       /* a Java thread with no Java frames (in native code or the VM) */
	PSEUDO_AGENT,        /* jsampled's own agent thread */
	/* Below a mounted virtual thread's frames: its older ones are frozen
	 * in its heap stack chunk (the walk met the continuation's return
	 * barrier). */
	PSEUDO_VTHREAD_FROZEN,
	/* The root of a virtual thread's frames: what lies below them is
	 * its carrier's (the scheduler that mounted it). */
	PSEUDO_VTHREAD,
	/* The root of the off-CPU samples' paths (bpf/sampler.h,
	 * JS_SAMPLE_OFFCPU): only the offcpu and wall views show them. */
	PSEUDO_OFFCPU,
	/* The innermost frame of an off-CPU sample: how the thread spent
	 * most of the wait, blocked (asleep in the kernel) or runnable (ready,
	 * waiting for a CPU). */
	PSEUDO_BLOCKED,
	PSEUDO_RUNNABLE,
	/* A blocked Java thread, by what the JVM says it waits for
	 * (daemon/process/wait_states.c). */
	PSEUDO_BLOCKED_NATIVE,  /* in native code: I/O, JNI */
	PSEUDO_BLOCKED_VM,      /* in the VM: a VM lock, a safepoint */
	PSEUDO_BLOCKED_MONITOR, /* entering a contended monitor (synchronized) */
	PSEUDO_BLOCKED_PARKED,  /* LockSupport.park: j.u.c. locks, queues */
	PSEUDO_BLOCKED_WAITING, /* Object.wait */
	PSEUDO_BLOCKED_SLEEPING, /* Thread.sleep */
	PSEUDO_COUNT
};

/* What a sample that cannot be decoded yet waits for. */
enum decode_wait {
	WAIT_UNKNOWN = 0,    /* unknown: retry on every new batch */
	WAIT_LAYOUT = 1, /* the VM layout */
	WAIT_CODE = 2,   /* a code blob holding wait_key (a pc) */
	WAIT_METHOD = 3, /* the method whose Method* is wait_key */
};

enum frame_flags {
	/* This frame called the next (more recent) one through the VM: an
	 * entry frame lies between them (class initialization, JNI upcall,
	 * reflection...), so its bci need not be an invoke instruction. */
	FRAME_FLAG_VIA_VM = 1u << 0,
};
/* Bits 4-7 of a VIA_VM frame's flags: 1 + its index in trace.crossings. */
#define FRAME_CROSSING_SHIFT 4
#define FRAME_CROSSING(flags) ((unsigned)(flags) >> FRAME_CROSSING_SHIFT)

struct trace_frame {
	uint32_t method_id; /* agent method id, or enum pseudo_frame */
	uint8_t type;       /* enum frame_type */
	uint8_t flags;      /* enum frame_flags */
	int32_t bci;        /* -1 unknown */
};

/* Where a walk that ran out of fragment would go on: the state at the
 * start of the frame it stopped in, and the frames found above it. */
struct walk_resume {
	uint64_t pc, sp, fp;
	uint32_t n;      /* frames pushed before that frame (leaf first) */
	bool top;        /* it was the interrupted frame itself */
	bool via_vm;     /* the walk had just crossed an entry frame */
	bool leaf_return; /* its pc returns from a call without debug info */
};

/* An entry frame the walk crossed with older Java frames below it (a JNI
 * upcall, class loading from native code): where the VM/native frames
 * between the two Java parts can be unwound from (the call stub's caller;
 * mixed view, native_frames.c). The older Java frame names its crossing in
 * its flags (FRAME_CROSSING_SHIFT), so the link survives the decoder's trial
 * walks, which copy and drop frames. */
#define TRACE_MAX_CROSSINGS 15
struct trace_crossing {
	uint64_t pc, sp, fp; /* return address into the call stub's caller, its sp, saved rbp */
};

struct trace {
	uint32_t n;
	bool complete; /* reached the thread's first Java frame */
	uint8_t top_rule; /* enum decode_rule: how the top frame was found */
	/* Where the walk stopped (for diagnostics of failed samples). */
	uint64_t stop_pc, stop_sp, stop_fp;
	/* For DECODE_RETRY: what the model lacks (enum decode_wait, and the pc
	 * or Method* it needs). */
	uint8_t wait;
	uint64_t wait_key;
	/* The end of the highest stack word the walk read: for a complete
	 * trace, where the thread's bottom Java frame ends. */
	uint64_t max_read;
	uint32_t work; /* the walk's steps and code lookups (DECODE_WORK_BUDGET) */
	struct walk_resume resume; /* of an incomplete trace */
	bool from_image; /* its bottom came from the thread's stack image (stack_bottoms.h) */
	/* Incomplete at a virtual thread's return barrier (PSEUDO_VTHREAD_FROZEN):
	 * what lies below on the stack is the carrier's, not this thread's. */
	bool frozen;
	/* The walk went on through a virtual thread's frozen frames, read
	 * from its stack chunk (unwind_chunk.c): the frames below the
	 * barrier are the heap's, in no stack image of the carrier. */
	bool via_chunk;
	uint32_t chunk_from; /* then: the first frame read from the chunk (walk order) */
	/* Its frames from the chunk did not join the thawed ones at a call
	 * site (a stale chunk): dropped, the trace is frozen. */
	bool chunk_rejected;
	uint32_t joined; /* frames taken from the thread's previous walk (walk_reuse.h) */
	/* 1 + the walk-order index of the first frame below an unpacking
	 * deopt blob (unwind.h, deopt_skeleton); 0: none. */
	uint32_t deopt_from;
	/* The decoded trace failed the call-site check and was cut above the
	 * impossible call (process_samples.c). */
	bool cut_impossible;
	/* trace_bad_caller of a resolved trace, made with the walk (walk_reuse.c) */
	bool bad_call_known;
	int32_t bad_call;
	uint8_t n_crossings;
	struct trace_crossing crossings[TRACE_MAX_CROSSINGS];
	struct trace_frame frames[TRACE_MAX_FRAMES];
};

static inline int trace_push(struct trace *t, uint32_t method_id, uint8_t type, int32_t bci)
{
	if (t->n >= TRACE_MAX_FRAMES)
		return -1;
	t->frames[t->n].method_id = method_id;
	t->frames[t->n].type = type;
	t->frames[t->n].flags = 0;
	t->frames[t->n].bci = bci;
	t->n++;
	return 0;
}

const char *pseudo_frame_name(uint32_t id);
const char *frame_type_suffix(uint8_t type);

#endif
