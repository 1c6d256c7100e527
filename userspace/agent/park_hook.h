/* SPDX-License-Identifier: GPL-2.0-only */
/* Waits for java.util.concurrent locks: every such wait parks the thread
 * in jdk.internal.misc.Unsafe.park, a JNI method C2 does not inline. The
 * agent binds park to its own function (RegisterNatives, which makes the
 * JVM regenerate the method's native wrapper), which calls the JVM's own
 * Unsafe_Park and times it; a sampled wait whose parkBlocker is an
 * AbstractQueuedSynchronizer (ReentrantLock, ReentrantReadWriteLock, ...)
 * becomes a JS_EVENT_PARK event. */
#ifndef JSAGENT_PARK_HOOK_H
#define JSAGENT_PARK_HOOK_H

#include <jvmti.h>

/* 0 if installed; -1 (nothing changed) if the JVM's park function was
 * not found where HotSpot keeps it or is not libjvm's. */
int park_hook_install(JNIEnv *jni);
int park_hook_installed(void);

#endif
