/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Record layout shared by the BPF sampler (sampler.bpf.c) and jsampled.
 *
 * Every sample is one ring-buffer record: a fixed header followed by
 * stack_len bytes of the interrupted thread's user stack, copied from the
 * user stack pointer upward. Both sides include this file, so the layout is
 * defined exactly once.
 */
#ifndef JSAMPLED_BPF_SAMPLER_H
#define JSAMPLED_BPF_SAMPLER_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Hard upper bound of one stack copy; the configured size may be smaller. */
#define JS_MAX_FRAGMENT_BYTES (64u * 1024u)
#define JS_DEFAULT_FRAGMENT_BYTES (16u * 1024u)
#define JS_PAGE_SIZE 4096u
/* Kernel frames recorded per kernel-mode sample (JS_SAMPLE_KSTACK). */
#define JS_KSTACK_MAX 64

/* Gap-filling windows (JS_SAMPLE_FILL): at most this many bytes per tick,
 * in windows (records) of at most JS_FILL_WINDOW_BYTES, each overlapping
 * its neighbours by JS_FILL_OVERLAP so jsampled can check they join. */
#define JS_DEFAULT_FILL_BYTES (192u * 1024u)
#define JS_FILL_OVERLAP 256u
#define JS_FILL_WINDOW_BYTES (JS_MAX_FRAGMENT_BYTES - 2 * JS_FILL_OVERLAP)
#define JS_MAX_FILL_WINDOWS 4

/* A frozen chunk's bottom frame may read its arguments this far above the
 * chunk's frames (JS_SAMPLE_CHUNK). */
#define JS_CHUNK_ARGS_SLACK 256u

/* Targets map capacity (processes) and thread cache capacity (threads). */
#define JS_MAX_TARGETS 4096
#define JS_MAX_THREADS 65536

enum js_sample_flags {
	/* The timer interrupted kernel mode; regs are the task's saved user registers. */
	JS_SAMPLE_KERNEL_MODE = 1u << 0,
	/* The copy stopped at the fragment limit before the end of the stack. */
	JS_SAMPLE_STACK_CAPPED = 1u << 1,
	/* A page of the copy was unreadable: the copy stopped there, or (with
	 * JS_SAMPLE_STACK_HOLE) went on with the page as zeros. */
	JS_SAMPLE_STACK_FAULT = 1u << 2,
	/* anchor_* hold the thread's JavaFrameAnchor as read at sample time. */
	JS_SAMPLE_HAS_ANCHOR = 1u << 3,
	/* stack_end came from the thread's registered stack bounds (else its VMA). */
	JS_SAMPLE_STACK_END_FROM_JVM = 1u << 4,
	/* stack_end is unknown (VMA lookup failed); the copy ran to the limit. */
	JS_SAMPLE_STACK_END_UNKNOWN = 1u << 5,
	/* thread_state holds JavaThread::_thread_state at sample time. */
	JS_SAMPLE_HAS_STATE = 1u << 6,
	/* The JavaThread was found through TLS, not a registered thread. */
	JS_SAMPLE_THREAD_FROM_TLS = 1u << 7,
	/* The copy starts at the frame anchor, not at sp (stack_addr > sp). */
	JS_SAMPLE_FROM_ANCHOR = 1u << 8,
	/* The copy stopped at the thread's learned copy_end, below stack_end. */
	JS_SAMPLE_COPY_TRIMMED = 1u << 9,
	/* Not a sample: a window of a deep thread's stack above the sample of
	 * the same tick, copied just before it, when that sample's copy would
	 * not reach the part the thread's earlier copies covered
	 * (daemon/decode/stack_bottoms.h). stack_addr/stack_len give the window. */
	JS_SAMPLE_FILL = 1u << 10,
	/* The first window of a tick: it reaches the top of what the decoder
	 * reads of the stack (the thread's bottom Java frame, or the stack's
	 * end); the others go down from it, into the sample's copy. */
	JS_SAMPLE_FILL_TOP = 1u << 11,
	/* Not a sample: the kernel stack of the sample of the same tick that
	 * follows (same tid and time_ns), for a tick that interrupted the
	 * kernel: stack[] holds stack_len / 8 return addresses from
	 * bpf_get_stack, innermost first; stack_addr is 0. */
	JS_SAMPLE_KSTACK = 1u << 12,
	/* Unreadable pages of the copy (within the thread's stack) were
	 * copied as zeros: pages the thread never touched (bpf/sampler.bpf.c,
	 * copy_stack). */
	JS_SAMPLE_STACK_HOLE = 1u << 13,
	/* Not a sample: the frozen frames of the virtual thread mounted on the
	 * thread of the sample of the same tick that follows, copied from its
	 * continuation's tail stack chunk on the Java heap (JDK 21+).
	 * stack_addr is the address of the chunk's top frame's pc word (two
	 * words below its sp: HotSpot keeps the top frame's pc and fp there);
	 * regs[JS_REG_SP] is the top frame's sp; anchor_sp is the end of the
	 * chunk's frames (StackChunk.bottom), stack_end JS_CHUNK_ARGS_SLACK
	 * above it; anchor_pc is the chunk object and anchor_fp its parent
	 * chunk (0: none). Sent only for threads flagged
	 * JS_THREAD_CONTINUATIONS. */
	JS_SAMPLE_CHUNK = 1u << 14,
	/* Set by jsampled, never by the BPF program: the daemon cut this
	 * sample's copy to fit its held-sample queue (sample_queue.c). */
	JS_SAMPLE_HELD_TRIMMED = 1u << 15,
	/* Taken as the thread came back from a system call in which it was
	 * off CPU (blocked, or runnable and waiting for a CPU): its stack is
	 * the one it waited with. Its weight is in the JS_SAMPLE_WAIT record
	 * of the same tick just before it. */
	JS_SAMPLE_OFFCPU = 1u << 16,
	/* Not a sample: how long the thread of the JS_SAMPLE_OFFCPU sample of
	 * the same tick that follows was off CPU. stack[] holds one struct
	 * js_wait; stack_addr is 0. */
	JS_SAMPLE_WAIT = 1u << 17,
	/* An off-CPU sample's thread_state also holds its java.lang.Thread
	 * status (JS_THREAD_STATUS): what a blocked Java thread waits for. */
	JS_SAMPLE_HAS_STATUS = 1u << 18,
};

