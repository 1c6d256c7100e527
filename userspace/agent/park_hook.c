/* SPDX-License-Identifier: GPL-2.0-only */
#include "park_hook.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <string.h>

#include "userspace/common/agent_protocol.h"
#include "agent.h"
#include "libc_baseline.h"
#include "lock_sampling.h"
#include "safe_read.h"
#include "sampled_events.h"
#include "park_binder_class.h" /* park_binder_class[], from java/jsampled/ParkBinder.java */

typedef void(JNICALL *park_fn)(JNIEnv *, jobject, jboolean, jlong);

static park_fn jvm_park;
static atomic_int installed;
static jfieldID blocker_field;
static jclass aqs, aqls; /* global refs */

static void JNICALL park_hook(JNIEnv *jni, jobject unsafe, jboolean absolute, jlong time)
{
	uint64_t t0, waited;
	jthread self = NULL;
	jobject blocker;

	if (!lock_sampling_on()) {
		jvm_park(jni, unsafe, absolute, time);
		return;
	}
	t0 = agent_now_ns();
	jvm_park(jni, unsafe, absolute, time);
	waited = agent_now_ns() - t0;
	if (atomic_load(&g_agent.disabled) || !lock_wait_sampled(waited))
		return;
	if ((*g_agent.jvmti)->GetCurrentThread(g_agent.jvmti, &self) != JVMTI_ERROR_NONE || !self)
		return;
	blocker = (*jni)->GetObjectField(jni, self, blocker_field);
	if (blocker && ((*jni)->IsInstanceOf(jni, blocker, aqs) || (*jni)->IsInstanceOf(jni, blocker, aqls))) {
		jclass k = (*jni)->GetObjectClass(jni, blocker);
		jlong tag = 0;

		if (k && g_agent.tracks_unloading &&
		    (*g_agent.jvmti)->GetTag(g_agent.jvmti, k, &tag) == JVMTI_ERROR_NONE && tag <= 0)
			tag = class_events_register(g_agent.jvmti, jni, k);
		sampled_events_record(g_agent.jvmti, JS_EVENT_PARK, waited, tag > 0 ? (uint32_t)tag : 0);
		if (k)
			(*jni)->DeleteLocalRef(jni, k);
	}
	if (blocker)
		(*jni)->DeleteLocalRef(jni, blocker);
	(*jni)->DeleteLocalRef(jni, self);
}

static jclass unsafe_class; /* global ref, for bind0 */

/* ParkBinder.bind0: runs with a boot-loader Java caller, so HotSpot
 * accepts the rebinding of a JDK method without a warning. */
static void JNICALL binder_bind0(JNIEnv *jni, jclass cls, jlong entry)
{
	JNINativeMethod bind = {.name = "park", .signature = "(ZJ)V", .fnPtr = (void *)(uintptr_t)entry};

	(void)cls;
	if ((*jni)->RegisterNatives(jni, unsafe_class, &bind, 1) == 0)
		atomic_store(&installed, 1);
}

/* Defines ParkBinder in the boot loader (or finds it, defined by an
 * earlier load) and binds its native method. NULL on failure. */
static jclass park_binder(JNIEnv *jni)
{
	JNINativeMethod bind0 = {.name = "bind0", .signature = "(J)V", .fnPtr = (void *)binder_bind0};
	jclass k = (*jni)->DefineClass(jni, "jsampled/ParkBinder", NULL, (const jbyte *)park_binder_class,
				       (jsize)sizeof(park_binder_class));

	if (!k) {
		(*jni)->ExceptionClear(jni);
		k = (*jni)->FindClass(jni, "jsampled/ParkBinder");
		(*jni)->ExceptionClear(jni);
	}
	if (k && (*jni)->RegisterNatives(jni, k, &bind0, 1) != 0) {
		(*jni)->ExceptionClear(jni);
		(*jni)->DeleteLocalRef(jni, k);
		return NULL;
	}
	return k;
}

static jclass global_class(JNIEnv *jni, const char *name)
{
	jclass k = (*jni)->FindClass(jni, name), g = NULL;

	if (k) {
		g = (*jni)->NewGlobalRef(jni, k);
		(*jni)->DeleteLocalRef(jni, k);
	}
	(*jni)->ExceptionClear(jni);
	return g;
}

/* HotSpot keeps a native method's function in the word right after its
 * Method (Method::native_function_addr); the jmethodID points to the
 * Method*. Trusted only if it lies in libjvm. */
static park_fn current_park(jmethodID park)
{
	long method_size = vmstructs_type_size(g_agent.vs, "Method");
	uint64_t method, fn;
	Dl_info info;

	if (method_size <= 0 || safe_read_u64((uint64_t)(uintptr_t)park, &method) != 0 || method < 4096 ||
	    safe_read_u64(method + (uint64_t)method_size, &fn) != 0 || !fn)
		return NULL;
	if (!dladdr((void *)(uintptr_t)fn, &info) || !info.dli_fname || !strstr(info.dli_fname, "/libjvm.so"))
		return NULL;
	return (park_fn)(uintptr_t)fn;
}

int park_hook_install(JNIEnv *jni)
{
	jclass unsafe, thread, binder = NULL;
	jmethodID park, bind;
	int rc = -1;

	static int tried;

	if (atomic_load(&installed))
		return 0;
	if (tried++)
		return -1; /* found wanting once: the JVM will not change */
	unsafe = global_class(jni, "jdk/internal/misc/Unsafe");
	thread = global_class(jni, "java/lang/Thread");
	aqs = global_class(jni, "java/util/concurrent/locks/AbstractQueuedSynchronizer");
	aqls = global_class(jni, "java/util/concurrent/locks/AbstractQueuedLongSynchronizer");
	if (!unsafe || !thread || !aqs || !aqls)
		goto cleanup;
	park = (*jni)->GetMethodID(jni, unsafe, "park", "(ZJ)V");
	blocker_field = (*jni)->GetFieldID(jni, thread, "parkBlocker", "Ljava/lang/Object;");
	(*jni)->ExceptionClear(jni);
	if (!park || !blocker_field || !(jvm_park = current_park(park)))
		goto cleanup;
	binder = park_binder(jni);
	bind = binder ? (*jni)->GetStaticMethodID(jni, binder, "bind", "(J)V") : NULL;
	if (!bind)
		goto cleanup;
	unsafe_class = unsafe;
	(*jni)->CallStaticVoidMethod(jni, binder, bind, (jlong)(uintptr_t)park_hook);
	(*jni)->ExceptionClear(jni);
	unsafe_class = NULL;
	rc = atomic_load(&installed) ? 0 : -1;
cleanup:
	(*jni)->ExceptionClear(jni);
	if (binder)
		(*jni)->DeleteLocalRef(jni, binder);
	if (unsafe)
		(*jni)->DeleteGlobalRef(jni, unsafe);
	if (thread)
		(*jni)->DeleteGlobalRef(jni, thread);
	return rc;
}

int park_hook_installed(void)
{
	return atomic_load(&installed);
}
