/* SPDX-License-Identifier: GPL-2.0-only */
#include "vm_layout.h"

#include <stddef.h>
#include <string.h>

#include "userspace/common/agent_protocol.h"

enum { F_METHOD, F_BCP, F_SENDER_SP, F_LOCALS, F_WRAPPER, F_WRAPPER_ANCHOR, F_ASP, F_AFP, F_APC,
       F_CMSIZE, F_CALL_STUB, F_COUNT };

/* The virtual-thread facts: all or none, each small enough for the BPF
 * program's fields. */
static void check_continuations(struct vm_layout *l, unsigned seen)
{
	const int64_t u16s[] = {l->vthread_off, l->threadobj_off, l->vt_cont_off, l->cont_tail_off,
				l->chunk_stack_off};
	const int64_t u8s[] = {l->chunk_sp_off, l->chunk_bottom_off, l->chunk_parent_off};

	l->cont_valid = seen == (1u << 11) - 1 && l->narrow_shift >= 0 && l->narrow_shift <= 7 &&
			(l->narrow_oops == 0 || l->narrow_oops == 1) && l->chunk_stack_off % 8 == 0;
	for (size_t i = 0; i < sizeof(u16s) / sizeof(u16s[0]); i++)
		l->cont_valid &= u16s[i] > 0 && u16s[i] < 0xffff;
	for (size_t i = 0; i < sizeof(u8s) / sizeof(u8s[0]); i++)
		l->cont_valid &= u8s[i] > 0 && u8s[i] < 0xff;
}

