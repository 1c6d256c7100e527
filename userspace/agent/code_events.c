/* SPDX-License-Identifier: GPL-2.0-only */
/* JVMTI code events -> CODE_LOAD / CODE_UNLOAD records. Callbacks run on the
 * JVM's service and compiler threads; they copy what JVMTI hands them, read
 * the blob facts JVMTI does not give (frame size, entry points) through the
 * segment map, and append one serialized record. */
#include <stdlib.h>
#include <string.h>

#include "userspace/common/agent_protocol.h"
#include "agent.h"
#include "perf_map.h"
#include "code_extent.h"
#include "code_heap.h"
#include "frame_states.h"
#include "safe_read.h"

#include <jvmticmlr.h>

/* Names HotSpot gives its generated code (DynamicCodeGenerated), mapped to
 * what the decoder must do with a pc inside. Checked in order, by prefix. */
static const struct {
	const char *prefix;
	uint8_t kind;
} dynamic_kinds[] = {
	{"Interpreter", JS_CODE_INTERPRETER},
	{"call_stub", JS_CODE_CALL_STUB},
	{"I2C/C2I adapters", JS_CODE_ADAPTER},
	{"vtable stub", JS_CODE_VTABLE_STUB},
	{"itable stub", JS_CODE_VTABLE_STUB},
	{"MethodHandles adapters", JS_CODE_METHOD_HANDLE},
	{"MethodHandle::interpreter_entry", JS_CODE_METHOD_HANDLE},
	{"DeoptimizationBlob", JS_CODE_DEOPT},
	{"UncommonTrapBlob", JS_CODE_DEOPT},
	{"SafepointBlob", JS_CODE_SAFEPOINT},
};

static uint8_t classify_dynamic(const char *name)
{
	for (size_t i = 0; i < sizeof(dynamic_kinds) / sizeof(dynamic_kinds[0]); i++)
		if (strncmp(name, dynamic_kinds[i].prefix, strlen(dynamic_kinds[i].prefix)) == 0)
			return dynamic_kinds[i].kind;
	return JS_CODE_STUB;
}

/* Fixed part of a CODE_LOAD record (see agent_protocol.h). */
static void write_code_header(struct wbuf *w, uint64_t code_id, uint8_t kind, uint8_t flags,
			      uint64_t start, uint32_t size, uint64_t when, const struct hs_blob *b,
			      const struct hs_nmethod *nm, uint32_t method_id, const char *name)
{
	int32_t complete = -1;

	/* Offsets in the record count from the range JVMTI reported. */
	if (b && b->blob && b->frame_complete_offset >= 0) {
		uint64_t at = b->code_begin + (uint64_t)b->frame_complete_offset;
		if (at >= start && at <= start + size)
			complete = (int32_t)(at - start);
	}
	wbuf_u64(w, code_id);
	wbuf_u8(w, kind);
	wbuf_u8(w, flags);
	wbuf_u16(w, 0);
	wbuf_u64(w, start);
	wbuf_u32(w, size);
	wbuf_u64(w, when);
	wbuf_u64(w, b ? b->blob : 0);
	wbuf_i32(w, b && b->blob ? b->frame_size_words : -1);
	wbuf_i32(w, complete);
	wbuf_i32(w, nm ? nm->verified_entry_offset : -1);
	wbuf_i32(w, nm ? nm->stub_offset : -1);
	wbuf_i32(w, nm ? nm->orig_pc_offset : -1);
	wbuf_i32(w, nm ? nm->entry_bci : -1);
	wbuf_i32(w, nm ? nm->comp_level : 0);
	wbuf_u32(w, method_id);
	wbuf_str(w, name);
}

/* The per-pc inline chains of a compiled method, innermost first. Needs the
 * store lock (maps jmethodIDs to ids). */
