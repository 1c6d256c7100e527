/* Classes and methods -> CLASS / METHOD records.
 *
 * ClassPrepare runs on application threads, so it only does what must happen
 * while the jclass is at hand: list the class's jmethodIDs (this also makes
 * HotSpot allocate them, so interpreted frames of any method can be named)
 * and its signature and source file. Names, signatures, line tables and the
 * Method* of each method are resolved later on the agent's own thread. */
#include <stdlib.h>
#include <string.h>

#include "../common/agent_protocol.h"
#include "agent.h"
#include "bytecode_calls.h"
#include "safe_read.h"

static void deallocate(jvmtiEnv *jvmti, void *p)
{
	if (p)
		(*jvmti)->Deallocate(jvmti, (unsigned char *)p);
}

/* A method's Method*, ConstMethod* and bytecode size, read directly: only
 * called while JVMTI hands us the method's live class (ClassPrepare, or a
 * loaded class we hold a reference to), so the memory cannot go away. */
static int method_facts(jmethodID m, uint64_t *method, uint64_t *const_method, uint32_t *code_size)
{
	const struct hs_layout *L = &g_agent.layout;
	uint64_t mp, cm;
	uint16_t size;

	if (!m || L->const_code_size.size != 2)
		return -1;
	memcpy(&mp, (const void *)m, 8); /* HotSpot: a jmethodID points to its Method* slot */
	if (mp < 4096)
		return -1;
	memcpy(&cm, (const void *)(uintptr_t)(mp + L->method_const.offset), 8);
	if (cm < 4096)
		return -1;
	memcpy(&size, (const void *)(uintptr_t)(cm + L->const_code_size.offset), 2);
	*method = mp;
	*const_method = cm;
	*code_size = size;
	return 0;
}

/* Registers a class and its methods unless its first method is known
 * already (the class was seen before). Returns its class id or 0. */
static uint32_t register_class(jvmtiEnv *jvmti, jclass klass, int force)
{
	jint n = 0;
	jmethodID *methods = NULL;
	char *sig = NULL, *src = NULL;
	uint32_t class_id = 0;
	struct wbuf w;

	if ((*jvmti)->GetClassMethods(jvmti, klass, &n, &methods) != JVMTI_ERROR_NONE)
		return 0; /* not prepared yet: ClassPrepare will come */
	if (n == 0 && !force) {
		deallocate(jvmti, methods);
		return 0;
	}
	if (n > 0 && !force) {
		store_lock(&g_agent.store);
		int known = store_has_method_locked(&g_agent.store, (uint64_t)(uintptr_t)methods[0]);
		store_unlock(&g_agent.store);
		if (known) {
			deallocate(jvmti, methods);
			return 0;
		}
	}
	if ((*jvmti)->GetClassSignature(jvmti, klass, &sig, NULL) != JVMTI_ERROR_NONE)
		sig = NULL;
	if ((*jvmti)->GetSourceFileName(jvmti, klass, &src) != JVMTI_ERROR_NONE)
		src = NULL;

	wbuf_init(&w);
	store_lock(&g_agent.store);
	class_id = store_new_class_id_locked(&g_agent.store);
	wbuf_u32(&w, class_id);
	wbuf_str(&w, sig ? sig : "L?;");
	wbuf_str(&w, src);
	if (!w.oom && store_append_locked(&g_agent.store, JS_REC_CLASS, 0, 0, w.data, w.len)) {
		for (jint i = 0; i < n; i++) {
			uint64_t method, const_method;
			uint32_t code_size, id;
			int is_new;

			if (!methods[i])
				continue;
			id = store_method_id_locked(&g_agent.store, (uint64_t)(uintptr_t)methods[i], class_id,
						    &is_new);
			if (!id || !is_new || method_facts(methods[i], &method, &const_method, &code_size) != 0)
				continue;
			wbuf_reset(&w);
			wbuf_u32(&w, id);
			wbuf_u32(&w, class_id);
			wbuf_u64(&w, method);
			wbuf_u64(&w, const_method);
			wbuf_u32(&w, code_size);
			if (!w.oom)
				store_append_locked(&g_agent.store, JS_REC_METHOD_REF, 0, 0, w.data, w.len);
		}
	} else {
		class_id = 0;
	}
	store_unlock(&g_agent.store);
	wbuf_free(&w);
	deallocate(jvmti, methods);
	deallocate(jvmti, sig);
	deallocate(jvmti, src);
	return class_id;
}

