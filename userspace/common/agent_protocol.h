/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The protocol between the in-JVM agent (libjsagent.so) and jsampled.
 *
 * The agent connects to jsampled's agent socket and says HELLO; jsampled
 * learns the peer's pid from SO_PEERCRED (never from the message) and trusts
 * the agent only for that process. jsampled then pulls the agent's code maps
 * incrementally: FETCH(since version N) is answered by BATCH messages holding
 * every record whose version is greater than N, in version order.
 *
 * Framing: u32 length (of everything after it), u16 type, u16 zero, payload.
 * All integers little endian; strings are u16 length + bytes (wire.h).
 * Records inside a BATCH are u16 kind, u32 length, payload, so a reader skips
 * kinds it does not know and a record's parser cannot run past its end.
 */
#ifndef JSAMPLED_AGENT_PROTOCOL_H
#define JSAMPLED_AGENT_PROTOCOL_H

#include <stdint.h>

#define JS_AGENT_MAGIC 0x4741534au /* "JSAG" */
#define JS_AGENT_PROTOCOL_VERSION 1u
#define JS_AGENT_DEFAULT_SOCKET "/run/jsampled/agent.sock"
#define JS_AGENT_SOCKET_ENV "JSAMPLED_AGENT_SOCKET"

#define JS_FRAME_HEADER_BYTES 8u
/* Upper bound of one message in either direction; larger is a protocol
 * error (it bounds what one connection makes jsampled buffer). */
#define JS_AGENT_MAX_MESSAGE (8u << 20)
/* A record larger than this cannot travel in a BATCH: the agent skips it. */
#define JS_AGENT_MAX_RECORD (JS_AGENT_MAX_MESSAGE - 4096)
/* What jsampled asks per BATCH; the agent may send less. */
#define JS_AGENT_BATCH_BYTES (4u << 20)

enum js_msg_type {
	JS_MSG_HELLO = 1, /* agent -> jsampled */
	JS_MSG_FETCH = 2, /* jsampled -> agent */
	JS_MSG_BATCH = 3, /* agent -> jsampled */
	JS_MSG_ERROR = 4, /* either way: str reason; the sender closes */
	JS_MSG_BYE = 5,   /* agent -> jsampled: the JVM is exiting */
	JS_MSG_CONFIG = 6, /* jsampled -> agent (if its HELLO offers JS_AGENT_TAKES_CONFIG) */
};

/* HELLO's features (appended: absent from older agents, which then get no
 * CONFIG). */
enum js_agent_features {
	JS_AGENT_TAKES_CONFIG = 1u << 0,
};

/*
 * HELLO: u32 magic, u32 protocol version, u32 pid as the agent sees it (its
 *        own pid namespace), u8 late_attach, u64 agent start time (ns,
 *        CLOCK_MONOTONIC), str vm name, str vm version, then u32 features
 *        (enum js_agent_features; absent: none).
 * FETCH: u64 since_version, u32 max_bytes.
 * BATCH: u64 since_version (as requested), u64 upto_version (the highest
 *        version included; the next FETCH asks for records after it),
 *        u64 agent_time_ns (CLOCK_MONOTONIC when the batch was cut: every
 *        event the agent had seen by then is included unless more is set),
 *        u8 more, u32 record count, records.
 * ERROR: str reason.
 * CONFIG: u64 alloc_interval (bytes; 0: allocations are not sampled),
 *        u64 lock_interval (ns; 0: lock waits are not sampled). Sent after
 *        HELLO and whenever jsampled's settings change; the agent applies
 *        it before its next answer.
 */

enum js_record_kind {
	JS_REC_VM_LAYOUT = 1,   /* named facts about the VM */
	JS_REC_CODE_LOAD = 2,   /* a code blob became live */
	JS_REC_CODE_UNLOAD = 3, /* a code blob was unloaded */
	JS_REC_CLASS = 4,
	JS_REC_METHOD = 5,
	JS_REC_THREAD = 6,      /* a Java thread started or ended */
	JS_REC_METHOD_REF = 7,  /* a method's Method* before its names are resolved */
	JS_REC_CLASS_UNLOAD = 8, /* classes the JVM unloaded (their mirrors were freed) */
	JS_REC_EVENTS = 9,      /* sampled allocations and lock waits, with their stacks */
};