static void write_scopes_locked(struct wbuf *w, const void *compile_info, uint64_t start,
				uint32_t size)
{
	size_t count_at = w->len;
	uint32_t count = 0;

	wbuf_u32(w, 0);
	for (const jvmtiCompiledMethodLoadRecordHeader *h = compile_info; h; h = h->next) {
		const jvmtiCompiledMethodLoadInlineRecord *r;

		if (h->kind != JVMTI_CMLR_INLINE_INFO)
			continue;
		r = (const jvmtiCompiledMethodLoadInlineRecord *)h;
		for (jint i = 0; i < r->numpcs; i++) {
			const PCStackInfo *pc = &r->pcinfo[i];
			uint64_t at = (uint64_t)(uintptr_t)pc->pc;
			int depth = pc->numstackframes;

			if (at < start || at > start + size || depth <= 0 || !pc->methods || !pc->bcis)
				continue;
			if (depth > JS_MAX_INLINE_DEPTH)
				depth = JS_MAX_INLINE_DEPTH;
			wbuf_u32(w, (uint32_t)(at - start));
			wbuf_u8(w, (uint8_t)depth);
			for (int d = 0; d < depth; d++) {
				uint64_t handle = (uint64_t)(uintptr_t)pc->methods[d];
				wbuf_u32(w, handle ? store_method_id_locked(&g_agent.store, handle, 0, NULL) : 0);
				wbuf_i32(w, pc->bcis[d]);
			}
			count++;
		}
	}
	wbuf_patch_u32(w, count_at, count);
}

/* Frame-state ranges of a compiled method (frame_states.h), from a copy of
 * its code. */
static void write_frame_states(struct wbuf *w, uint64_t start, uint32_t size,
			       const struct hs_blob *b, const struct hs_nmethod *nm)
{
	static const uint32_t max = JS_MAX_FRAME_STATES;
	struct frame_state_range ranges[JS_MAX_FRAME_STATES];
	struct frame_state_input in = {0};
	uint8_t *code = NULL;
	size_t n = 0;

	if (b && nm && b->code_begin == start && size <= (16u << 20)) {
		code = malloc(size);
		if (code && safe_read(start, code, size) == 0) {
			in.code = code;
			in.size = size;
			in.frame_size_words = b->frame_size_words;
			in.verified_entry_offset = nm->verified_entry_offset;
			in.frame_complete_offset = b->frame_complete_offset;
			in.stub_offset = nm->stub_offset;
			n = frame_states_compute(&in, ranges, max);
			if (g_agent.verbose && n && ranges[0].state == JS_FRAME_STATE_UNKNOWN) {
				char hex[3 * 40 + 1] = "";
				uint32_t from = nm->verified_entry_offset > 0 ? (uint32_t)nm->verified_entry_offset : 0;
				for (uint32_t i = 0; i < 40 && from + i < size; i++)
					snprintf(hex + 3 * i, 4, "%02x ", code[from + i]);
				agent_log(1, "unrecognised prologue at %#lx (verified entry +%d, complete +%d, frame %d): %s",
					  (unsigned long)start, nm->verified_entry_offset, b->frame_complete_offset,
					  b->frame_size_words, hex);
			}
		}
	}
	free(code);
	wbuf_u32(w, (uint32_t)n);
	for (size_t i = 0; i < n; i++) {
		wbuf_u32(w, ranges[i].start);
		wbuf_u32(w, ranges[i].end);
		wbuf_u8(w, ranges[i].state);
	}
}

/* Set on the attaching thread while it replays the code that was live
 * before the agent came (GenerateEvents, the interpreter's codelets): that
 * code's load time is unknown, so it is stamped 0, which covers samples
 * jsampled took of the JVM before the attach. Per thread: compilations
 * finishing meanwhile on other threads keep their real time. */
static _Thread_local int replaying_past;

void code_events_replaying_past(int on)
{
	replaying_past = on;
}

static uint64_t code_event_time(void)
{
	return replaying_past ? 0 : agent_now_ns();
}

/* Ends the code live at start, if any: an UNLOAD record at when. */
static void end_live_code_locked(uint64_t start, uint64_t when)
{
	uint64_t code_id = store_code_unloaded_locked(&g_agent.store, start);
	struct wbuf w;

	if (!code_id)
		return;
	wbuf_init(&w);
	wbuf_u64(&w, code_id);
	wbuf_u64(&w, when);
	if (!w.oom)
		store_append_locked(&g_agent.store, JS_REC_CODE_UNLOAD, code_id, 1, w.data, w.len);
	wbuf_free(&w);
}

