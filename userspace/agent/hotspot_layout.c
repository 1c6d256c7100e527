/* SPDX-License-Identifier: GPL-2.0-only */
#include "hotspot_layout.h"

#include <stdio.h>
#include <string.h>

#include "userspace/common/agent_protocol.h"

static struct vm_field first_of(const struct vmstructs *vs, const char *t1, const char *t2,
				const char *field)
{
	struct vm_field f = vmstructs_field(vs, t1, field);

	if (!f.present && t2)
		f = vmstructs_field(vs, t2, field);
	return f;
}

static int64_t int_constant_or(const struct vmstructs *vs, const char *name, int64_t dflt)
{
	int64_t v;

	return vmstructs_int_constant(vs, name, &v) == 0 ? v : dflt;
}

int hs_layout_init(struct hs_layout *L, const struct vmstructs *vs, int java_major, char *err,
		   size_t errlen)
{
	struct vm_field hdr, used;
	const char *missing = NULL;

	memset(L, 0, sizeof(*L));
	L->java_major = java_major;
	L->tls_modid = -1;
	L->tls_thread_offset = -1;

	L->code_heaps = vmstructs_field(vs, "CodeCache", "_heaps");
	L->code_low = vmstructs_field(vs, "CodeCache", "_low_bound");
	L->code_high = vmstructs_field(vs, "CodeCache", "_high_bound");
	/* GrowableArrayBase since JDK 16, GenericGrowableArray before. */
	L->array_len = first_of(vs, "GrowableArrayBase", "GenericGrowableArray", "_len");
	L->array_data = vmstructs_field(vs, "GrowableArray<int>", "_data");
	L->heap_memory = vmstructs_field(vs, "CodeHeap", "_memory");
	L->heap_segmap = vmstructs_field(vs, "CodeHeap", "_segmap");
	L->heap_log2_segment = vmstructs_field(vs, "CodeHeap", "_log2_segment_size");
	L->vspace_low = vmstructs_field(vs, "VirtualSpace", "_low");
	L->vspace_high = vmstructs_field(vs, "VirtualSpace", "_high");
	hdr = vmstructs_field(vs, "HeapBlock", "_header");
	used = vmstructs_field(vs, "HeapBlock::Header", "_used");
	if (hdr.present && used.present) {
		L->block_used = used;
		L->block_used.offset += hdr.offset;
	}
	L->heap_block_size = vmstructs_type_size(vs, "HeapBlock");

	L->blob_size = vmstructs_field(vs, "CodeBlob", "_size");
	L->blob_header_size = vmstructs_field(vs, "CodeBlob", "_header_size");
	L->blob_frame_size = vmstructs_field(vs, "CodeBlob", "_frame_size");
	L->blob_frame_complete = vmstructs_field(vs, "CodeBlob", "_frame_complete_offset");
	L->blob_code_begin = vmstructs_field(vs, "CodeBlob", "_code_begin");
	L->blob_code_end = vmstructs_field(vs, "CodeBlob", "_code_end");
	L->blob_code_offset = vmstructs_field(vs, "CodeBlob", "_code_offset");
	L->blob_data_offset = vmstructs_field(vs, "CodeBlob", "_data_offset");
	L->blob_name = vmstructs_field(vs, "CodeBlob", "_name");

	L->nm_method = first_of(vs, "nmethod", "CompiledMethod", "_method");
	L->nm_verified_entry_point = vmstructs_field(vs, "nmethod", "_verified_entry_point");
	L->nm_verified_entry_offset = vmstructs_field(vs, "nmethod", "_verified_entry_offset");
	L->nm_stub_offset = vmstructs_field(vs, "nmethod", "_stub_offset");
	L->nm_orig_pc_offset = vmstructs_field(vs, "nmethod", "_orig_pc_offset");
	L->nm_entry_bci = vmstructs_field(vs, "nmethod", "_entry_bci");
	L->nm_comp_level = vmstructs_field(vs, "nmethod", "_comp_level");

	L->method_const = vmstructs_field(vs, "Method", "_constMethod");
	L->const_code_size = vmstructs_field(vs, "ConstMethod", "_code_size");
	L->const_method_size = vmstructs_type_size(vs, "ConstMethod");

	/* frame_x86.hpp: sender_sp -1, last_sp -2, method -3, mirror -4, mdp -5,
	 * cache -6, locals -7, bcp -8 (words from fp). Only the first two are
	 * exported; the rest follow from the declared order, which JDK 17
	 * through 25 share. The decoder validates every frame it reads this way
	 * (the Method* must be known, the bcp inside its bytecode). */
	L->interp_sender_sp_offset = int_constant_or(vs, "frame::interpreter_frame_sender_sp_offset", 0);
	L->interp_last_sp_offset = int_constant_or(vs, "frame::interpreter_frame_last_sp_offset", 0);
	L->entry_call_wrapper_offset = int_constant_or(vs, "frame::entry_frame_call_wrapper_offset", 0);
	L->wrapper_anchor = vmstructs_field(vs, "JavaCallWrapper", "_anchor");
	L->anchor_sp = vmstructs_field(vs, "JavaFrameAnchor", "_last_Java_sp");
	L->anchor_fp = vmstructs_field(vs, "JavaFrameAnchor", "_last_Java_fp");
	L->anchor_pc = vmstructs_field(vs, "JavaFrameAnchor", "_last_Java_pc");
	L->call_stub_return = vmstructs_field(vs, "StubRoutines", "_call_stub_return_address");

	L->interp_code = vmstructs_field(vs, "AbstractInterpreter", "_code");
	L->queue_buffer = vmstructs_field(vs, "StubQueue", "_stub_buffer");
	L->queue_begin = vmstructs_field(vs, "StubQueue", "_queue_begin");
	L->queue_end = vmstructs_field(vs, "StubQueue", "_queue_end");
	L->codelet_size = vmstructs_field(vs, "InterpreterCodelet", "_size");
	L->codelet_description = vmstructs_field(vs, "InterpreterCodelet", "_description");

	L->thread_anchor = vmstructs_field(vs, "JavaThread", "_anchor");
	L->thread_state = vmstructs_field(vs, "JavaThread", "_thread_state");
	L->state_in_java = int_constant_or(vs, "_thread_in_Java", -1);
	L->state_in_java_trans = int_constant_or(vs, "_thread_in_Java_trans", -1);
	L->state_in_native = int_constant_or(vs, "_thread_in_native", -1);
	L->state_in_vm = int_constant_or(vs, "_thread_in_vm", -1);
	L->state_blocked = int_constant_or(vs, "_thread_blocked", -1);
	L->thread_stack_base = first_of(vs, "JavaThread", "Thread", "_stack_base");
	L->thread_stack_size = first_of(vs, "JavaThread", "Thread", "_stack_size");
	L->thread_osthread = first_of(vs, "JavaThread", "Thread", "_osthread");
	L->osthread_tid = vmstructs_field(vs, "OSThread", "_thread_id");
	if (L->osthread_tid.present && L->osthread_tid.size == 0) {
		/* JDK 17 declares it as OSThread::thread_id_t, a typedef the
		 * type table does not list; on Linux it is pid_t. */
		L->osthread_tid.size = sizeof(int32_t);
		L->osthread_tid.is_signed = 1;
	}
	L->threads_list = vmstructs_field(vs, "ThreadsSMRSupport", "_java_thread_list");
	L->list_length = vmstructs_field(vs, "ThreadsList", "_length");
	L->list_threads = vmstructs_field(vs, "ThreadsList", "_threads");
	L->thread_list_head = vmstructs_field(vs, "Threads", "_thread_list");
	L->thread_next = vmstructs_field(vs, "JavaThread", "_next");

	if (!L->code_heaps.present || !L->array_len.present || !L->array_data.present)
		missing = "CodeCache::_heaps / GrowableArray";
	else if (!L->heap_memory.present || !L->heap_segmap.present || !L->heap_log2_segment.present ||
		 !L->vspace_low.present || !L->vspace_high.present || L->heap_block_size <= 0)
		missing = "CodeHeap segment map";
	else if (!L->blob_frame_size.present || !L->blob_frame_complete.present || !L->blob_size.present)
		missing = "CodeBlob frame fields";
	else if (!L->blob_code_begin.present && !L->blob_code_offset.present)
		missing = "CodeBlob code begin";
	else if (!L->method_const.present || !L->const_code_size.present || L->const_method_size <= 0)
		missing = "Method/ConstMethod";
	else if (!L->interp_sender_sp_offset || !L->interp_last_sp_offset || !L->entry_call_wrapper_offset)
		missing = "frame:: constants";
	else if (!L->wrapper_anchor.present || !L->anchor_sp.present || !L->anchor_pc.present ||
		 !L->anchor_fp.present || !L->call_stub_return.present)
		missing = "JavaCallWrapper / JavaFrameAnchor / call stub";
	if (missing) {
		snprintf(err, errlen, "vmStructs lacks %s", missing);
		return -1;
	}
	return 0;
}