/*
 * VM_LAYOUT: u16 count, count x (str name, i64 value). Names are listed in
 * the JS_LAYOUT_* macros below; a reader ignores names it does not know and
 * treats missing ones as unknown.
 */
#define JS_LAYOUT_INTERP_METHOD_OFFSET "interp.method_offset"       /* words from fp */
#define JS_LAYOUT_INTERP_BCP_OFFSET "interp.bcp_offset"             /* words from fp */
#define JS_LAYOUT_INTERP_SENDER_SP_OFFSET "interp.sender_sp_offset" /* words from fp */
#define JS_LAYOUT_INTERP_LOCALS_OFFSET "interp.locals_offset"       /* words from fp */
#define JS_LAYOUT_INTERP_LAST_SP_OFFSET "interp.last_sp_offset"     /* words from fp */
#define JS_LAYOUT_ENTRY_CALL_WRAPPER_OFFSET "entry.call_wrapper_offset" /* words from fp */
#define JS_LAYOUT_CALL_WRAPPER_ANCHOR "JavaCallWrapper::_anchor"    /* bytes */
#define JS_LAYOUT_ANCHOR_SP "JavaFrameAnchor::_last_Java_sp"        /* bytes */
#define JS_LAYOUT_ANCHOR_FP "JavaFrameAnchor::_last_Java_fp"        /* bytes */
#define JS_LAYOUT_ANCHOR_PC "JavaFrameAnchor::_last_Java_pc"        /* bytes */
#define JS_LAYOUT_THREAD_ANCHOR "JavaThread::_anchor"               /* bytes */
#define JS_LAYOUT_THREAD_STATE "JavaThread::_thread_state"          /* bytes */
#define JS_LAYOUT_STATE_IN_JAVA "_thread_in_Java"                   /* JavaThreadState values */
#define JS_LAYOUT_STATE_IN_JAVA_TRANS "_thread_in_Java_trans"
#define JS_LAYOUT_STATE_IN_NATIVE "_thread_in_native"
#define JS_LAYOUT_STATE_IN_VM "_thread_in_vm"
#define JS_LAYOUT_STATE_BLOCKED "_thread_blocked"
/* A Java thread's java.lang.Thread status (JVMTI state bits): from
 * JavaThread::_threadObj to the Thread, through Thread.holder when it is
 * not 0, to threadStatus (an int). Sent with the _threadObj and narrow-oop
 * facts below. */
#define JS_LAYOUT_THREAD_HOLDER "java.lang.Thread.holder"           /* bytes, 0: none */
#define JS_LAYOUT_THREAD_STATUS "java.lang.Thread.threadStatus"     /* bytes, in Thread or its holder */
#define JS_LAYOUT_TLS_MODID "tls.libjvm_modid"          /* glibc TLS module id of libjvm */
#define JS_LAYOUT_TLS_THREAD_OFFSET "tls.thr_current_offset" /* Thread::_thr_current in its block */
#define JS_LAYOUT_CALL_STUB_RETURN "StubRoutines::_call_stub_return_address" /* address */
#define JS_LAYOUT_CONST_METHOD_SIZE "sizeof(ConstMethod)"           /* bytes */
#define JS_LAYOUT_CODE_CACHE_LOW "CodeCache::_low_bound"            /* address */
#define JS_LAYOUT_CODE_CACHE_HIGH "CodeCache::_high_bound"          /* address */
#define JS_LAYOUT_JAVA_VERSION_MAJOR "java.version.major"
/* Virtual threads (JDK 21+, all or none): bpf/sampler.h js_target. */
#define JS_LAYOUT_THREAD_VTHREAD "JavaThread::_vthread"             /* bytes */
#define JS_LAYOUT_THREAD_THREADOBJ "JavaThread::_threadObj"         /* bytes */
#define JS_LAYOUT_VTHREAD_CONT "java.lang.VirtualThread.cont"        /* bytes */
#define JS_LAYOUT_CONT_TAIL "jdk.internal.vm.Continuation.tail"     /* bytes */
#define JS_LAYOUT_CHUNK_SP "jdk.internal.vm.StackChunk.sp"          /* bytes */
#define JS_LAYOUT_CHUNK_BOTTOM "jdk.internal.vm.StackChunk.bottom"  /* bytes */
#define JS_LAYOUT_CHUNK_PARENT "jdk.internal.vm.StackChunk.parent"  /* bytes */
#define JS_LAYOUT_CHUNK_STACK "jdk.internal.vm.StackChunk.stack"    /* bytes: first stack word */
#define JS_LAYOUT_NARROW_OOPS "oops.narrow"                         /* 1: references are narrow */
#define JS_LAYOUT_NARROW_BASE "CompressedOops::_base"               /* address */
#define JS_LAYOUT_NARROW_SHIFT "CompressedOops::_shift"

