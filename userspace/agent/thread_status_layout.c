/* SPDX-License-Identifier: GPL-2.0-only */
#include "thread_status_layout.h"

#include <string.h>

#include "java_fields.h"
#include "userspace/common/agent_protocol.h"

void thread_status_layout_measure(struct thread_status_layout *t, const struct vmstructs *vs, JNIEnv *jni)
{
	struct vm_field threadobj = vmstructs_field(vs, "JavaThread", "_threadObj");
	jclass thread_cls, holder_cls = NULL;
	int64_t refs[4], ref_size, base, shift;

	memset(t, 0, sizeof(*t));
	if (!threadobj.present || java_narrow_oops(vs, &base, &shift) != 0 ||
	    !(thread_cls = java_find_class(jni, "java/lang/Thread")))
		return;
	t->threadobj_off = (int64_t)threadobj.offset;
	t->holder_off = java_field_offset(jni, thread_cls, "holder", "Ljava/lang/Thread$FieldHolder;");
	if (t->holder_off > 0 && (holder_cls = java_find_class(jni, "java/lang/Thread$FieldHolder")))
		t->status_off = java_field_offset(jni, holder_cls, "threadStatus", "I");
	else {
		t->holder_off = 0;
		t->status_off = java_field_offset(jni, thread_cls, "threadStatus", "I");
	}
	refs[0] = java_field_offset(jni, thread_cls, "threadLocals", "Ljava/lang/ThreadLocal$ThreadLocalMap;");
	refs[1] = java_field_offset(jni, thread_cls, "inheritableThreadLocals", "Ljava/lang/ThreadLocal$ThreadLocalMap;");
	refs[2] = java_field_offset(jni, thread_cls, "name", "Ljava/lang/String;");
	refs[3] = java_field_offset(jni, thread_cls, "contextClassLoader", "Ljava/lang/ClassLoader;");
	ref_size = java_reference_size(refs, 4);
	t->narrow_oops = ref_size == 4;
	t->narrow_base = base;
	t->narrow_shift = shift;
	(*jni)->DeleteLocalRef(jni, thread_cls);
	if (holder_cls)
		(*jni)->DeleteLocalRef(jni, holder_cls);
	t->valid = (ref_size == 4 || ref_size == 8) && t->threadobj_off > 0 && t->status_off > 0 &&
		   t->holder_off >= 0;
}

static void fact(struct wbuf *w, uint16_t *count, const char *name, int64_t value)
{
	wbuf_str(w, name);
	wbuf_i64(w, value);
	(*count)++;
}

void thread_status_layout_write_facts(const struct thread_status_layout *t, int with_refs, struct wbuf *w,
				      uint16_t *count)
{
	if (!t->valid)
		return;
	fact(w, count, JS_LAYOUT_THREAD_HOLDER, t->holder_off);
	fact(w, count, JS_LAYOUT_THREAD_STATUS, t->status_off);
	if (!with_refs)
		return;
	fact(w, count, JS_LAYOUT_THREAD_THREADOBJ, t->threadobj_off);
	fact(w, count, JS_LAYOUT_NARROW_OOPS, t->narrow_oops);
	fact(w, count, JS_LAYOUT_NARROW_BASE, t->narrow_base);
	fact(w, count, JS_LAYOUT_NARROW_SHIFT, t->narrow_shift);
}
