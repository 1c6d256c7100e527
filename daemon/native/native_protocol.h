/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The messages between jsampled and its native helper (native_helper.h),
 * one per SOCK_SEQPACKET datagram, little endian (userspace/common/wire.h),
 * descriptors as SCM_RIGHTS. Every message starts with
 *   u32 type, u32 key (jsampled's number for a profiled process), u64 seq.
 *
 * jsampled -> helper
 *   MAPS      u32 pid, u8 last, text   a part of the process's mappings (the
 *                                      lines of its /proc/PID/maps that name a
 *                                      file or the vDSO); the parts of one
 *                                      reading, in order, the last marked
 *   VDSO      image                    its vDSO, copied from its memory
 *   FILE      str path, u64 dev, u64 ino + 1 descriptor: a file it maps, opened
 *                                      by jsampled inside the process's root
 *                                      and checked against its mapping
 *   PERF_MAP  + 1 descriptor           its /tmp/perf-PID.map, checked
 *   DEBUG     u8 n, id[n], u8 have + a descriptor per bit of have (bit 0: the
 *                                      process's debug file, bit 1: ours):
 *                                      the answer to WANT_DEBUG
 *   WALK      seq; the walk below      unwind and name one sample
 *   DROP      -                        the process is gone from jsampled
 * helper -> jsampled
 *   FRAMES    seq; u8 flags, u8 n_lists, per list: u8 n, n names (str)
 *                                      one answer per WALK, in order
 *   WANT_DEBUG u8 n, id[n]             a debug file by build ID, while a WALK
 *                                      waits for it
 *
 * A WALK: u8 flags (NATIVE_WALK_*), u8 n_cross, u64 stop_lo, u64 stop_hi,
 * n_cross x (u64 pc, u64 sp, u64 fp), then the sample: u32 tid, u32 flags,
 * JS_NREGS x u64 regs, u64 stack_addr, u32 stack_len, stack_len bytes.
 * Its FRAMES lists are the native frames (innermost first) of each
 * crossing in order, then of the leaf if NATIVE_WALK_LEAF.
 *
 * jsampled trusts nothing in what the helper sends: counts and lengths are
 * checked, names are escaped where they are interned, an answer out of
 * order ends the helper.
 */
#ifndef JSAMPLED_NATIVE_PROTOCOL_H
#define JSAMPLED_NATIVE_PROTOCOL_H

#include <stdint.h>

/* Fits the smallest default socket buffer (net.core.wmem_default 212992). */
#define NATIVE_MSG_MAX (192u << 10)
#define NATIVE_MSG_HEAD 16u
#define NATIVE_MAPS_PART (128u << 10)
#define NATIVE_NAME_MAX 256u   /* bytes of a frame's name, cut beyond */
#define NATIVE_LIST_MAX 64u    /* frames per list */
#define NATIVE_CROSS_MAX 15u   /* trace.h: TRACE_MAX_CROSSINGS */
#define NATIVE_BUILD_ID_MAX 64u

enum native_msg_type {
	NATIVE_MSG_MAPS = 1,
	NATIVE_MSG_VDSO = 2,
	NATIVE_MSG_FILE = 3,
	NATIVE_MSG_PERF_MAP = 4,
	NATIVE_MSG_DEBUG = 5,
	NATIVE_MSG_WALK = 6,
	NATIVE_MSG_DROP = 7,
	NATIVE_MSG_FRAMES = 16,
	NATIVE_MSG_WANT_DEBUG = 17,
};

enum native_walk_flags {
	NATIVE_WALK_LEAF = 1,       /* unwind from the interrupted frame too */
};

enum native_frames_flags {
	NATIVE_FRAMES_UNKNOWN_PC = 1, /* a pc in no module: read the mappings again */
	NATIVE_FRAMES_FAILED = 2,     /* a file of the process broke the walk (SIGBUS): no more walks of it */
};

#endif
