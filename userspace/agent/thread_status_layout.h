/* SPDX-License-Identifier: GPL-2.0-only */
/* Where a Java thread's java.lang.Thread status is: the JVMTI state bits
 * (sleeping, parked, in Object.wait, blocked on a monitor...) that jstack
 * prints as Thread.State, which the BPF program reads for off-CPU samples
 * (bpf/sampler.h, JS_SAMPLE_HAS_STATUS). From the JavaThread's _threadObj
 * (an OopHandle) to the Thread object, then to Thread.threadStatus, or on
 * JDK 19+ to Thread.holder and its FieldHolder.threadStatus. */
#ifndef JSAGENT_THREAD_STATUS_LAYOUT_H
#define JSAGENT_THREAD_STATUS_LAYOUT_H

#include <jni.h>
#include <stdint.h>

#include "vmstructs.h"
#include "userspace/common/wire.h"

struct thread_status_layout {
	int valid;
	int64_t threadobj_off;   /* JavaThread::_threadObj */
	int64_t holder_off;      /* Thread.holder, 0 when the status is in Thread itself */
	int64_t status_off;      /* threadStatus, in Thread or its FieldHolder */
	int64_t narrow_oops, narrow_base, narrow_shift;
};

/* Measures the layout in the live phase; leaves it invalid when anything
 * is missing. */
void thread_status_layout_measure(struct thread_status_layout *t, const struct vmstructs *vs, JNIEnv *jni);

/* Appends its facts to a VM_LAYOUT payload (agent_protocol.h); none when
 * invalid. with_refs: also the thread object and narrow-oop facts, which
 * the continuation layout otherwise sends. */
void thread_status_layout_write_facts(const struct thread_status_layout *t, int with_refs, struct wbuf *w,
				      uint16_t *count);

#endif
