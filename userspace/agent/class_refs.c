/* SPDX-License-Identifier: GPL-2.0-only */
#include "class_refs.h"

#include <pthread.h>

#include "userspace/common/u64_map.h"

/* class id -> jweak. ClassPrepare adds on application threads while the
 * agent thread reads and forgets: one lock, never held around a JNI call. */
static pthread_mutex_t refs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct u64_map refs = {0};

int class_refs_add(JNIEnv *jni, uint32_t class_id, jclass klass)
{
	jweak w;
	int rc;

	if (!jni || !klass || !class_id)
		return -1;
	w = (*jni)->NewWeakGlobalRef(jni, klass);
	if (!w)
		return -1;
	pthread_mutex_lock(&refs_lock);
	rc = u64_map_get(&refs, class_id) ? -1 : u64_map_put(&refs, class_id, (uint64_t)(uintptr_t)w);
	pthread_mutex_unlock(&refs_lock);
	if (rc != 0)
		(*jni)->DeleteWeakGlobalRef(jni, w);
	return rc;
}

enum class_hold class_refs_hold(JNIEnv *jni, uint32_t class_id, jclass *out)
{
	uint64_t *v;
	jweak w = NULL;

	*out = NULL;
	if (!jni || !class_id)
		return CLASS_UNKNOWN;
	/* Forgetting happens on the agent thread, the only caller: w stays
	 * valid after the lock is dropped. */
	pthread_mutex_lock(&refs_lock);
	v = u64_map_get(&refs, class_id);
	if (v)
		w = (jweak)(uintptr_t)*v;
	pthread_mutex_unlock(&refs_lock);
	if (!w)
		return CLASS_UNKNOWN;
	*out = (*jni)->NewLocalRef(jni, w);
	return *out ? CLASS_HELD : CLASS_GONE;
}

jclass class_refs_hold_declaring(jvmtiEnv *jvmti, JNIEnv *jni, jmethodID m)
{
	jclass k = NULL, again = NULL, held = NULL;
	jweak w;

	if (!jni || (*jvmti)->GetMethodDeclaringClass(jvmti, m, &k) != JVMTI_ERROR_NONE || !k)
		return NULL;
	w = (*jni)->NewWeakGlobalRef(jni, k);
	(*jni)->DeleteLocalRef(jni, k);
	if (w) {
		held = (*jni)->NewLocalRef(jni, w);
		(*jni)->DeleteWeakGlobalRef(jni, w);
	}
	if (!held)
		return NULL;
	/* Unloaded before it was held (between the calls above): the method
	 * no longer resolves, or to another class. From here it stays. */
	if ((*jvmti)->GetMethodDeclaringClass(jvmti, m, &again) != JVMTI_ERROR_NONE || !again ||
	    !(*jni)->IsSameObject(jni, again, held)) {
		(*jni)->DeleteLocalRef(jni, held);
		held = NULL;
	}
	if (again)
		(*jni)->DeleteLocalRef(jni, again);
	return held;
}

void class_refs_forget(JNIEnv *jni, const uint32_t *class_ids, size_t n)
{
	for (size_t i = 0; jni && i < n; i++) {
		jweak w = NULL;

		pthread_mutex_lock(&refs_lock);
		uint64_t *v = u64_map_get(&refs, class_ids[i]);
		if (v) {
			w = (jweak)(uintptr_t)*v;
			u64_map_del(&refs, class_ids[i]);
		}
		pthread_mutex_unlock(&refs_lock);
		if (w)
			(*jni)->DeleteWeakGlobalRef(jni, w);
	}
}
