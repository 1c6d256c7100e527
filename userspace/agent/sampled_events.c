/* SPDX-License-Identifier: GPL-2.0-only */
/* Sampled allocations and lock waits -> EVENTS records (agent_protocol.h).
 *
 * The callbacks run on application threads inside the allocation or the
 * monitor slow path, so each does a bounded amount of work: one
 * GetStackTrace of at most EVENT_DEPTH frames into a buffer on its
 * own stack, the method ids of those frames under the store lock, and one
 * append under the events lock. Past the rate cap or the buffer's size an
 * event is dropped and counted, never waited for. */
#include "sampled_events.h"

#include <pthread.h>
#include <stdint.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "userspace/common/agent_protocol.h"
#include "agent.h"
#include "lock_sampling.h"
#include "park_hook.h"

/* Bytes of events waiting for the agent thread; more are dropped. The
 * agent thread empties the buffer on every fetch (about once a second). */
#define EVENTS_MAX_PENDING (4u << 20)
/* Events kept per second and process: a program that allocates 5 GB/s
 * at the default interval makes ~10,000. */
#define EVENTS_PER_SECOND 20000u
/* Frames an event keeps (JS_MAX_EVENT_DEPTH at most): its buffers live on
 * the stack of a thread in the middle of an allocation, ~8 KiB of it,
 * well inside the shadow pages HotSpot keeps free for VM code. */
#define EVENT_DEPTH 512

static int alloc_cap, monitor_cap; /* the JVM granted the capability */
static int warned_alloc, warned_park;
/* What is on now (0: off), as the EVENTS records report it. */
static atomic_uint_fast64_t alloc_interval_now, lock_interval_now;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct wbuf pending; /* the events, back to back, as in the record */
static uint32_t pending_count;
static uint64_t dropped_full, dropped_stack, reported_drops = UINT64_MAX;
static uint64_t flushed_bytes;
static atomic_uint_fast64_t dropped_rate;
static atomic_uint_fast64_t rate_second, rate_count;

static int rate_allows(uint64_t now)
{
	uint64_t second = now / 1000000000u;

	if (atomic_load(&rate_second) != second) {
		atomic_store(&rate_second, second);
		atomic_store(&rate_count, 0);
	}
	if (atomic_fetch_add(&rate_count, 1) < EVENTS_PER_SECOND)
		return 1;
	atomic_fetch_add(&dropped_rate, 1);
	return 0;
}

/* The class id of a class mirror: its tag, else it is registered now (an
 * array class has no ClassPrepare). 0 without tags. */
static uint32_t class_of(jvmtiEnv *jvmti, JNIEnv *jni, jclass klass)
{
	jlong tag = 0;

	if (!klass || !g_agent.tracks_unloading)
		return 0;
	if ((*jvmti)->GetTag(jvmti, klass, &tag) == JVMTI_ERROR_NONE && tag > 0)
		return (uint32_t)tag;
	return class_events_register(jvmti, jni, klass);
}

/* The current thread's frames, leaf first, with their bcis; their number,
 * 0 if none. */
static jint stack_of(jvmtiEnv *jvmti, jvmtiFrameInfo *frames)
{
	jint depth = 0;

	if ((*jvmti)->GetStackTrace(jvmti, NULL, 0, EVENT_DEPTH, frames, &depth) != JVMTI_ERROR_NONE)
		return 0;
	return depth > 0 ? depth : 0;
}