void JNICALL on_compiled_method_load(jvmtiEnv *jvmti, jmethodID method, jint code_size,
				     const void *code_addr, jint map_length,
				     const jvmtiAddrLocationMap *map, const void *compile_info)
{
	struct hs_blob blob;
	struct hs_nmethod nm;
	struct wbuf w;
	uint64_t start = (uint64_t)(uintptr_t)code_addr, when = code_event_time();
	uint8_t kind = JS_CODE_NMETHOD, flags = 0;
	jint modifiers = 0;
	int have_blob;

	(void)map_length;
	(void)map;
	if (atomic_load(&g_agent.disabled) || code_size <= 0)
		return;
	if (perf_map_on()) {
		JNIEnv *jni = NULL;

		if ((*g_agent.vm)->GetEnv(g_agent.vm, (void **)&jni, JNI_VERSION_1_8) != JNI_OK)
			jni = NULL;
		perf_map_method(jvmti, jni, method, code_addr, code_size);
	}
	have_blob = hs_blob_find(&g_agent.layout, start, &blob) == 0;
	if (have_blob)
		hs_blob_nmethod(&g_agent.layout, &blob, &nm);
	if (have_blob)
		code_size = (jint)code_extent(start, (uint32_t)code_size, nm.stub_offset, blob.code_begin, blob.code_end);
	if ((*jvmti)->GetMethodModifiers(jvmti, method, &modifiers) == JVMTI_ERROR_NONE &&
	    (modifiers & JVM_ACC_NATIVE))
		kind = JS_CODE_NATIVE_WRAPPER;
	if (have_blob && nm.entry_bci >= 0)
		flags |= JS_CODE_FLAG_OSR;

	/* Frame states are computed before taking the lock (code analysis). */
	struct wbuf states;
	wbuf_init(&states);
	write_frame_states(&states, start, (uint32_t)code_size, have_blob ? &blob : NULL,
			   have_blob ? &nm : NULL);

	wbuf_init(&w);
	store_lock(&g_agent.store);
	/* Two live compiled methods never share a start. A late attach's
	 * GenerateEvents replays methods whose own load event is still queued
	 * on the JVM's service thread, or already came: the replay of one
	 * reported already is dropped, and the JVM's own event after a replay
	 * ends the replayed copy (stamped 0) at its real time. Two ids left
	 * live for one method would keep the older one live for ever. */
	if (u64_map_get(&g_agent.store.live_code, start)) {
		if (replaying_past) {
			store_unlock(&g_agent.store);
			wbuf_free(&w);
			wbuf_free(&states);
			return;
		}
		end_live_code_locked(start, when);
	}
	uint64_t code_id = store_new_code_id_locked(&g_agent.store);
	uint32_t method_id = store_method_id_locked(&g_agent.store, (uint64_t)(uintptr_t)method, 0, NULL);
	write_code_header(&w, code_id, kind, flags, start, (uint32_t)code_size, when,
			  have_blob ? &blob : NULL, have_blob ? &nm : NULL, method_id, "");
	write_scopes_locked(&w, compile_info, start, (uint32_t)code_size);
	wbuf_put(&w, states.data, states.len);
	if (!w.oom && store_append_locked(&g_agent.store, JS_REC_CODE_LOAD, code_id, 0, w.data, w.len))
		store_code_loaded_locked(&g_agent.store, start, code_id);
	store_unlock(&g_agent.store);
	wbuf_free(&w);
	wbuf_free(&states);
}

void JNICALL on_compiled_method_unload(jvmtiEnv *jvmti, jmethodID method, const void *code_addr)
{
	uint64_t when = agent_now_ns();

	(void)jvmti;
	(void)method;
	if (atomic_load(&g_agent.disabled))
		return;
	store_lock(&g_agent.store);
	end_live_code_locked((uint64_t)(uintptr_t)code_addr, when);
	store_unlock(&g_agent.store);
}