/* js_sample.thread_state: JavaThread::_thread_state in the low 16 bits;
 * with JS_SAMPLE_HAS_STATUS, the low 16 bits of java.lang.Thread's
 * threadStatus (JVMTI thread state bits) in the high ones. */
#define JS_JVM_STATE(v) ((v) & 0xffffu)
#define JS_THREAD_STATUS(v) ((v) >> 16)

/* An off-CPU sample's weight (JS_SAMPLE_WAIT). Off-CPU time is sampled
 * like CPU time: a tick every offcpu_period_ns of a thread's time off
 * CPU, from a random phase, so a sample carries the ticks its wait held
 * (0 ticks: no sample) and a thread blocked for an hour costs one sample,
 * when it wakes. */
struct js_wait {
	__u64 waited_ns;   /* off CPU in the system call, in all */
	__u64 runnable_ns; /* of which runnable (preempted, waiting for a CPU) */
	__u32 ticks;       /* offcpu_period_ns ticks that fell in it */
	__u32 syscall;     /* the system call's number (x86-64); (__u32)-1: none, preempted in user code */
};

/* User registers kept per sample (x86-64). Interpreter and stub heuristics use
 * more than ip/sp/bp: HotSpot keeps Method* in rbx and the sender sp in r13 at
 * interpreter method entry. */
enum js_reg {
	JS_REG_IP,
	JS_REG_SP,
	JS_REG_BP,
	JS_REG_AX,
	JS_REG_BX,
	JS_REG_CX,
	JS_REG_DX,
	JS_REG_SI,
	JS_REG_DI,
	JS_REG_R8,
	JS_REG_R9,
	JS_REG_R10,
	JS_REG_R11,
	JS_REG_R12,
	JS_REG_R13,
	JS_REG_R14,
	JS_REG_R15,
	JS_NREGS
};

struct js_sample {
	__u64 time_ns; /* CLOCK_MONOTONIC, bpf_ktime_get_ns() */
	__u32 pid;     /* thread group id */
	__u32 tid;
	__u32 cpu;
	__u32 flags; /* enum js_sample_flags */
	__u64 regs[JS_NREGS];
	/* JavaFrameAnchor of the thread at sample time (issue: native code). */
	__u64 anchor_sp;
	__u64 anchor_fp;
	__u64 anchor_pc;
	__u64 stack_end; /* first address past the thread's stack, 0 if unknown */
	__u64 stack_addr; /* the address stack[0] was copied from (sp, or near the anchor) */
	char comm[16];   /* thread name: gives JVM-internal threads their role */
	__u32 stack_len; /* bytes in stack[], copied from stack_addr */
	__u32 thread_state; /* JavaThreadState (in Java, in native, in VM...); JS_JVM_STATE */
	__u8 stack[];
};

