/* SPDX-License-Identifier: GPL-2.0-only */
/* Where a mounted virtual thread's frozen frames are (JDK 21+): from its
 * carrier's JavaThread to the Java heap objects that hold them. A
 * virtual thread's continuation keeps the frames it has not thawed yet in
 * its tail StackChunk, an object whose stack words follow its fields. The
 * Java fields on the way are not in vmStructs: their offsets come from
 * JNI field IDs, which HotSpot encodes as the field's offset
 * (jfieldIDWorkaround.hpp). */
#ifndef JSAGENT_CONTINUATION_LAYOUT_H
#define JSAGENT_CONTINUATION_LAYOUT_H

#include <jni.h>
#include <stdint.h>

#include "vmstructs.h"
#include "userspace/common/wire.h"

struct continuation_layout {
	int valid;
	int64_t vthread_off, threadobj_off;   /* JavaThread: OopHandles */
	int64_t vt_cont_off, cont_tail_off;   /* VirtualThread.cont, Continuation.tail */
	int64_t chunk_sp_off, chunk_bottom_off, chunk_parent_off, chunk_stack_off;
	int64_t narrow_oops, narrow_base, narrow_shift;
};

/* Measures the layout in the live phase (it loads no class the JVM has not
 * loaded: these are VM classes). Leaves it invalid on JDKs without virtual
 * threads or when anything is missing. */
void continuation_layout_measure(struct continuation_layout *c, const struct vmstructs *vs, JNIEnv *jni);

/* Appends its facts to a VM_LAYOUT payload (agent_protocol.h); none when
 * invalid. */
void continuation_layout_write_facts(const struct continuation_layout *c, struct wbuf *w, uint16_t *count);

#endif