void sampled_events_record(jvmtiEnv *jvmti, uint8_t kind, uint64_t value, uint32_t class_id)
{
	jvmtiFrameInfo frames[EVENT_DEPTH];
	uint32_t ids[EVENT_DEPTH];
	jint depth = 0;
	uint64_t now = agent_now_ns();
	uint8_t flags = 0;

	if (atomic_load(&g_agent.disabled) || !rate_allows(now))
		return;
	if ((depth = stack_of(jvmti, frames)) <= 0) {
		pthread_mutex_lock(&lock);
		dropped_stack++;
		pthread_mutex_unlock(&lock);
		return;
	}
	if (depth == EVENT_DEPTH)
		flags |= JS_EVENT_TRUNCATED;
	store_lock(&g_agent.store);
	for (jint i = 0; i < depth; i++)
		ids[i] = frames[i].method ? store_method_id_locked(&g_agent.store, (uint64_t)(uintptr_t)frames[i].method, 0, NULL) : 0;
	store_unlock(&g_agent.store);

	pthread_mutex_lock(&lock);
	if (pending.len + 32 + (size_t)depth * 8 > EVENTS_MAX_PENDING) {
		dropped_full++;
	} else {
		wbuf_u8(&pending, kind);
		wbuf_u8(&pending, flags);
		wbuf_u16(&pending, (uint16_t)depth);
		wbuf_u32(&pending, (uint32_t)syscall(SYS_gettid));
		wbuf_u64(&pending, now);
		wbuf_u64(&pending, value);
		wbuf_u32(&pending, class_id);
		for (jint i = 0; i < depth; i++) {
			wbuf_u32(&pending, ids[i]);
			wbuf_i32(&pending, (int32_t)frames[i].location);
		}
		pending_count++;
	}
	pthread_mutex_unlock(&lock);
}

static void JNICALL on_sampled_alloc(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object, jclass klass,
				     jlong size)
{
	(void)thread;
	(void)object;
	if (atomic_load(&g_agent.disabled) || size <= 0)
		return;
	sampled_events_record(jvmti, JS_EVENT_ALLOC, (uint64_t)size, class_of(jvmti, jni, klass));
}

/* Contended monitor enters: the wait is timed from Enter to Entered. The
 * start lives in JVMTI's thread-local storage, which belongs to the
 * thread the JVM names (a virtual thread may enter on another carrier). */
static void JNICALL on_contended_enter(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object)
{
	(void)jni;
	(void)thread;
	(void)object;
	if (atomic_load(&g_agent.disabled))
		return;
	(*jvmti)->SetThreadLocalStorage(jvmti, NULL, (const void *)(uintptr_t)agent_now_ns());
}

static void JNICALL on_contended_entered(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object)
{
	void *since = NULL;
	uint64_t now = agent_now_ns(), waited;

	(void)thread;
	if ((*jvmti)->GetThreadLocalStorage(jvmti, NULL, &since) != JVMTI_ERROR_NONE || !since)
		return;
	(*jvmti)->SetThreadLocalStorage(jvmti, NULL, NULL);
	waited = now - (uint64_t)(uintptr_t)since;
	if (atomic_load(&g_agent.disabled) || (uint64_t)(uintptr_t)since > now || !lock_wait_sampled(waited))
		return;
	jclass k = object ? (*jni)->GetObjectClass(jni, object) : NULL;
	sampled_events_record(jvmti, JS_EVENT_MONITOR, waited, class_of(jvmti, jni, k));
	if (k)
		(*jni)->DeleteLocalRef(jni, k);
}

void sampled_events_setup(jvmtiEnv *jvmti, jvmtiEventCallbacks *cb)
{
	jvmtiCapabilities caps;

	wbuf_init(&pending);
	memset(&caps, 0, sizeof(caps));
	caps.can_generate_sampled_object_alloc_events = 1;
	alloc_cap = (*jvmti)->AddCapabilities(jvmti, &caps) == JVMTI_ERROR_NONE;
	memset(&caps, 0, sizeof(caps));
	caps.can_generate_monitor_events = 1;
	monitor_cap = (*jvmti)->AddCapabilities(jvmti, &caps) == JVMTI_ERROR_NONE;
	if (alloc_cap)
		cb->SampledObjectAlloc = on_sampled_alloc;
	if (monitor_cap) {
		cb->MonitorContendedEnter = on_contended_enter;
		cb->MonitorContendedEntered = on_contended_entered;
	}
}

static int set_event(jvmtiEnv *jvmti, jvmtiEvent ev, int on)
{
	return (*jvmti)->SetEventNotificationMode(jvmti, on ? JVMTI_ENABLE : JVMTI_DISABLE, ev, NULL) ==
			       JVMTI_ERROR_NONE
		       ? 0
		       : -1;
}