void JNICALL on_dynamic_code_generated(jvmtiEnv *jvmti, const char *name, const void *address,
				       jint length)
{
	struct hs_blob blob;
	struct wbuf w;
	uint64_t start = (uint64_t)(uintptr_t)address, when = code_event_time();
	int have_blob;

	(void)jvmti;
	if (atomic_load(&g_agent.disabled) || length <= 0 || !name)
		return;
	perf_map_stub(name, address, length);
	have_blob = hs_blob_find(&g_agent.layout, start, &blob) == 0;
	agent_log(1, "dynamic code %s at %#lx+%d frame %d", name, (unsigned long)start, length,
		  have_blob ? blob.frame_size_words : -1);
	wbuf_init(&w);
	store_lock(&g_agent.store);
	if (u64_map_get(&g_agent.store.live_code, start)) { /* replayed by GenerateEvents */
		store_unlock(&g_agent.store);
		wbuf_free(&w);
		return;
	}
	uint64_t code_id = store_new_code_id_locked(&g_agent.store);
	write_code_header(&w, code_id, classify_dynamic(name), 0, start, (uint32_t)length, when,
			  have_blob ? &blob : NULL, NULL, 0, name);
	wbuf_u32(&w, 0); /* no scopes */
	wbuf_u32(&w, 0); /* no frame states */
	if (!w.oom && store_append_locked(&g_agent.store, JS_REC_CODE_LOAD, code_id, 0, w.data, w.len))
		store_code_loaded_locked(&g_agent.store, start, code_id);
	store_unlock(&g_agent.store);
	wbuf_free(&w);
}

void record_vm_layout(void)
{
	struct wbuf w;

	wbuf_init(&w);
	hs_layout_write_facts(&g_agent.layout, &w);
	store_lock(&g_agent.store);
	if (!w.oom)
		store_append_locked(&g_agent.store, JS_REC_VM_LAYOUT, 0, 0, w.data, w.len);
	store_unlock(&g_agent.store);
	wbuf_free(&w);
}

/* The interpreter's method entry codelets: samples there interrupt a frame
 * under construction, which the decoder unwinds differently from the rest
 * of the interpreter. HotSpot describes each codelet ("method entry point
 * (kind = zerolocals)", "invokevirtual", "return entry points", ...); the
 * method entries are reported as their own code ranges inside the
 * interpreter's. */
void record_interpreter_entries(void)
{
	const struct hs_layout *L = &g_agent.layout;
	uint64_t queue, buffer, at, end, when = code_event_time();
	int64_t begin_off, end_off;
	int count = 0;

	if (!L->interp_code.present || vm_read_ptr(&L->interp_code, 0, &queue) != 0 || !queue ||
	    vm_read_ptr(&L->queue_buffer, queue, &buffer) != 0 || !buffer ||
	    vm_read_int(&L->queue_begin, queue, &begin_off) != 0 ||
	    vm_read_int(&L->queue_end, queue, &end_off) != 0 || begin_off < 0 || end_off < begin_off ||
	    end_off > (64 << 20))
		return;
	end = buffer + (uint64_t)end_off;
	for (at = buffer + (uint64_t)begin_off; at < end && count < 100000; count++) {
		int64_t size;
		uint64_t desc_ptr;
		char desc[96] = "";
		struct wbuf w;

		if (vm_read_int(&L->codelet_size, at, &size) != 0 || size <= 0 || at + (uint64_t)size > end)
			break;
		if (vm_read_ptr(&L->codelet_description, at, &desc_ptr) == 0 && desc_ptr &&
		    safe_read(desc_ptr, desc, sizeof(desc) - 1) != 0)
			desc[0] = 0;
		desc[sizeof(desc) - 1] = 0;
		if (strncmp(desc, "method entry point", 18) == 0) {
			wbuf_init(&w);
			store_lock(&g_agent.store);
			uint64_t code_id = store_new_code_id_locked(&g_agent.store);
			write_code_header(&w, code_id, JS_CODE_INTERPRETER_ENTRY, 0, at, (uint32_t)size, when,
					  NULL, NULL, 0, desc);
			wbuf_u32(&w, 0);
			wbuf_u32(&w, 0);
			if (!w.oom)
				store_append_locked(&g_agent.store, JS_REC_CODE_LOAD, code_id, 0, w.data, w.len);
			store_unlock(&g_agent.store);
			wbuf_free(&w);
		}
		agent_log(1, "interpreter codelet %#lx+%ld: %s", (unsigned long)at, (long)size, desc);
		at += (uint64_t)size;
	}
}