enum js_code_kind {
	JS_CODE_UNKNOWN = 0,
	JS_CODE_NMETHOD = 1,        /* JIT-compiled Java method */
	JS_CODE_NATIVE_WRAPPER = 2, /* compiled JNI wrapper of a native method */
	JS_CODE_INTERPRETER = 3,
	JS_CODE_STUB = 4,           /* StubRoutines, runtime stubs, other generated code */
	JS_CODE_ADAPTER = 5,        /* i2c / c2i adapters */
	JS_CODE_VTABLE_STUB = 6,    /* vtable / itable dispatch stubs: no frame */
	JS_CODE_METHOD_HANDLE = 7,  /* method handle adapters / intrinsics */
	JS_CODE_CALL_STUB = 8,      /* StubRoutines::call_stub: the entry frame */
	JS_CODE_DEOPT = 9,          /* deoptimization / uncommon trap blobs */
	JS_CODE_SAFEPOINT = 10,     /* safepoint handler blobs */
	JS_CODE_INTERPRETER_ENTRY = 11, /* an interpreter method entry: the frame is being built */
	JS_CODE_KIND_COUNT
};

enum js_code_flags {
	JS_CODE_FLAG_OSR = 1u << 0, /* on-stack-replacement nmethod */
};

/*
 * CODE_LOAD:
 *   u64 code_id (unique per agent), u8 kind, u8 flags, u16 zero,
 *   u64 start, u32 size, u64 load_time_ns,
 *   u64 blob (CodeBlob* or 0),
 *   i32 frame_size_words (-1 unknown),
 *   i32 frame_complete_offset (from start; -1 unknown),
 *   i32 verified_entry_offset (from start; -1 unknown),
 *   i32 stub_offset (from start: exception/deopt handlers; -1 unknown),
 *   i32 orig_pc_offset (bytes from the frame's sp; -1 unknown),
 *   i32 entry_bci (-1 unless OSR), i32 comp_level,
 *   u32 method_id (0 for stubs), str name (stubs),
 *   u32 pc count, count x { u32 pc_offset (from start), u8 depth,
 *                           depth x { u32 method_id, i32 bci } }
 *   The scopes of each pc are innermost first (the method whose code is at
 *   the pc comes first, the compiled root method last).
 *   u32 frame-state count, count x { u32 start, u32 end (offsets from
 *   start), u8 state }: where the frame is not in place (prologue and
 *   epilogues; enum js_frame_state), sorted, non-overlapping.
 * CODE_UNLOAD: u64 code_id, u64 unload_time_ns.
 * CLASS: u32 class_id, str signature ("Ljava/lang/String;"), str source file.
 * METHOD: u32 method_id, u32 class_id, u64 Method*, u64 ConstMethod*,
 *   u32 bytecode size, u32 modifiers, str name, str signature,
 *   u32 line count, count x { u32 start_bci, u32 line },
 *   i32 call-site count (-1 unknown), count x u16 bci: the method's invoke
 *   instructions, so jsampled can check that a calling frame stands at one;
 *   then (appended later: absent from older agents) u32 the method's name
 *   hash (FNV-1a over its name, then its descriptor, modified UTF-8; never
 *   0), u32 target count (the call-site count, or 0 when unknown), count x
 *   u32 the name hash of the method each call site names (0: not known
 *   statically: invokedynamic, MethodHandle/VarHandle's polymorphic
 *   methods), so jsampled can check that a calling frame calls the method
 *   the next frame runs. Sent again when the Method* changes (class
 *   redefinition).
 * METHOD_REF: u32 method_id, u32 class_id, u64 Method*, u64 ConstMethod*,
 *   u32 bytecode size. Sent as soon as a class is prepared, so interpreted
 *   frames decode at once; the METHOD record with the names follows.
 * CLASS_UNLOAD: u64 time_ns (when the agent learnt of it: the unloading
 *   was earlier), u32 count (at most JS_MAX_UNLOADS_PER_RECORD), count x
 *   u32 class_id. The classes, their methods' Method*s and their code are
 *   gone; older jsampled ignore the record.
 * THREAD: u32 tid (agent's namespace), u8 alive, u64 JavaThread*,
 *   u64 stack_base (highest address), u64 stack_size, u64 time_ns, str name.
 * EVENTS: u64 alloc_interval (bytes; 0: allocations are not sampled),
 *   u64 lock_interval (ns; 0: lock waits are not sampled), u64 dropped
 *   by the rate cap, u64 dropped for want of buffer, u64 dropped without
 *   a stack (all three counted since the agent started), u32 count,
 *   count x { u8 kind (enum js_event_kind), u8 flags (enum
 *   js_event_flags), u16 depth (at most JS_MAX_EVENT_DEPTH), u32 tid
 *   (agent's namespace), u64 time_ns, u64 value (by kind), u32 class_id
 *   (the allocated object's class, the lock's; 0 unknown), depth x
 *   { u32 method_id, i32 bci } leaf first }. Each event was sampled with
 *   probability 1 - exp(-value / interval) (HotSpot's heap sampling picks
 *   bytes at exponentially distributed distances; the agent does the same
 *   over wait time), from which jsampled estimates what all events
 *   weighed. Sent once: compacted when fetched.
 */

