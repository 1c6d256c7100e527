/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * libjsagent.so: the JVMTI agent jsampled relies on to decode stack samples.
 *
 * Works when given with -agentpath at JVM start and when loaded later with
 * `jcmd <pid> JVMTI.agent_load <path> [options]` (then existing code is
 * replayed with GenerateEvents). Options are comma separated and use ':'
 * rather than '=' because jcmd splits its arguments on '=':
 *   socket:PATH   jsampled's agent socket (default /run/jsampled/agent.sock,
 *                 or $JSAMPLED_AGENT_SOCKET)
 *   verbose       log progress to stderr
 *   perfmap       also write /tmp/perf-<pid>.map for Linux perf
 *
 * The agent must never crash or stall the JVM: callbacks only copy and append
 * under a short lock, every read of VM internals is fault tolerant, and any
 * failure turns the agent off (fail closed) instead of aborting the JVM.
 */
#include "agent.h"
#include "perf_map.h"

#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "userspace/common/agent_protocol.h"

struct agent g_agent = {.wake_fd = -1, .done_fd = -1};
static atomic_int loaded;

uint64_t agent_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts); /* the clock of bpf_ktime_get_ns() */
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void agent_log(int verbose_only, const char *fmt, ...)
{
	va_list ap;
	char line[512];

	if (verbose_only && !g_agent.verbose)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "[jsampled agent %d] %s\n", (int)getpid(), line);
}

static const jvmtiEvent code_events[] = {
	JVMTI_EVENT_COMPILED_METHOD_LOAD,
	JVMTI_EVENT_COMPILED_METHOD_UNLOAD,
	JVMTI_EVENT_DYNAMIC_CODE_GENERATED,
	JVMTI_EVENT_CLASS_PREPARE,
	JVMTI_EVENT_THREAD_START,
	JVMTI_EVENT_THREAD_END,
};

void agent_disable(const char *why)
{
	if (atomic_exchange(&g_agent.disabled, 1))
		return;
	agent_log(0, "disabled: %s", why);
	if (g_agent.jvmti)
		for (size_t i = 0; i < sizeof(code_events) / sizeof(code_events[0]); i++)
			(*g_agent.jvmti)->SetEventNotificationMode(g_agent.jvmti, JVMTI_DISABLE,
								   code_events[i], NULL);
	if (g_agent.jvmti && g_agent.tracks_unloading)
		(*g_agent.jvmti)->SetEventNotificationMode(g_agent.jvmti, JVMTI_DISABLE, JVMTI_EVENT_OBJECT_FREE, NULL);
	if (g_agent.jvmti)
		sampled_events_stop(g_agent.jvmti);
	if (g_agent.wake_fd >= 0)
		eventfd_write(g_agent.wake_fd, 1);
}

static void parse_options(const char *options)
{
	const char *env = getenv(JS_AGENT_SOCKET_ENV);
	char *copy, *tok, *save = NULL;

	snprintf(g_agent.socket_path, sizeof(g_agent.socket_path), "%s",
		 env && *env ? env : JS_AGENT_DEFAULT_SOCKET);
	if (!options || !*options)
		return;
	copy = strdup(options);
	if (!copy)
		return;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (strncmp(tok, "socket:", 7) == 0)
			snprintf(g_agent.socket_path, sizeof(g_agent.socket_path), "%s", tok + 7);
		else if (strcmp(tok, "verbose") == 0)
			g_agent.verbose = 1;
		else if (strcmp(tok, "perfmap") == 0) {
			if (perf_map_open() != 0)
				agent_log(0, "cannot create /tmp/perf-%d.map", (int)getpid());
		} else
			agent_log(0, "ignoring unknown option '%s'", tok);
	}
	free(copy);
}

static void read_property(jvmtiEnv *jvmti, const char *name, char *out, size_t outlen)
{
	char *v = NULL;

	out[0] = 0;
	if ((*jvmti)->GetSystemProperty(jvmti, name, &v) == JVMTI_ERROR_NONE && v) {
		snprintf(out, outlen, "%s", v);
		(*jvmti)->Deallocate(jvmti, (unsigned char *)v);
	}
}

static int java_major(jvmtiEnv *jvmti)
{
	char v[32];

	read_property(jvmti, "java.vm.specification.version", v, sizeof(v));
	if (strncmp(v, "1.", 2) == 0)
		return atoi(v + 2);
	return atoi(v);
}