/* Per-process facts, the value of the targets map (keyed by tgid). With
 * them the BPF program finds any thread's JavaThread by itself, from its
 * first sample on: HotSpot keeps the current Thread* in the thread-local
 * Thread::_thr_current, in libjvm's TLS block (fsbase -> glibc's DTV ->
 * block of module tls_modid -> +tls_offset). */
struct js_target {
	__u32 tls_modid;   /* 0: unknown, use only registered threads */
	__u32 tls_offset;  /* of Thread::_thr_current in libjvm's TLS block */
	__u32 anchor_off;  /* JavaThread::_anchor */
	__u32 state_off;   /* JavaThread::_thread_state, 0 unknown */
	__u16 anchor_sp_off;
	__u16 anchor_fp_off;
	__u16 anchor_pc_off;
	__u16 reserved;
	/* Virtual threads (JDK 21+): from a JavaThread to its mounted virtual
	 * thread's tail stack chunk (JS_SAMPLE_CHUNK). Object fields are
	 * narrow oops (base + value << shift) when narrow_oops is set.
	 * chunk_stack_off 0: unknown, no chunk is ever read. */
	__u16 vthread_off;   /* JavaThread::_vthread (an OopHandle) */
	__u16 threadobj_off; /* JavaThread::_threadObj (an OopHandle) */
	__u16 vt_cont_off;   /* java.lang.VirtualThread.cont */
	__u16 cont_tail_off; /* jdk.internal.vm.Continuation.tail */
	__u16 chunk_stack_off; /* StackChunk: where its stack words start */
	__u8 chunk_sp_off;     /* StackChunk.sp (int, words) */
	__u8 chunk_bottom_off; /* StackChunk.bottom (int, words) */
	__u8 chunk_parent_off; /* StackChunk.parent */
	__u8 narrow_oops;
	__u8 narrow_shift;
	__u8 reserved2;
	__u64 narrow_base;
	/* The code cache: a pc outside it with a set frame anchor means the
	 * Java frames start at the anchor, so the copy starts there. */
	__u64 code_low;
	__u64 code_high;
	/* java.lang.Thread's status, read for off-CPU samples: from the
	 * JavaThread's threadobj_off (with the narrow-oop fields above) to
	 * the Thread, through its holder when holder_off is not 0, to
	 * threadStatus. thread_status_off 0: unknown, not read. */
	__u16 thread_holder_off;
	__u16 thread_status_off;
	__u32 reserved3;
};

/* Per-thread facts, keyed by tid. The BPF program fills stack_end from the
 * stack's VMA on a thread's first sample; jsampled overwrites the entry with
 * the JVM's own bounds and JavaThread anchor address when the agent reports
 * them. */
struct js_thread_info {
	__u64 stack_end;
	__u64 stack_low;   /* lowest valid stack address; a sp outside is stale */
	__u64 anchor_addr; /* address of JavaThread::_anchor, 0 if not a Java thread */
	__u64 state_addr;  /* address of JavaThread::_thread_state, 0 if unknown */
	__u16 anchor_sp_off;
	__u16 anchor_fp_off;
	__u16 anchor_pc_off;
	__u16 from_jvm; /* 1 when jsampled wrote this entry from agent data */
	/* Where the thread's bottom Java frame ends (its first entry frame and
	 * JavaCallWrapper), learned by jsampled from complete traces: nothing
	 * above it is ever read, so the copy stops there. 0: copy to stack_end. */
	__u64 copy_end;
	/* The most bytes to copy for this thread (0: the configured fragment
	 * size). jsampled raises it for threads whose stacks are deeper than
	 * the fragment, up to JS_MAX_FRAGMENT_BYTES. */
	__u32 max_copy;
	__u32 thread_flags; /* enum js_thread_flags */
	/* The process the thread belongs to: the BPF program ignores an entry
	 * of another process (tids are reused; entries come from agents). */
	__u32 tgid;
	/* Written by the BPF program: 1 once a tick of the thread's first
	 * event came (an even sample period). A thread may also run a second
	 * event (an odd period: daemon/ingest/sampler_events.h); its ticks are
	 * dropped once the first event's have shown up. jsampled keeps it
	 * when it rewrites the entry. */
	__u32 ticked;
	/* Written by the BPF program: the lowest address of the part of the
	 * stack, up to its end, that the thread's newest copies covered
	 * without a gap (0: none yet). */
	__u64 covered;
};

