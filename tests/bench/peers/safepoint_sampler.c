/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A safepoint-biased sampler, the baseline of the comparison benchmark: what
 * VisualVM-style samplers do. An agent thread calls GetAllStackTraces at a
 * fixed rate; HotSpot answers at a safepoint, so every RUNNABLE thread is
 * seen where it last polled for one, not where it burned the CPU.
 *
 *   java -agentpath:libspsampler.so=out=FILE,hz=N[,ctl=FILE] ...
 *
 * Writes one collapsed stack per line ("root;...;leaf 1") to out. With ctl,
 * samples only while that file exists (the benchmark's on/off phases).
 */
#include <jvmti.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_FRAMES 4096 /* the recursion workload is 2000 frames deep */
#define NAME_SLOTS (1u << 16)

static jvmtiEnv *jvmti;
static FILE *out;
static unsigned hz = 1000;
static char ctl_path[512];
static atomic_int stopping;

struct name_slot {
	jmethodID id;
	char *name;
};
static struct name_slot names[NAME_SLOTS]; /* jmethodID -> "pkg.Class.method" */

static const char *method_name(jmethodID m)
{
	uintptr_t h = ((uintptr_t)m >> 3) * 0x9E3779B97F4A7C15ull;
	char *mname = NULL, *csig = NULL, buf[512];
	jclass cls;

	for (unsigned i = 0; i < NAME_SLOTS; i++) {
		struct name_slot *s = &names[(h + i) & (NAME_SLOTS - 1)];
		if (s->id == m)
			return s->name;
		if (s->id)
			continue;
		if ((*jvmti)->GetMethodName(jvmti, m, &mname, NULL, NULL) != JVMTI_ERROR_NONE)
			return "[unknown]";
		if ((*jvmti)->GetMethodDeclaringClass(jvmti, m, &cls) == JVMTI_ERROR_NONE)
			(*jvmti)->GetClassSignature(jvmti, cls, &csig, NULL);
		/* "Lpkg/Class;" -> "pkg.Class" */
		snprintf(buf, sizeof(buf), "%.*s.%s", csig ? (int)strlen(csig) - 2 : 9, csig ? csig + 1 : "[unknown]",
			 mname);
		for (char *p = buf; *p; p++)
			if (*p == '/')
				*p = '.';
		s->id = m;
		s->name = strdup(buf);
		(*jvmti)->Deallocate(jvmti, (unsigned char *)mname);
		if (csig)
			(*jvmti)->Deallocate(jvmti, (unsigned char *)csig);
		return s->name;
	}
	return "[table full]";
}

static void JNICALL sampler_thread(jvmtiEnv *env, JNIEnv *jni, void *arg)
{
	struct timespec next;

	(void)jni;
	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!atomic_load(&stopping)) {
		jvmtiStackInfo *infos = NULL;
		jint n = 0;

		next.tv_nsec += 1000000000L / hz;
		while (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
		if (ctl_path[0] && access(ctl_path, F_OK) != 0) {
			/* Switched off: look again in 10 ms, not at the sampling rate
			 * (10,000 idle wake-ups a second would be a sampler of their own
			 * and cost the "off" state of the overhead benchmark). */
			next.tv_nsec += 10000000L;
			continue;
		}
		if ((*env)->GetAllStackTraces(env, MAX_FRAMES, &infos, &n) != JVMTI_ERROR_NONE)
			continue;
		for (jint t = 0; t < n; t++) {
			jvmtiStackInfo *si = &infos[t];
			if (!(si->state & JVMTI_THREAD_STATE_RUNNABLE) || si->frame_count == 0)
				continue;
			for (jint f = si->frame_count - 1; f >= 0; f--)
				fprintf(out, "%s%s", method_name(si->frame_buffer[f].method), f ? ";" : " 1\n");
		}
		(*env)->Deallocate(env, (unsigned char *)infos);
	}
}

static void JNICALL on_vm_init(jvmtiEnv *env, JNIEnv *jni, jthread unused)
{
	jclass tc = (*jni)->FindClass(jni, "java/lang/Thread");
	jmethodID ctor = (*jni)->GetMethodID(jni, tc, "<init>", "(Ljava/lang/String;)V");
	jstring name = (*jni)->NewStringUTF(jni, "safepoint-sampler");
	jthread th = (*jni)->NewObject(jni, tc, ctor, name);

	(void)unused;
	(*env)->RunAgentThread(env, th, sampler_thread, NULL, JVMTI_THREAD_MAX_PRIORITY);
}

static void JNICALL on_vm_death(jvmtiEnv *env, JNIEnv *jni)
{
	(void)env;
	(void)jni;
	atomic_store(&stopping, 1);
	fflush(out);
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
	jvmtiEventCallbacks cb = {0};
	char path[512] = "safepoint-samples.txt";

	(void)reserved;
	for (char *tok = options ? strtok(options, ",") : NULL; tok; tok = strtok(NULL, ",")) {
		if (!strncmp(tok, "out=", 4))
			snprintf(path, sizeof(path), "%s", tok + 4);
		else if (!strncmp(tok, "hz=", 3))
			hz = (unsigned)atoi(tok + 3) ? (unsigned)atoi(tok + 3) : 1000;
		else if (!strncmp(tok, "ctl=", 4))
			snprintf(ctl_path, sizeof(ctl_path), "%s", tok + 4);
	}
	out = fopen(path, "w");
	if (!out || (*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK)
		return JNI_ERR;
	setvbuf(out, NULL, _IOFBF, 1 << 20);
	cb.VMInit = on_vm_init;
	cb.VMDeath = on_vm_death;
	(*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof(cb));
	(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_INIT, NULL);
	(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_DEATH, NULL);
	return JNI_OK;
}