static int start_agent_thread(jvmtiEnv *jvmti, JNIEnv *jni)
{
	jclass cls;
	jmethodID ctor;
	jobject name, thread;

	if (atomic_exchange(&g_agent.thread_started, 1))
		return 0;
	cls = (*jni)->FindClass(jni, "java/lang/Thread");
	ctor = cls ? (*jni)->GetMethodID(jni, cls, "<init>", "(Ljava/lang/String;)V") : NULL;
	name = ctor ? (*jni)->NewStringUTF(jni, "jsampled-agent") : NULL;
	thread = name ? (*jni)->NewObject(jni, cls, ctor, name) : NULL;
	if (!thread) {
		(*jni)->ExceptionClear(jni);
		return -1;
	}
	if ((*jvmti)->RunAgentThread(jvmti, thread, agent_thread_main, NULL,
				     JVMTI_THREAD_NORM_PRIORITY) != JVMTI_ERROR_NONE)
		return -1;
	return 0;
}

/* The live phase has begun (VMInit, or a late attach): publish the VM
 * layout, catch up on classes loaded so far, start the agent thread. */
static void go_live(jvmtiEnv *jvmti, JNIEnv *jni)
{
	if (atomic_load(&g_agent.disabled))
		return;
	measure_thread_tls(jni);
	if (g_agent.layout.java_major >= 21)
		continuation_layout_measure(&g_agent.layout.cont, g_agent.vs, jni);
	thread_status_layout_measure(&g_agent.layout.status, g_agent.vs, jni);
	record_vm_layout();
	code_events_replaying_past(g_agent.late_attach);
	record_interpreter_entries();
	register_existing_threads();
	register_loaded_classes(jvmti, jni);
	if (g_agent.late_attach) {
		(*jvmti)->GenerateEvents(jvmti, JVMTI_EVENT_DYNAMIC_CODE_GENERATED);
		(*jvmti)->GenerateEvents(jvmti, JVMTI_EVENT_COMPILED_METHOD_LOAD);
	}
	code_events_replaying_past(0);
	if (start_agent_thread(jvmti, jni) != 0)
		agent_disable("cannot start the agent thread");
}

static void JNICALL on_vm_init(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
	(void)thread;
	go_live(jvmti, jni);
}

/* How long the exiting JVM waits for the agent thread's last batch and
 * goodbye. Without the wait the process could exit first (seen on a
 * loaded machine): jsampled then never learnt of the code compiled last,
 * and the samples held for it failed as unknown code. A few milliseconds
 * normally; the bound keeps a stuck link from delaying the exit. */
#define FAREWELL_WAIT_MS 500

static void JNICALL on_vm_death(jvmtiEnv *jvmti, JNIEnv *jni)
{
	struct pollfd done = {.fd = g_agent.done_fd, .events = POLLIN};

	(void)jvmti;
	(void)jni;
	atomic_store(&g_agent.shutting_down, 1);
	if (g_agent.wake_fd >= 0)
		eventfd_write(g_agent.wake_fd, 1);
	/* This thread is in native code here: waiting stalls no safepoint. */
	if (g_agent.done_fd >= 0 && atomic_load(&g_agent.thread_started) && !atomic_load(&g_agent.disabled))
		(void)poll(&done, 1, FAREWELL_WAIT_MS);
}

/* jsampled attaches to a starting JVM as soon as it catches SIGQUIT, which
 * can be before the live phase: until then HotSpot answers GetEnv with
 * JNI_EDETACHED (JvmtiExport::get_jvmti_interface). This runs on the attach
 * listener thread, in native state, so waiting a little here stalls
 * nothing of the application's; the start-up reaches the live phase within
 * milliseconds. */
#define LIVE_PHASE_WAIT_MS 10000

static jint get_jvmti(JavaVM *vm, jvmtiEnv **jvmti, int late)
{
	jint r = (*vm)->GetEnv(vm, (void **)jvmti, JVMTI_VERSION_1_2);

	for (int waited = 0; late && r == JNI_EDETACHED && waited < LIVE_PHASE_WAIT_MS; waited++) {
		struct timespec ms = {0, 1000000};

		nanosleep(&ms, NULL);
		r = (*vm)->GetEnv(vm, (void **)jvmti, JVMTI_VERSION_1_2);
	}
	return r;
}