enum js_event_kind {
	JS_EVENT_ALLOC = 1,   /* value: the object's size in bytes */
	JS_EVENT_MONITOR = 2, /* value: ns waited to enter a contended synchronized monitor */
	JS_EVENT_PARK = 3,    /* value: ns parked waiting for a java.util.concurrent lock */
	JS_EVENT_KIND_MAX = 3,
};

enum js_event_flags {
	JS_EVENT_TRUNCATED = 1u << 0, /* the stack went on past depth frames */
};

#define JS_MAX_EVENT_DEPTH 1024

/* The METHOD record's modifiers are the JVM's access flags (JVMS 4.6);
 * these are the ones agent and daemon test. */
#define JVM_ACC_NATIVE 0x0100
#define JVM_ACC_ABSTRACT 0x0400

#define JS_MAX_INLINE_DEPTH 255
#define JS_MAX_UNLOADS_PER_RECORD 8192
#define JS_MAX_FRAME_STATES 1024

enum js_frame_state {
	JS_FRAME_STATE_NO_FRAME = 0,   /* return address at [sp] */
	JS_FRAME_STATE_RBP_PUSHED = 1, /* saved rbp at [sp], return address at [sp+8] */
	JS_FRAME_STATE_UNKNOWN = 2,    /* frame under construction, shape not recognised */
	JS_FRAME_STATE_RBP_UNSAVED = 3, /* sp final, caller's rbp not stored yet (C2) */
	JS_FRAME_STATE_MAX = 3,
};

#endif
