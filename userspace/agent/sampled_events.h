/* SPDX-License-Identifier: GPL-2.0-only */
/* Allocation and lock-contention samples, taken by JVMTI events on the
 * application's own threads: SampledObjectAlloc (JDK 11+, HotSpot's
 * TLAB sampling at a mean interval of bytes), the contended monitor
 * events and the Unsafe.park hook (park_hook.h), each with its stack as
 * method ids and bcis. jsampled turns them on and off (CONFIG); events
 * wait in a bounded buffer until the agent thread turns them into one
 * EVENTS record per fetch (agent_protocol.h). */
#ifndef JSAGENT_SAMPLED_EVENTS_H
#define JSAGENT_SAMPLED_EVENTS_H

#include <jvmti.h>
#include <stdint.h>

struct agent_store;

/* Asks for the capabilities the events need and sets their callbacks
 * into cb (before SetEventCallbacks); the events stay off. A capability
 * the JVM refuses leaves its kind off for good, with a log line. */
void sampled_events_setup(jvmtiEnv *jvmti, jvmtiEventCallbacks *cb);
/* Agent thread: what jsampled asked for (0: off). */
void sampled_events_configure(jvmtiEnv *jvmti, JNIEnv *jni, uint64_t alloc_interval, uint64_t lock_interval);
/* Fail closed: the events off. */
void sampled_events_stop(jvmtiEnv *jvmti);
/* Records one event of the current thread: its stack (from GetStackTrace),
 * what it weighed and the class concerned (0 unknown). Application
 * threads, from the event callbacks and park_hook.c. */
void sampled_events_record(jvmtiEnv *jvmti, uint8_t kind, uint64_t value, uint32_t class_id);
/* Agent thread: appends the buffered events as one EVENTS record (none if
 * there are none and no drop is new). */
void sampled_events_flush(struct agent_store *s);
/* Bytes of records appended by flushes since the last call: compaction
 * drops them once fetched (daemon_link.c). */
uint64_t sampled_events_take_flushed_bytes(void);

#endif
