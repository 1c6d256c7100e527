/* SPDX-License-Identifier: GPL-2.0-only */
/* Global state of the in-JVM agent (libjsagent.so). One instance per JVM:
 * loading the agent twice (-agentpath plus a later jcmd attach) reuses it. */
#ifndef JSAGENT_AGENT_H
#define JSAGENT_AGENT_H

#include <jvmti.h>
#include <stdatomic.h>
#include <stdint.h>

#include "agent_store.h"
#include "sampled_events.h"
#include "hotspot_layout.h"
#include "vmstructs.h"

struct agent {
	JavaVM *vm;
	jvmtiEnv *jvmti;
	struct vmstructs *vs;
	struct hs_layout layout;
	struct agent_store store;
	char socket_path[108];
	int verbose;
	int late_attach;
	uint64_t start_time_ns;
	char vm_name[64];
	char vm_version[64];
	int wake_fd; /* eventfd: wakes the agent thread for shutdown */
	int done_fd; /* eventfd: the agent thread said goodbye (or has no link) */
	int has_constant_pool; /* can_get_constant_pool: call targets are reported */
	int tracks_unloading;  /* class mirrors tagged, ObjectFree on: unloads are reported */
	atomic_int disabled;      /* fail-closed switch: callbacks return at once */
	atomic_int shutting_down; /* VMDeath seen */
	atomic_int thread_started;
};

extern struct agent g_agent;

uint64_t agent_now_ns(void);
void agent_log(int verbose_only, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Turns the agent off for good (fail closed): events off, thread exits. */
void agent_disable(const char *why);

/* code_events.c */
void JNICALL on_compiled_method_load(jvmtiEnv *jvmti, jmethodID method, jint code_size,
				     const void *code_addr, jint map_length,
				     const jvmtiAddrLocationMap *map, const void *compile_info);
void JNICALL on_compiled_method_unload(jvmtiEnv *jvmti, jmethodID method, const void *code_addr);
void JNICALL on_dynamic_code_generated(jvmtiEnv *jvmti, const char *name, const void *address,
				       jint length);
void record_vm_layout(void);
/* While on, code events of this thread are stamped "live since before the agent". */
void code_events_replaying_past(int on);
void record_interpreter_entries(void);

/* class_events.c */
void JNICALL on_class_prepare(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jclass klass);
void register_loaded_classes(jvmtiEnv *jvmti, JNIEnv *jni);
/* The class id of a class met outside ClassPrepare (an array class, an
 * allocated object's): registered now if its mirror has no tag. 0 if it
 * cannot be. */
uint32_t class_events_register(jvmtiEnv *jvmti, JNIEnv *jni, jclass klass);
/* ObjectFree: a tagged class mirror was freed, so its class was unloaded. */
void JNICALL on_object_free(jvmtiEnv *jvmti, jlong tag);
/* Turns the classes unloaded since the last call into CLASS_UNLOAD records
 * (agent thread). */
void report_unloaded_classes(JNIEnv *jni);
/* Resolves names, signatures and line tables of newly seen methods, at
 * most max of them (agent thread only: calls into JVMTI without holding the
 * store lock). Returns how many are still pending. */
size_t resolve_pending_methods(jvmtiEnv *jvmti, JNIEnv *jni, size_t max);

/* thread_events.c */
void JNICALL on_thread_start(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread);
void JNICALL on_thread_end(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread);
/* Records the threads that exist already (at VMInit or a late attach). */
void register_existing_threads(void);
/* Measures where libjvm keeps the current Thread* (call on a Java thread). */
void measure_thread_tls(JNIEnv *jni);

/* daemon_link.c */
void JNICALL agent_thread_main(jvmtiEnv *jvmti, JNIEnv *jni, void *arg);

#endif