void JNICALL on_class_prepare(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jclass klass)
{
	(void)jni;
	(void)thread;
	if (atomic_load(&g_agent.disabled))
		return;
	register_class(jvmti, klass, 0);
}

void register_loaded_classes(jvmtiEnv *jvmti)
{
	jint n = 0;
	jclass *classes = NULL;

	if ((*jvmti)->GetLoadedClasses(jvmti, &n, &classes) != JVMTI_ERROR_NONE)
		return;
	for (jint i = 0; i < n; i++)
		register_class(jvmti, classes[i], 0);
	deallocate(jvmti, classes);
}

/* HotSpot's jmethodID is a pointer to a slot holding the Method*; a cleared
 * slot (class unloaded) holds NULL or a small sentinel. */
static uint64_t method_pointer(uint64_t handle)
{
	uint64_t m = 0;

	if (safe_read_u64(handle, &m) != 0 || m < 4096)
		return 0;
	return m;
}

static void resolve_one(jvmtiEnv *jvmti, const struct pending_method *p, struct wbuf *w)
{
	jmethodID m = (jmethodID)(uintptr_t)p->handle;
	char *name = NULL, *sig = NULL;
	jint modifiers = 0, nlines = 0;
	jvmtiLineNumberEntry *lines = NULL;
	uint32_t class_id = p->class_id;
	uint64_t method = method_pointer(p->handle), const_method = 0;
	uint32_t code_size = 0;

	if ((*jvmti)->GetMethodName(jvmti, m, &name, &sig, NULL) != JVMTI_ERROR_NONE)
		return; /* unloaded meanwhile */
	if (class_id == 0) {
		/* Seen first in an inlining record: name its class now. */
		jclass k = NULL;
		if ((*jvmti)->GetMethodDeclaringClass(jvmti, m, &k) == JVMTI_ERROR_NONE && k)
			class_id = register_class(jvmti, k, 1);
	}
	(*jvmti)->GetMethodModifiers(jvmti, m, &modifiers);
	if ((*jvmti)->GetLineNumberTable(jvmti, m, &nlines, &lines) != JVMTI_ERROR_NONE) {
		nlines = 0;
		lines = NULL;
	}
	if (method && hs_method_bytecode(&g_agent.layout, method, &const_method, &code_size) != 0) {
		const_method = 0;
		code_size = 0;
	}
	/* Call sites, for jsampled's check of decoded traces. */
	unsigned char *bytes = NULL;
	jint nbytes = 0;
	uint16_t calls[1024];
	int ncalls = -1;
	if (!(modifiers & (JVM_ACC_NATIVE | JVM_ACC_ABSTRACT)) &&
	    (*jvmti)->GetBytecodes(jvmti, m, &nbytes, &bytes) == JVMTI_ERROR_NONE && bytes) {
		ncalls = bytecode_call_sites(bytes, (size_t)nbytes, calls, 1024);
		if (ncalls > 1024)
			ncalls = -1; /* too many to list: jsampled will not check this method */
		deallocate(jvmti, bytes);
	}

	wbuf_reset(w);
	wbuf_u32(w, p->method_id);
	wbuf_u32(w, class_id);
	wbuf_u64(w, method);
	wbuf_u64(w, const_method);
	wbuf_u32(w, code_size);
	wbuf_u32(w, (uint32_t)modifiers);
	wbuf_str(w, name);
	wbuf_str(w, sig);
	wbuf_u32(w, (uint32_t)nlines);
	for (jint i = 0; i < nlines; i++) {
		wbuf_u32(w, (uint32_t)lines[i].start_location);
		wbuf_u32(w, (uint32_t)lines[i].line_number);
	}
	wbuf_i32(w, ncalls);
	for (int i = 0; i < ncalls; i++)
		wbuf_u16(w, calls[i]);
	if (!w->oom) {
		store_lock(&g_agent.store);
		store_append_locked(&g_agent.store, JS_REC_METHOD, 0, 0, w->data, w->len);
		store_unlock(&g_agent.store);
	}
	deallocate(jvmti, name);
	deallocate(jvmti, sig);
	deallocate(jvmti, lines);
}

size_t resolve_pending_methods(jvmtiEnv *jvmti, size_t max)
{
	struct pending_method *pending;
	size_t n, left;
	struct wbuf w;

	store_take_pending(&g_agent.store, max, &pending, &n, &left);
	if (n) {
		wbuf_init(&w);
		for (size_t i = 0; i < n; i++)
			resolve_one(jvmti, &pending[i], &w);
		wbuf_free(&w);
	}
	free(pending);
	return left;
}
