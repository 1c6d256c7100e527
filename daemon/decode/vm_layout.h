/* SPDX-License-Identifier: GPL-2.0-only */
/* The facts about one JVM's frame layout that its agent reported
 * (JS_REC_VM_LAYOUT). The decoder reads frames only through these. */
#ifndef JSAMPLED_VM_LAYOUT_H
#define JSAMPLED_VM_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>

#include "userspace/common/wire.h"

struct vm_layout {
	bool valid; /* every field below the line was reported */
	int java_major;
	uint64_t code_low, code_high; /* the code cache */
	/* ---- */
	int64_t interp_method_offset;    /* words from fp */
	int64_t interp_bcp_offset;       /* words from fp */
	int64_t interp_sender_sp_offset; /* words from fp */
	int64_t interp_locals_offset;    /* words from fp */
	int64_t entry_call_wrapper_offset; /* words from fp */
	int64_t wrapper_anchor; /* bytes: JavaCallWrapper::_anchor */
	int64_t anchor_sp, anchor_fp, anchor_pc; /* bytes in JavaFrameAnchor */
	int64_t const_method_size;
	uint64_t call_stub_return;
	int64_t thread_anchor; /* bytes: JavaThread::_anchor, -1 unknown */
	int64_t thread_state;  /* bytes: JavaThread::_thread_state, -1 unknown */
	int64_t state_in_java, state_in_java_trans; /* JavaThreadState values, -1 unknown */
	int64_t state_in_native, state_in_vm, state_blocked; /* -1 unknown */
	/* java.lang.Thread's status: Thread.holder (0: none), threadStatus
	 * (0: unknown); with threadobj_off and the narrow-oop facts below. */
	int64_t thread_holder_off, thread_status_off;
	int64_t tls_modid, tls_thread_offset; /* -1 unknown */
	/* Virtual threads' frozen frames (bpf/sampler.h js_target): all
	 * reported and in range, or cont_valid false. */
	bool cont_valid;
	int64_t vthread_off, threadobj_off, vt_cont_off, cont_tail_off;
	int64_t chunk_sp_off, chunk_bottom_off, chunk_parent_off, chunk_stack_off;
	int64_t narrow_oops, narrow_base, narrow_shift;
};

/* Parses a VM_LAYOUT payload into l. Returns 0, or -1 when malformed. */
int vm_layout_parse(struct vm_layout *l, struct rbuf *r);

#endif
