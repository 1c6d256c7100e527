/* SPDX-License-Identifier: GPL-2.0-only */
/* Classes and methods -> CLASS / METHOD records.
 *
 * ClassPrepare runs on application threads, so it only does what must happen
 * while the jclass is at hand: list the class's jmethodIDs (this also makes
 * HotSpot allocate them, so interpreted frames of any method can be named)
 * and its signature and source file. Names, signatures, line tables and the
 * Method* of each method are resolved later on the agent's own thread. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "userspace/common/agent_protocol.h"
#include "agent.h"
#include "bytecode_calls.h"
#include "class_refs.h"
#include "constant_pool.h"
#include "safe_read.h"

/* Invoke instructions listed per method; a method with more is not checked. */
#define MAX_CALLS 1024

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

/* Class ids whose mirrors JVMTI freed (the classes were unloaded), waiting
 * for the agent thread to report them. ObjectFree may come on any thread,
 * also one inside SetTag: this lock is never held around anything else. */
static pthread_mutex_t unloaded_lock = PTHREAD_MUTEX_INITIALIZER;
static VEC(uint32_t) unloaded;
static atomic_int warned_unloading;

/* Once: a class whose unloading goes unreported keeps its records. */
static void warn_unloading(const char *why)
{
	if (!atomic_exchange(&warned_unloading, 1))
		agent_log(0, "%s: some unloaded classes stay known to jsampled", why);
}

void JNICALL on_object_free(jvmtiEnv *jvmti, jlong tag)
{
	(void)jvmti;
	if (tag <= 0 || tag > UINT32_MAX || atomic_load(&g_agent.disabled))
		return;
	pthread_mutex_lock(&unloaded_lock);
	int lost = vec_push(&unloaded, (uint32_t)tag) != 0;
	pthread_mutex_unlock(&unloaded_lock);
	if (lost)
		warn_unloading("out of memory");
}

/* Reporting scans the agent's log and method map, so unloads that trickle
 * in are gathered for this long (bursts after a GC go at once). */
#define UNLOAD_REPORT_NS (100u * 1000000u)
#define UNLOAD_REPORT_BURST 4096

void report_unloaded_classes(JNIEnv *jni)
{
	static uint64_t last_ns; /* agent thread only */
	uint64_t now = agent_now_ns();
	uint32_t *ids;
	size_t n;

	pthread_mutex_lock(&unloaded_lock);
	if (!unloaded.n || (unloaded.n < UNLOAD_REPORT_BURST && now < last_ns + UNLOAD_REPORT_NS)) {
		pthread_mutex_unlock(&unloaded_lock);
		return;
	}
	last_ns = now;
	ids = unloaded.v;
	n = unloaded.n;
	unloaded.v = NULL;
	unloaded.n = unloaded.cap = 0;
	pthread_mutex_unlock(&unloaded_lock);
	if (n) {
		store_lock(&g_agent.store);
		store_classes_unloaded_locked(&g_agent.store, ids, n, now);
		store_unlock(&g_agent.store);
		class_refs_forget(jni, ids, n);
	}
	free(ids);
}

/* Registers a class and its methods unless it was seen before (its mirror
 * is tagged; without tags, its first method is known), and keeps a weak
 * reference to it for the agent thread. force: register a class without
 * methods too, and return a known class's id. Returns its class id or 0. */
static uint32_t register_class(jvmtiEnv *jvmti, JNIEnv *jni, jclass klass, int force)
{
	jint n = 0;
	jmethodID *methods = NULL;
	char *sig = NULL, *src = NULL;
	uint32_t class_id = 0;
	struct wbuf w;

	if (g_agent.tracks_unloading) {
		jlong tag = 0;
		/* Tagged: registered before, under the tag's id. */
		if ((*jvmti)->GetTag(jvmti, klass, &tag) == JVMTI_ERROR_NONE && tag > 0)
			return force ? (uint32_t)tag : 0;
	}
	if ((*jvmti)->GetClassMethods(jvmti, klass, &n, &methods) != JVMTI_ERROR_NONE)
		return 0; /* not prepared yet: ClassPrepare will come */
	if (n == 0 && !force) {
		deallocate(jvmti, methods);
		return 0;
	}
	if (n > 0 && !force && !g_agent.tracks_unloading) {
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
	if (!w.oom && store_append_locked(&g_agent.store, JS_REC_CLASS, class_id, 0, w.data, w.len)) {
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
				store_append_locked(&g_agent.store, JS_REC_METHOD_REF, class_id, 0, w.data, w.len);
		}
	} else {
		class_id = 0;
	}
	store_unlock(&g_agent.store);
	if (class_id)
		class_refs_add(jni, class_id, klass);
	/* The mirror's tag is its class id: when the class is unloaded, the
	 * mirror is freed and ObjectFree hands the id back. Set outside the
	 * store lock (JVMTI may post ObjectFree on this thread). */
	if (class_id && g_agent.tracks_unloading && (*jvmti)->SetTag(jvmti, klass, (jlong)class_id) != JVMTI_ERROR_NONE)
		warn_unloading("cannot tag a class");
	wbuf_free(&w);
	deallocate(jvmti, methods);
	deallocate(jvmti, sig);
	deallocate(jvmti, src);
	return class_id;
}

