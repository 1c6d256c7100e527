/* SPDX-License-Identifier: GPL-2.0-only */
#include "continuation_layout.h"

#include <string.h>

#include "java_fields.h"
#include "safe_read.h"
#include "userspace/common/agent_protocol.h"

/* Where a StackChunk's stack words start: the size of its fields, which
 * its class's layout helper gives in bytes (InstanceStackChunkKlass::
 * init_offset_of_stack). The Klass* is read from the class's mirror. */
static int64_t chunk_stack_offset(const struct vmstructs *vs, jclass chunk_cls)
{
	struct vm_field klass_off = vmstructs_field(vs, "java_lang_Class", "_klass_offset");
	struct vm_field lh = vmstructs_field(vs, "Klass", "_layout_helper");
	uint64_t mirror, klass;
	int32_t off = 0, helper = 0;

	if (!klass_off.present || !klass_off.is_static || !lh.present || !chunk_cls)
		return -1;
	/* A local reference is an untagged pointer to the mirror's slot. */
	if (safe_read_u64((uint64_t)(uintptr_t)chunk_cls, &mirror) != 0 || !mirror ||
	    safe_read(klass_off.address, &off, sizeof(off)) != 0 || off <= 0 || off > 4096 ||
	    safe_read_u64(mirror + (uint64_t)off, &klass) != 0 || !klass ||
	    safe_read(klass + lh.offset, &helper, sizeof(helper)) != 0 || helper <= 0 || helper > 4096)
		return -1;
	return helper & ~7;
}

void continuation_layout_measure(struct continuation_layout *c, const struct vmstructs *vs, JNIEnv *jni)
{
	struct vm_field vthread = vmstructs_field(vs, "JavaThread", "_vthread");
	struct vm_field threadobj = vmstructs_field(vs, "JavaThread", "_threadObj");
	jclass vt_cls, cont_cls, chunk_cls;
	int64_t refs[6], ref_size, base, shift;

	memset(c, 0, sizeof(*c));
	if (!vthread.present || !threadobj.present || java_narrow_oops(vs, &base, &shift) != 0)
		return;
	if (!(vt_cls = java_find_class(jni, "java/lang/VirtualThread")))
		return;
	cont_cls = java_find_class(jni, "jdk/internal/vm/Continuation");
	chunk_cls = java_find_class(jni, "jdk/internal/vm/StackChunk");
	c->vthread_off = (int64_t)vthread.offset;
	c->threadobj_off = (int64_t)threadobj.offset;
	c->vt_cont_off = java_field_offset(jni, vt_cls, "cont", "Ljdk/internal/vm/Continuation;");
	c->cont_tail_off = java_field_offset(jni, cont_cls, "tail", "Ljdk/internal/vm/StackChunk;");
	c->chunk_sp_off = java_field_offset(jni, chunk_cls, "sp", "I");
	c->chunk_bottom_off = java_field_offset(jni, chunk_cls, "bottom", "I");
	c->chunk_parent_off = java_field_offset(jni, chunk_cls, "parent", "Ljdk/internal/vm/StackChunk;");
	c->chunk_stack_off = chunk_stack_offset(vs, chunk_cls);
	refs[0] = c->cont_tail_off;
	refs[1] = java_field_offset(jni, cont_cls, "parent", "Ljdk/internal/vm/Continuation;");
	refs[2] = java_field_offset(jni, cont_cls, "child", "Ljdk/internal/vm/Continuation;");
	refs[3] = java_field_offset(jni, cont_cls, "scope", "Ljdk/internal/vm/ContinuationScope;");
	refs[4] = java_field_offset(jni, cont_cls, "target", "Ljava/lang/Runnable;");
	refs[5] = java_field_offset(jni, cont_cls, "yieldInfo", "Ljava/lang/Object;");
	ref_size = java_reference_size(refs, 6);
	c->narrow_oops = ref_size == 4;
	c->narrow_base = base;
	c->narrow_shift = shift;
	(*jni)->DeleteLocalRef(jni, vt_cls);
	if (cont_cls)
		(*jni)->DeleteLocalRef(jni, cont_cls);
	if (chunk_cls)
		(*jni)->DeleteLocalRef(jni, chunk_cls);
	c->valid = (ref_size == 4 || ref_size == 8) && c->vt_cont_off > 0 && c->cont_tail_off > 0 &&
		   c->chunk_sp_off > 0 && c->chunk_bottom_off > 0 && c->chunk_parent_off > 0 && c->chunk_stack_off > 0 &&
		   c->vthread_off > 0 && c->threadobj_off > 0;
}

static void fact(struct wbuf *w, uint16_t *count, const char *name, int64_t value)
{
	wbuf_str(w, name);
	wbuf_i64(w, value);
	(*count)++;
}

void continuation_layout_write_facts(const struct continuation_layout *c, struct wbuf *w, uint16_t *count)
{
	if (!c->valid)
		return;
	fact(w, count, JS_LAYOUT_THREAD_VTHREAD, c->vthread_off);
	fact(w, count, JS_LAYOUT_THREAD_THREADOBJ, c->threadobj_off);
	fact(w, count, JS_LAYOUT_VTHREAD_CONT, c->vt_cont_off);
	fact(w, count, JS_LAYOUT_CONT_TAIL, c->cont_tail_off);
	fact(w, count, JS_LAYOUT_CHUNK_SP, c->chunk_sp_off);
	fact(w, count, JS_LAYOUT_CHUNK_BOTTOM, c->chunk_bottom_off);
	fact(w, count, JS_LAYOUT_CHUNK_PARENT, c->chunk_parent_off);
	fact(w, count, JS_LAYOUT_CHUNK_STACK, c->chunk_stack_off);
	fact(w, count, JS_LAYOUT_NARROW_OOPS, c->narrow_oops);
	fact(w, count, JS_LAYOUT_NARROW_BASE, c->narrow_base);
	fact(w, count, JS_LAYOUT_NARROW_SHIFT, c->narrow_shift);
}
