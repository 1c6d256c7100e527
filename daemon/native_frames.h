/* Native (C/C++) frames of a sample, for the mixed view: when a thread was
 * interrupted outside the JVM's generated code - in a JNI library, libjvm,
 * libc, or a JVM-internal thread's own code - its native frames are
 * unwound from the copied stack with DWARF CFI (native_unwind.h) up to the
 * first Java frame, named, and put above the Java frames of the decoded
 * trace (below any kernel frames). The process table's add_native_frames
 * hook with --native-stacks, whose copies start at sp; never in replay
 * (the process's files are needed). */
#ifndef JSAMPLED_NATIVE_FRAMES_H
#define JSAMPLED_NATIVE_FRAMES_H

#include "process.h"

#define NATIVE_FRAMES_MAX 64

/* Appends s's native frames to tr (root first) if it has any. */
void native_frames_apply(void *ctx, struct process *p, const struct js_sample *s, struct trace *tr);

#endif
