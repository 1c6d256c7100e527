/* SPDX-License-Identifier: GPL-2.0-only */
/* Weak references to the classes the agent registered, by class id, so the
 * agent thread can hold a class while it asks JVMTI about it.
 *
 * Methods are resolved on the agent thread long after ClassPrepare, often
 * when their class is already garbage (hidden classes of scripting engines
 * and proxies live for a moment). A jclass from GetMethodDeclaringClass is
 * then not enough: HotSpot hands out the mirror without telling a running
 * concurrent mark (G1 marks what was reachable when marking began, and a
 * strong load of the mirror adds nothing to that), so the class can be
 * unloaded between that call and the next, and GetConstantPool reads freed
 * metadata. A local reference made from a weak one (NewLocalRef) does tell
 * the marker: the class stays loaded until that reference is dropped, or
 * the weak reference is already cleared and the class is known gone. */
#ifndef JSAGENT_CLASS_REFS_H
#define JSAGENT_CLASS_REFS_H

#include <jvmti.h>
#include <stdint.h>

/* Keeps a weak reference to klass under class_id (a registered class, its
 * jclass live: ClassPrepare, GetLoadedClasses, or one held by this file).
 * Returns 0, or -1 if it could not (the class is then resolved without a
 * held reference, see class_refs_hold). */
int class_refs_add(JNIEnv *jni, uint32_t class_id, jclass klass);

enum class_hold {
	CLASS_HELD,    /* *out is a local reference the caller deletes */
	CLASS_GONE,    /* the class was unloaded */
	CLASS_UNKNOWN, /* no reference kept for class_id */
};

/* A local reference to class class_id that keeps it loaded while held. */
enum class_hold class_refs_hold(JNIEnv *jni, uint32_t class_id, jclass *out);

/* For a class the agent keeps no reference to: the declaring class of m,
 * held as above, or NULL if it is gone (or cannot be held). Checks after
 * holding it that the class was still alive then. */
jclass class_refs_hold_declaring(jvmtiEnv *jvmti, JNIEnv *jni, jmethodID m);

/* These classes were unloaded: their references go (agent thread). */
void class_refs_forget(JNIEnv *jni, const uint32_t *class_ids, size_t n);

#endif
