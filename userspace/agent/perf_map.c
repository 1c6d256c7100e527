/* SPDX-License-Identifier: GPL-2.0-only */
/* Optional /tmp/perf-<pid>.map for Linux perf (agent option `perfmap`): one
 * "<start hex> <size hex> <name>" line per JIT-compiled method and generated
 * stub, the format perf reads to symbolize JIT code ("Java in Flames",
 * Gregg & Spier). Off by default: jsampled needs none of it; the comparison
 * benchmark uses it to give perf its best setup. Writes happen in the JIT
 * event callbacks, under a lock, one short line each. */
#include "perf_map.h"

#include <fcntl.h>
#include <jvmti.h>
#include <pthread.h>
#include <sys/stat.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "class_refs.h"
#include "libc_baseline.h"

static FILE *map;
static pthread_mutex_t map_lock = PTHREAD_MUTEX_INITIALIZER;

int perf_map_open(void)
{
	char path[64];
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	/* /tmp is shared: a name planted by another user (a link to a file of
	 * ours, or a file of theirs) is not followed or written. A stale map
	 * of our own pid is replaced. */
	fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	if (baseline_fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || st.st_nlink != 1 ||
	    ftruncate(fd, 0) != 0) {
		close(fd);
		return -1;
	}
	map = fdopen(fd, "w");
	if (!map) {
		close(fd);
		return -1;
	}
	setvbuf(map, NULL, _IOLBF, 0); /* perf may read it while the JVM runs */
	return 0;
}

static void write_line(uint64_t start, uint64_t size, const char *name)
{
	pthread_mutex_lock(&map_lock);
	fprintf(map, "%llx %llx %s\n", (unsigned long long)start, (unsigned long long)size, name);
	pthread_mutex_unlock(&map_lock);
}

void perf_map_method(jvmtiEnv *jvmti, JNIEnv *jni, jmethodID method, const void *start, int size)
{
	char *mname = NULL, *csig = NULL, line[512];

	if (!map || size <= 0)
		return;
	if ((*jvmti)->GetMethodName(jvmti, method, &mname, NULL, NULL) != JVMTI_ERROR_NONE)
		return;
	/* The class is held while it is asked for its name (class_refs.h). */
	if (jni && (*jni)->PushLocalFrame(jni, 8) == JNI_OK) {
		jclass cls = class_refs_hold_declaring(jvmti, jni, method);

		if (cls)
			(*jvmti)->GetClassSignature(jvmti, cls, &csig, NULL);
		(*jni)->PopLocalFrame(jni, NULL);
	}
	/* "Lpkg/Class;" -> "pkg.Class" */
	snprintf(line, sizeof(line), "%.*s.%s", csig && strlen(csig) > 2 ? (int)strlen(csig) - 2 : 9,
		 csig && strlen(csig) > 2 ? csig + 1 : "[unknown]", mname);
	for (char *p = line; *p; p++)
		if (*p == '/')
			*p = '.';
	write_line((uint64_t)(uintptr_t)start, (uint64_t)size, line);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)mname);
	if (csig)
		(*jvmti)->Deallocate(jvmti, (unsigned char *)csig);
}

int perf_map_on(void)
{
	return map != NULL;
}

void perf_map_stub(const char *name, const void *start, int size)
{
	if (map && size > 0 && name)
		write_line((uint64_t)(uintptr_t)start, (uint64_t)size, name);
}