static int setup(JavaVM *vm, char *options, int late)
{
	jvmtiEnv *jvmti = NULL;
	jvmtiCapabilities caps = {0};
	jvmtiEventCallbacks cb = {0};
	char err[256];

	g_agent.vm = vm;
	g_agent.late_attach = late;
	g_agent.start_time_ns = agent_now_ns();
	parse_options(options);
	if (get_jvmti(vm, &jvmti, late) != JNI_OK || !jvmti) {
		agent_log(0, "disabled: no JVMTI 1.2 environment");
		return -1;
	}
	g_agent.jvmti = jvmti;
	if (store_init(&g_agent.store) != 0) {
		agent_disable("cannot initialise the store");
		return -1;
	}
	g_agent.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	g_agent.done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	read_property(jvmti, "java.vm.name", g_agent.vm_name, sizeof(g_agent.vm_name));
	read_property(jvmti, "java.vm.version", g_agent.vm_version, sizeof(g_agent.vm_version));

	g_agent.vs = vmstructs_open(err, sizeof(err));
	if (!g_agent.vs || hs_layout_init(&g_agent.layout, g_agent.vs, java_major(jvmti), err,
					  sizeof(err)) != 0) {
		agent_disable(err);
		return -1;
	}

	caps.can_generate_compiled_method_load_events = 1;
	caps.can_get_source_file_name = 1;
	caps.can_get_line_numbers = 1;
	caps.can_get_bytecodes = 1;
	if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE) {
		agent_disable("the JVM refused the needed JVMTI capabilities");
		return -1;
	}
	/* Optional: without it, jsampled checks callers by invoke sites only. */
	memset(&caps, 0, sizeof(caps));
	caps.can_get_constant_pool = 1;
	g_agent.has_constant_pool = (*jvmti)->AddCapabilities(jvmti, &caps) == JVMTI_ERROR_NONE;
	/* Optional: without it, an unloaded class's records stay, in the
	 * agent and in jsampled, until the JVM exits. */
	memset(&caps, 0, sizeof(caps));
	caps.can_tag_objects = 1;
	caps.can_generate_object_free_events = 1;
	g_agent.tracks_unloading = (*jvmti)->AddCapabilities(jvmti, &caps) == JVMTI_ERROR_NONE;
	if (!g_agent.tracks_unloading)
		agent_log(0, "no object tags: unloaded classes will not be reported");
	sampled_events_setup(jvmti, &cb);
	cb.VMInit = on_vm_init;
	cb.VMDeath = on_vm_death;
	cb.CompiledMethodLoad = on_compiled_method_load;
	cb.CompiledMethodUnload = on_compiled_method_unload;
	cb.DynamicCodeGenerated = on_dynamic_code_generated;
	cb.ClassPrepare = on_class_prepare;
	cb.ThreadStart = on_thread_start;
	cb.ThreadEnd = on_thread_end;
	cb.ObjectFree = on_object_free;
	if ((*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof(cb)) != JVMTI_ERROR_NONE) {
		agent_disable("cannot set JVMTI callbacks");
		return -1;
	}
	(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_INIT, NULL);
	(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_DEATH, NULL);
	for (size_t i = 0; i < sizeof(code_events) / sizeof(code_events[0]); i++)
		if ((*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, code_events[i], NULL) !=
		    JVMTI_ERROR_NONE) {
			agent_disable("cannot enable JVMTI events");
			return -1;
		}
	if (g_agent.tracks_unloading &&
	    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_OBJECT_FREE, NULL) != JVMTI_ERROR_NONE)
		g_agent.tracks_unloading = 0;
	agent_log(1, "loaded (%s), jsampled socket %s", late ? "late attach" : "at start",
		  g_agent.socket_path);
	return 0;
}

/* Whatever happens, return JNI_OK: a failing agent must not stop the JVM. */
JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
	(void)reserved;
	if (atomic_exchange(&loaded, 1)) {
		agent_log(0, "already loaded; ignoring the second load");
		return JNI_OK;
	}
	setup(vm, options, 0);
	return JNI_OK;
}

JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM *vm, char *options, void *reserved)
{
	JNIEnv *jni = NULL;

	(void)reserved;
	if (atomic_exchange(&loaded, 1)) {
		agent_log(0, "already loaded; ignoring the second load");
		return JNI_OK;
	}
	if (setup(vm, options, 1) != 0)
		return JNI_OK;
	if ((*vm)->GetEnv(vm, (void **)&jni, JNI_VERSION_1_8) != JNI_OK || !jni) {
		agent_disable("no JNI environment on the attach thread");
		return JNI_OK;
	}
	go_live(g_agent.jvmti, jni);
	return JNI_OK;
}

JNIEXPORT void JNICALL Agent_OnUnload(JavaVM *vm)
{
	(void)vm;
	atomic_store(&g_agent.shutting_down, 1);
}