static void fact(struct wbuf *w, uint16_t *count, const char *name, int64_t value)
{
	wbuf_str(w, name);
	wbuf_i64(w, value);
	(*count)++;
}

void hs_layout_write_facts(const struct hs_layout *L, struct wbuf *w)
{
	size_t count_at = w->len;
	uint16_t n = 0;
	uint64_t v;

	wbuf_u16(w, 0); /* patched below */
	fact(w, &n, JS_LAYOUT_JAVA_VERSION_MAJOR, L->java_major);
	fact(w, &n, JS_LAYOUT_INTERP_SENDER_SP_OFFSET, L->interp_sender_sp_offset);
	fact(w, &n, JS_LAYOUT_INTERP_LAST_SP_OFFSET, L->interp_last_sp_offset);
	fact(w, &n, JS_LAYOUT_INTERP_METHOD_OFFSET, L->interp_last_sp_offset - 1);
	fact(w, &n, JS_LAYOUT_INTERP_LOCALS_OFFSET, L->interp_last_sp_offset - 5);
	fact(w, &n, JS_LAYOUT_INTERP_BCP_OFFSET, L->interp_last_sp_offset - 6);
	fact(w, &n, JS_LAYOUT_ENTRY_CALL_WRAPPER_OFFSET, L->entry_call_wrapper_offset);
	fact(w, &n, JS_LAYOUT_CALL_WRAPPER_ANCHOR, (int64_t)L->wrapper_anchor.offset);
	fact(w, &n, JS_LAYOUT_ANCHOR_SP, (int64_t)L->anchor_sp.offset);
	fact(w, &n, JS_LAYOUT_ANCHOR_FP, (int64_t)L->anchor_fp.offset);
	fact(w, &n, JS_LAYOUT_ANCHOR_PC, (int64_t)L->anchor_pc.offset);
	if (L->thread_anchor.present)
		fact(w, &n, JS_LAYOUT_THREAD_ANCHOR, (int64_t)L->thread_anchor.offset);
	if (L->tls_modid > 0 && L->tls_thread_offset >= 0) {
		fact(w, &n, JS_LAYOUT_TLS_MODID, L->tls_modid);
		fact(w, &n, JS_LAYOUT_TLS_THREAD_OFFSET, L->tls_thread_offset);
	}
	if (L->thread_state.present && L->thread_state.size == 4 && L->state_in_java >= 0) {
		fact(w, &n, JS_LAYOUT_THREAD_STATE, (int64_t)L->thread_state.offset);
		fact(w, &n, JS_LAYOUT_STATE_IN_JAVA, L->state_in_java);
		fact(w, &n, JS_LAYOUT_STATE_IN_JAVA_TRANS, L->state_in_java_trans);
		fact(w, &n, JS_LAYOUT_STATE_IN_NATIVE, L->state_in_native);
		fact(w, &n, JS_LAYOUT_STATE_IN_VM, L->state_in_vm);
		fact(w, &n, JS_LAYOUT_STATE_BLOCKED, L->state_blocked);
	}
	fact(w, &n, JS_LAYOUT_CONST_METHOD_SIZE, L->const_method_size);
	if (vm_read_ptr(&L->call_stub_return, 0, &v) == 0)
		fact(w, &n, JS_LAYOUT_CALL_STUB_RETURN, (int64_t)v);
	if (vm_read_ptr(&L->code_low, 0, &v) == 0)
		fact(w, &n, JS_LAYOUT_CODE_CACHE_LOW, (int64_t)v);
	if (vm_read_ptr(&L->code_high, 0, &v) == 0)
		fact(w, &n, JS_LAYOUT_CODE_CACHE_HIGH, (int64_t)v);
	continuation_layout_write_facts(&L->cont, w, &n);
	thread_status_layout_write_facts(&L->status, !L->cont.valid, w, &n);
	if (!w->oom)
		memcpy(w->data + count_at, (uint8_t[]){(uint8_t)n, (uint8_t)(n >> 8)}, 2);
}

int hs_method_bytecode(const struct hs_layout *L, uint64_t method, uint64_t *const_method,
		       uint32_t *code_size)
{
	int64_t size;

	if (vm_read_ptr(&L->method_const, method, const_method) != 0 || !*const_method)
		return -1;
	if (vm_read_int(&L->const_code_size, *const_method, &size) != 0 || size < 0)
		return -1;
	*code_size = (uint32_t)size;
	return 0;
}
