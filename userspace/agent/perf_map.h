/* SPDX-License-Identifier: GPL-2.0-only */
/* /tmp/perf-<pid>.map for Linux perf (agent option `perfmap`). */
#ifndef JSAMPLED_AGENT_PERF_MAP_H
#define JSAMPLED_AGENT_PERF_MAP_H

#include <jvmti.h>
#include <stdint.h>

/* 0, or -1 (the map stays off). */
int perf_map_open(void);
int perf_map_on(void);
/* jni: the calling thread's, or NULL (the line then names no class). */
void perf_map_method(jvmtiEnv *jvmti, JNIEnv *jni, jmethodID method, const void *start, int size);
void perf_map_stub(const char *name, const void *start, int size);

#endif