int vm_layout_parse(struct vm_layout *l, struct rbuf *r)
{
	static const struct {
		const char *name;
		size_t at;
	} cont_names[] = {
		{.name = JS_LAYOUT_THREAD_VTHREAD, .at = offsetof(struct vm_layout, vthread_off)},
		{.name = JS_LAYOUT_THREAD_THREADOBJ, .at = offsetof(struct vm_layout, threadobj_off)},
		{.name = JS_LAYOUT_VTHREAD_CONT, .at = offsetof(struct vm_layout, vt_cont_off)},
		{.name = JS_LAYOUT_CONT_TAIL, .at = offsetof(struct vm_layout, cont_tail_off)},
		{.name = JS_LAYOUT_CHUNK_SP, .at = offsetof(struct vm_layout, chunk_sp_off)},
		{.name = JS_LAYOUT_CHUNK_BOTTOM, .at = offsetof(struct vm_layout, chunk_bottom_off)},
		{.name = JS_LAYOUT_CHUNK_PARENT, .at = offsetof(struct vm_layout, chunk_parent_off)},
		{.name = JS_LAYOUT_CHUNK_STACK, .at = offsetof(struct vm_layout, chunk_stack_off)},
		{.name = JS_LAYOUT_NARROW_OOPS, .at = offsetof(struct vm_layout, narrow_oops)},
		{.name = JS_LAYOUT_NARROW_BASE, .at = offsetof(struct vm_layout, narrow_base)},
		{.name = JS_LAYOUT_NARROW_SHIFT, .at = offsetof(struct vm_layout, narrow_shift)},
	};
	unsigned cont_seen = 0;
	static const struct {
		const char *name;
		int field;
	} names[] = {
		{JS_LAYOUT_INTERP_METHOD_OFFSET, F_METHOD},
		{JS_LAYOUT_INTERP_BCP_OFFSET, F_BCP},
		{JS_LAYOUT_INTERP_SENDER_SP_OFFSET, F_SENDER_SP},
		{JS_LAYOUT_INTERP_LOCALS_OFFSET, F_LOCALS},
		{JS_LAYOUT_ENTRY_CALL_WRAPPER_OFFSET, F_WRAPPER},
		{JS_LAYOUT_CALL_WRAPPER_ANCHOR, F_WRAPPER_ANCHOR},
		{JS_LAYOUT_ANCHOR_SP, F_ASP},
		{JS_LAYOUT_ANCHOR_FP, F_AFP},
		{JS_LAYOUT_ANCHOR_PC, F_APC},
		{JS_LAYOUT_CONST_METHOD_SIZE, F_CMSIZE},
		{JS_LAYOUT_CALL_STUB_RETURN, F_CALL_STUB},
	};
	int64_t *slots[F_COUNT] = {
		&l->interp_method_offset, &l->interp_bcp_offset, &l->interp_sender_sp_offset,
		&l->interp_locals_offset, &l->entry_call_wrapper_offset, &l->wrapper_anchor,
		&l->anchor_sp, &l->anchor_fp, &l->anchor_pc, &l->const_method_size,
		(int64_t *)&l->call_stub_return,
	};
	bool seen[F_COUNT] = {0};
	uint16_t n = rbuf_u16(r);

	memset(l, 0, sizeof(*l));
	l->thread_anchor = -1;
	l->thread_state = -1;
	l->state_in_java = -1;
	l->state_in_java_trans = -1;
	l->state_in_native = l->state_in_vm = l->state_blocked = -1;
	l->tls_modid = -1;
	l->tls_thread_offset = -1;
	for (uint16_t i = 0; i < n && !r->err; i++) {
		size_t len;
		const char *name = rbuf_str(r, &len);
		int64_t v = rbuf_i64(r);

		if (r->err)
			break;
		for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
			if (strlen(names[k].name) == len && memcmp(names[k].name, name, len) == 0) {
				*slots[names[k].field] = v;
				seen[names[k].field] = true;
			}
		}
		for (size_t k = 0; k < sizeof(cont_names) / sizeof(cont_names[0]); k++) {
			if (strlen(cont_names[k].name) == len && memcmp(cont_names[k].name, name, len) == 0) {
				memcpy((char *)l + cont_names[k].at, &v, sizeof(v));
				cont_seen |= 1u << k;
			}
		}
#define IS(s) (strlen(s) == len && memcmp(s, name, len) == 0)
		if (IS(JS_LAYOUT_JAVA_VERSION_MAJOR))
			l->java_major = (int)v;
		else if (IS(JS_LAYOUT_CODE_CACHE_LOW))
			l->code_low = (uint64_t)v;
		else if (IS(JS_LAYOUT_CODE_CACHE_HIGH))
			l->code_high = (uint64_t)v;
		else if (IS(JS_LAYOUT_THREAD_ANCHOR))
			l->thread_anchor = v;
		else if (IS(JS_LAYOUT_THREAD_STATE))
			l->thread_state = v;
		else if (IS(JS_LAYOUT_STATE_IN_JAVA))
			l->state_in_java = v;
		else if (IS(JS_LAYOUT_STATE_IN_JAVA_TRANS))
			l->state_in_java_trans = v;
		else if (IS(JS_LAYOUT_STATE_IN_NATIVE))
			l->state_in_native = v;
		else if (IS(JS_LAYOUT_STATE_IN_VM))
			l->state_in_vm = v;
		else if (IS(JS_LAYOUT_STATE_BLOCKED))
			l->state_blocked = v;
		else if (IS(JS_LAYOUT_THREAD_HOLDER))
			l->thread_holder_off = v;
		else if (IS(JS_LAYOUT_THREAD_STATUS))
			l->thread_status_off = v;
		else if (IS(JS_LAYOUT_TLS_MODID))
			l->tls_modid = v;
		else if (IS(JS_LAYOUT_TLS_THREAD_OFFSET))
			l->tls_thread_offset = v;
#undef IS
	}
	if (r->err)
		return -1;
	check_continuations(l, cont_seen);
	l->valid = true;
	for (int k = 0; k < F_COUNT; k++)
		l->valid &= seen[k];
	/* Word offsets from fp must be small; byte offsets inside small structs. */
	if (l->valid && (l->interp_method_offset < -32 || l->interp_method_offset > 32 ||
			 l->interp_bcp_offset < -32 || l->interp_bcp_offset > 32 ||
			 l->interp_sender_sp_offset < -32 || l->interp_sender_sp_offset > 32 ||
			 l->entry_call_wrapper_offset < -64 || l->entry_call_wrapper_offset > 64 ||
			 l->wrapper_anchor < 0 || l->wrapper_anchor > 4096 || l->anchor_sp < 0 ||
			 l->anchor_sp > 256 || l->anchor_fp < 0 || l->anchor_fp > 256 ||
			 l->anchor_pc < 0 || l->anchor_pc > 256 || l->const_method_size <= 0 ||
			 l->const_method_size > 4096))
		l->valid = false;
	return 0;
}
