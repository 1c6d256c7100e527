/* Native (C/C++) frames of a sample, for the mixed view: when a thread was
 * interrupted outside the JVM's generated code - in a JNI library, libjvm,
 * libc, or a JVM-internal thread's own code - its native frames are
 * unwound from the copied stack with DWARF CFI (native_unwind.h) up to the
 * first Java frame, named, and put above the Java frames of the decoded
 * trace (below any kernel frames). The process table's add_native_frames
 * hook with --native-stacks, whose copies start at sp. Each time the
 * unwinder reads a process's mappings they are recorded (REC_MAPS), so
 * jsreplay unwinds the same samples with the same modules, reading the
 * files of the machine it runs on. */
#ifndef JSAMPLED_NATIVE_FRAMES_H
#define JSAMPLED_NATIVE_FRAMES_H

#include "process.h"

#define NATIVE_FRAMES_MAX 64

/* Puts s's native frames into tr (root first): above its Java frames, and
 * between a native method and Java code it called back. The live hook
 * (reads /proc/PID/maps, writes REC_MAPS to rec when set). */
void native_frames_apply(void *ctx, struct recording *rec, struct process *p, const struct js_sample *s,
			 struct trace *tr);
/* The replay hook: only for processes whose mappings a REC_MAPS gave. */
void native_frames_apply_replay(void *ctx, struct recording *rec, struct process *p, const struct js_sample *s,
				struct trace *tr);
/* A REC_MAPS event of p in replay. 0, or -1. */
int native_frames_replay_maps(struct process *p, const char *maps, size_t len);
/* A recorded vDSO image (REC_VDSO) for p's replay unwinder (made by its
 * REC_MAPS before). 0, or -1. */
int native_frames_replay_vdso(struct process *p, const void *image, size_t len);

#endif