void sampled_events_configure(jvmtiEnv *jvmti, JNIEnv *jni, uint64_t alloc_interval, uint64_t lock_interval)
{
	uint64_t alloc = 0, lock = 0;

	if (atomic_load(&g_agent.disabled))
		return;
	if (alloc_interval > INT32_MAX)
		alloc_interval = INT32_MAX;
	if (alloc_interval && !alloc_cap && !warned_alloc) {
		agent_log(0, "this JVM has no sampled allocation events: no allocation profile");
		warned_alloc = 1;
	}
	if (alloc_cap) {
		if (alloc_interval &&
		    ((*jvmti)->SetHeapSamplingInterval(jvmti, (jint)alloc_interval) != JVMTI_ERROR_NONE ||
		     set_event(jvmti, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, 1) != 0))
			agent_log(0, "cannot enable sampled allocation events");
		else if (alloc_interval)
			alloc = alloc_interval;
		if (!alloc)
			set_event(jvmti, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, 0);
	}
	if (lock_interval && park_hook_install(jni) != 0 && !warned_park) {
		agent_log(0, "java.util.concurrent lock waits are not sampled (Unsafe.park not hooked)");
		warned_park = 1;
	}
	if (monitor_cap) {
		int on = lock_interval && set_event(jvmti, JVMTI_EVENT_MONITOR_CONTENDED_ENTER, 1) == 0 &&
			 set_event(jvmti, JVMTI_EVENT_MONITOR_CONTENDED_ENTERED, 1) == 0;
		if (!on) {
			set_event(jvmti, JVMTI_EVENT_MONITOR_CONTENDED_ENTER, 0);
			set_event(jvmti, JVMTI_EVENT_MONITOR_CONTENDED_ENTERED, 0);
		}
		if (on)
			lock = lock_interval;
	}
	if (lock_interval && park_hook_installed())
		lock = lock_interval;
	lock_sampling_init(lock);
	atomic_store(&alloc_interval_now, alloc);
	atomic_store(&lock_interval_now, lock);
}

void sampled_events_stop(jvmtiEnv *jvmti)
{
	lock_sampling_init(0);
	if (alloc_cap)
		set_event(jvmti, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, 0);
	if (monitor_cap) {
		set_event(jvmti, JVMTI_EVENT_MONITOR_CONTENDED_ENTER, 0);
		set_event(jvmti, JVMTI_EVENT_MONITOR_CONTENDED_ENTERED, 0);
	}
}

void sampled_events_flush(struct agent_store *s)
{
	struct wbuf w;
	uint64_t drops;

	wbuf_init(&w);
	pthread_mutex_lock(&lock);
	drops = dropped_full + dropped_stack + atomic_load(&dropped_rate);
	if (pending_count == 0 && drops == reported_drops) {
		pthread_mutex_unlock(&lock);
		return;
	}
	wbuf_u64(&w, atomic_load(&alloc_interval_now));
	wbuf_u64(&w, atomic_load(&lock_interval_now));
	wbuf_u64(&w, atomic_load(&dropped_rate));
	wbuf_u64(&w, dropped_full);
	wbuf_u64(&w, dropped_stack);
	wbuf_u32(&w, pending_count);
	wbuf_put(&w, pending.data, pending.len);
	if (!w.oom) {
		reported_drops = drops;
		pending_count = 0;
		wbuf_reset(&pending);
		/* A burst's buffer (up to its 4 MiB cap) is not kept for later:
		 * the JVM's memory is the user's. */
		if (pending.cap > 64 * 1024) {
			wbuf_free(&pending);
			wbuf_init(&pending);
		}
	}
	pthread_mutex_unlock(&lock);
	if (!w.oom) {
		store_lock(s);
		if (store_append_locked(s, JS_REC_EVENTS, 0, 1, w.data, w.len)) {
			s->dead++;
			flushed_bytes += w.len;
		}
		store_unlock(s);
	}
	wbuf_free(&w);
}

uint64_t sampled_events_take_flushed_bytes(void)
{
	uint64_t b;

	store_lock(&g_agent.store);
	b = flushed_bytes;
	flushed_bytes = 0;
	store_unlock(&g_agent.store);
	return b;
}
