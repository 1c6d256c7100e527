/* SPDX-License-Identifier: GPL-2.0-only */
/* The HotSpot data layout the agent and the decoder rely on, resolved by
 * name from vmStructs once per JVM. JDK versions differ in field names and
 * widths (JDK 17's CodeBlob::_code_begin pointer became an _code_offset by
 * JDK 25, HeapBlock shrank, ...; docs/hotspot.md); each is tried by name. */
#ifndef JSAGENT_HOTSPOT_LAYOUT_H
#define JSAGENT_HOTSPOT_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "continuation_layout.h"
#include "thread_status_layout.h"
#include "vmstructs.h"
#include "userspace/common/wire.h"

struct hs_layout {
	int java_major;

	/* Code cache and its segment map (CodeHeap::find_blob_start). */
	struct vm_field code_heaps, code_low, code_high;
	struct vm_field array_len, array_data; /* GrowableArray */
	struct vm_field heap_memory, heap_segmap, heap_log2_segment;
	struct vm_field vspace_low, vspace_high;
	struct vm_field block_used; /* HeapBlock::_header._used, offset combined */
	long heap_block_size;

	/* CodeBlob: either _code_begin/_code_end pointers or offsets. */
	struct vm_field blob_size, blob_header_size, blob_frame_size, blob_frame_complete;
	struct vm_field blob_code_begin, blob_code_end, blob_code_offset, blob_data_offset;
	struct vm_field blob_name;

	/* nmethod */
	struct vm_field nm_method, nm_verified_entry_point, nm_verified_entry_offset;
	struct vm_field nm_stub_offset, nm_orig_pc_offset, nm_entry_bci, nm_comp_level;

	/* Method and ConstMethod (bci = bcp - (ConstMethod* + sizeof(ConstMethod))). */
	struct vm_field method_const, const_code_size;
	long const_method_size;

	/* Frames (x86-64 frame_x86.hpp constants, exported ones by name). */
	int64_t interp_sender_sp_offset, interp_last_sp_offset, entry_call_wrapper_offset;
	struct vm_field wrapper_anchor, anchor_sp, anchor_fp, anchor_pc;
	struct vm_field call_stub_return;

	/* Threads */
	struct vm_field thread_anchor, thread_state, thread_stack_base, thread_stack_size;
	int64_t state_in_java, state_in_java_trans; /* JavaThreadState values, -1 unknown */
	int64_t state_in_native, state_in_vm, state_blocked;
	struct vm_field thread_osthread, osthread_tid;
	struct vm_field threads_list, list_length, list_threads;
	/* JDK 11's vmStructs export no ThreadsList: the linked list instead. */
	struct vm_field thread_list_head, thread_next;

	/* The interpreter's codelets (StubQueue of InterpreterCodelet). */
	struct vm_field interp_code, queue_buffer, queue_begin, queue_end, codelet_size, codelet_description;

	/* Where libjvm's thread-local Thread::_thr_current lives (glibc TLS
	 * module id, offset in the module's block); -1 until measured. */
	int64_t tls_modid, tls_thread_offset;

	/* Virtual threads' frozen frames (measured in the live phase). */
	struct continuation_layout cont;
	struct thread_status_layout status;
};

/* Resolves everything; fails (with a reason) only when something the
 * decoder cannot work without is missing. */
int hs_layout_init(struct hs_layout *L, const struct vmstructs *vs, int java_major, char *err,
		   size_t errlen);

/* Appends the VM_LAYOUT record payload (agent_protocol.h). */
void hs_layout_write_facts(const struct hs_layout *L, struct wbuf *w);

/* Method* -> ConstMethod* and bytecode size; -1 if unreadable. */
int hs_method_bytecode(const struct hs_layout *L, uint64_t method, uint64_t *const_method,
		       uint32_t *code_size);

#endif