enum js_thread_flags {
	/* A JVM-internal thread (GC, JIT compiler, VM thread): its samples are
	 * attributed by thread name alone, so no stack is copied. */
	JS_THREAD_NO_STACK = 1u << 0,
	/* A Java thread whose stack is deeper than its copies (set by
	 * jsampled): copies that leave a gap get a filling window. */
	JS_THREAD_FILL_GAPS = 1u << 1,
	/* A carrier of virtual threads (set by jsampled once a walk met the
	 * continuation return barrier): its samples bring the mounted
	 * virtual thread's frozen frames (JS_SAMPLE_CHUNK). */
	JS_THREAD_CONTINUATIONS = 1u << 2,
};

/* A process image was replaced (exec): jsampled checks it for a JVM to
 * attach to. Sent on its own small ring buffer, with a wake-up: execs are
 * rare next to samples. */
struct js_exec_event {
	__u32 pid;   /* tgid */
	__u32 flags; /* enum js_exec_flags */
};

enum js_exec_flags {
	/* The process was a target: the BPF program removed it at the exec. */
	JS_EXEC_WAS_TARGET = 1u << 0,
	/* Not an exec: a target process installed a SIGQUIT handler, the sign
	 * that a starting HotSpot can take an attach (note_sigquit). */
	JS_EXEC_SIGQUIT = 1u << 1,
};

/* Per-CPU counters, one array slot. */
struct js_counters {
	__u64 events;        /* every invocation of the program */
	__u64 target;        /* invocations that hit a target process */
	__u64 emitted;       /* records written to the ring buffer */
	__u64 ringbuf_full;  /* records dropped: ring buffer full */
	__u64 copy_fault;    /* copies with an unreadable page (cut short there, or zero-filled: JS_SAMPLE_STACK_HOLE) */
	__u64 no_user_regs;  /* target task without user registers */
	__u64 vma_lookup_failed; /* stack end unknown: copied up to the limit */
	__u64 wakeups;       /* forced consumer wake-ups (watermark) */
	__u64 bytes;         /* stack bytes emitted */
	__u64 vma_lookups;   /* stack bounds looked up (first sample of a thread, stale entries) */
	__u64 fills;         /* gap-filling windows written (JS_SAMPLE_FILL) */
	__u64 fill_bytes;    /* their stack bytes */
	__u64 fills_skipped; /* gaps left: the rest of the stack exceeded fill_bytes */
	__u64 kstacks;       /* kernel stacks written (JS_SAMPLE_KSTACK) */
	__u64 doubled;       /* ticks of a thread's second event, dropped (js_thread_info.ticked) */
	__u64 exec_events_lost; /* exec / SIGQUIT events dropped: their ring buffer full */
	__u64 chunks;        /* frozen-frame copies written (JS_SAMPLE_CHUNK) */
	__u64 chunks_unread; /* a carrier's sample whose chunk could not be read */
	__u64 switches;      /* a target's thread left its CPU (sched_switch) */
	__u64 offcpu_samples; /* off-CPU samples written (JS_SAMPLE_OFFCPU) */
	__u64 offcpu_ticks;  /* the ticks they carry */
	__u64 offcpu_short;  /* system calls that waited off CPU but less than the next tick */
	/* Off-CPU time not ended by a system call's return (a page fault, a
	 * preemption in user code): no stack to give it; the ns are counted. */
	__u64 offcpu_unplaced_ns;
	/* Samples of threads preempted in user code whose stash slot another
	 * preempted thread took before they were back (their wait is
	 * counted in offcpu_unplaced_ns). */
	__u64 offcpu_stash_taken;
};

/* A thread's off-CPU state (the BPF program's task storage): whether it
 * is a target's, as of targets_gen, and its waits if so. */
struct js_offcpu_thread {
	__u64 left_ns;     /* when it left its CPU; 0 while it runs */
	__u64 waited_ns;   /* off CPU since it entered its current system call (as far as seen) */
	__u64 runnable_ns; /* of which preempted */
	__u64 ip, sp;      /* its user ip and sp when it left: a system call's return has the same */
	__u64 to_tick;     /* off-CPU ns until its next tick */
	__u32 tgid;
	__u32 preempted;   /* it left runnable */
	__u32 stashed;     /* its sample is kept in the stash (preempted in user code) */
	__u32 target;      /* its process is a target (as of gen) */
	__u64 gen;         /* targets_gen when target was found */
	__u64 epoch;       /* offcpu_epoch of its waits */
};

#endif /* JSAMPLED_BPF_SAMPLER_H */