uint32_t class_events_register(jvmtiEnv *jvmti, JNIEnv *jni, jclass klass)
{
	return register_class(jvmti, jni, klass, 1);
}

void JNICALL on_class_prepare(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jclass klass)
{
	(void)thread;
	if (atomic_load(&g_agent.disabled))
		return;
	register_class(jvmti, jni, klass, 0);
}

void register_loaded_classes(jvmtiEnv *jvmti, JNIEnv *jni)
{
	jint n = 0;
	jclass *classes = NULL;

	if ((*jvmti)->GetLoadedClasses(jvmti, &n, &classes) != JVMTI_ERROR_NONE)
		return;
	for (jint i = 0; i < n; i++)
		register_class(jvmti, jni, classes[i], 0);
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

/* The constant pool of the class whose methods are being resolved (they
 * come class by class): fetched once per class and resolve run. */
struct cp_cache {
	uint32_t class_id;
	int have;
	unsigned char *bytes;
	struct constant_pool cp;
};

static void cp_cache_drop(jvmtiEnv *jvmti, struct cp_cache *c)
{
	constant_pool_free(&c->cp);
	deallocate(jvmti, c->bytes);
	memset(c, 0, sizeof(*c));
}

/* The cache holds raw bytes, not references: it may outlive a local
 * frame; dropped when the next method is of another class. */
static void cp_cache_keep_or_drop(jvmtiEnv *jvmti, struct cp_cache *c, uint32_t next_class_id)
{
	if (c->class_id && c->class_id != next_class_id)
		cp_cache_drop(jvmti, c);
}

/* k: the class, held (class_refs.h) */
static const struct constant_pool *class_constant_pool(jvmtiEnv *jvmti, struct cp_cache *c, uint32_t class_id,
							jclass k)
{
	jint count = 0, len = 0;

	if (!g_agent.has_constant_pool || !class_id || !k)
		return NULL;
	if (c->class_id == class_id)
		return c->have ? &c->cp : NULL;
	cp_cache_drop(jvmti, c);
	c->class_id = class_id;
	if ((*jvmti)->GetConstantPool(jvmti, k, &count, &len, &c->bytes) != JVMTI_ERROR_NONE || !c->bytes)
		return NULL;
	c->have = constant_pool_parse(&c->cp, (uint32_t)count, c->bytes, (size_t)len) == 0;
	return c->have ? &c->cp : NULL;
}

/* Holds the class of a pending method for the calls that follow (in the
 * caller's local frame), registering it if no class is known yet. Returns
 * -1 if the class was unloaded: the method is not resolved, its records
 * end with the class. */
static int hold_method_class(jvmtiEnv *jvmti, JNIEnv *jni, const struct pending_method *p, uint32_t *class_id,
			     jclass *k)
{
	jmethodID m = (jmethodID)(uintptr_t)p->handle;

	*class_id = p->class_id;
	if (!*class_id) {
		/* Queued before its class was registered (a code event came
		 * first): the class may be known by now. */
		store_lock(&g_agent.store);
		*class_id = store_method_class_locked(&g_agent.store, p->handle);
		store_unlock(&g_agent.store);
	}
	switch (class_refs_hold(jni, *class_id, k)) {
	case CLASS_HELD:
		return 0;
	case CLASS_GONE:
		return -1;
	case CLASS_UNKNOWN:
		break;
	}
	*k = class_refs_hold_declaring(jvmti, jni, m);
	if (!*k)
		return jni ? -1 : 0; /* without JNI nothing can be held: names only */
	if (!*class_id)
		*class_id = register_class(jvmti, jni, *k, 1);
	return 0;
}

static void resolve_one(jvmtiEnv *jvmti, JNIEnv *jni, struct cp_cache *cpc, const struct pending_method *p,
			struct wbuf *w)
{
	jmethodID m = (jmethodID)(uintptr_t)p->handle;
	char *name = NULL, *sig = NULL;
	jint modifiers = 0, nlines = 0;
	jvmtiLineNumberEntry *lines = NULL;
	uint32_t class_id = 0;
	jclass k = NULL;
	uint64_t method, const_method = 0;
	uint32_t code_size = 0;

	if (hold_method_class(jvmti, jni, p, &class_id, &k) != 0)
		return; /* unloaded meanwhile */
	method = method_pointer(p->handle);
	if ((*jvmti)->GetMethodName(jvmti, m, &name, &sig, NULL) != JVMTI_ERROR_NONE)
		return; /* unloaded meanwhile */
	(*jvmti)->GetMethodModifiers(jvmti, m, &modifiers);
	if ((*jvmti)->GetLineNumberTable(jvmti, m, &nlines, &lines) != JVMTI_ERROR_NONE) {
		nlines = 0;
		lines = NULL;
	}
	if (method && hs_method_bytecode(&g_agent.layout, method, &const_method, &code_size) != 0) {
		const_method = 0;
		code_size = 0;
	}
	/* Call sites and what they call, for jsampled's check of decoded
	 * traces. */
	unsigned char *bytes = NULL;
	jint nbytes = 0;
	static struct bytecode_call calls[MAX_CALLS]; /* the agent thread's alone */
	int ncalls = -1;
	const struct constant_pool *cp = NULL;
	if (!(modifiers & (JVM_ACC_NATIVE | JVM_ACC_ABSTRACT)) &&
	    (*jvmti)->GetBytecodes(jvmti, m, &nbytes, &bytes) == JVMTI_ERROR_NONE && bytes) {
		ncalls = bytecode_calls(bytes, (size_t)nbytes, calls, MAX_CALLS);
		if (ncalls > MAX_CALLS)
			ncalls = -1; /* too many to list: jsampled will not check this method */
		deallocate(jvmti, bytes);
		if (ncalls > 0)
			cp = class_constant_pool(jvmti, cpc, class_id, k);
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
		wbuf_u16(w, calls[i].bci);
	/* Appended (older jsampled stop reading before): the method's own
	 * name hash, and what each call site calls (0: not known statically). */
	wbuf_u32(w, method_name_hash(name, strlen(name), sig, strlen(sig)));
	wbuf_u32(w, cp ? (uint32_t)ncalls : 0);
	for (int i = 0; cp && i < ncalls; i++)
		wbuf_u32(w, constant_pool_call_target(cp, calls[i].cp_index, calls[i].opcode));
	if (!w->oom) {
		store_lock(&g_agent.store);
		store_append_locked(&g_agent.store, JS_REC_METHOD, class_id, 0, w->data, w->len);
		store_unlock(&g_agent.store);
	}
	deallocate(jvmti, name);
	deallocate(jvmti, sig);
	deallocate(jvmti, lines);
}

size_t resolve_pending_methods(jvmtiEnv *jvmti, JNIEnv *jni, size_t max)
{
	struct pending_method *pending;
	struct cp_cache cpc = {0};
	size_t n, left;
	struct wbuf w;

	store_take_pending(&g_agent.store, max, &pending, &n, &left);
	if (n) {
		wbuf_init(&w);
		for (size_t i = 0; i < n; i++) {
			/* The agent thread never returns to Java: the class
			 * references JVMTI hands out here must be freed here. */
			if (jni && (*jni)->PushLocalFrame(jni, 16) != JNI_OK)
				break;
			resolve_one(jvmti, jni, &cpc, &pending[i], &w);
			if (jni)
				(*jni)->PopLocalFrame(jni, NULL);
			cp_cache_keep_or_drop(jvmti, &cpc, i + 1 < n ? pending[i + 1].class_id : 0);
		}
		cp_cache_drop(jvmti, &cpc);
		wbuf_free(&w);
	}
	free(pending);
	return left;
}
