/* SPDX-License-Identifier: GPL-2.0-only */
#include "jvm_model.h"

#include <string.h>

#include "userspace/common/agent_protocol.h"
#include "userspace/profile/safe_text.h"

void jvm_model_init(struct jvm_model *m)
{
	memset(m, 0, sizeof(*m));
	codemap_init(&m->code);
	method_table_init(&m->methods);
	u64_map_init(&m->threads);
}

void jvm_model_free(struct jvm_model *m)
{
	codemap_free(&m->code);
	method_table_free(&m->methods);
	u64_map_free(&m->threads);
	vec_free(&m->thread_list);
	vec_free(&m->thread_changes);
}

/* THREAD: u32 tid, u8 alive, u64 JavaThread*, u64 stack base, u64 stack
 * size, u64 time, str name. */
static int apply_thread(struct jvm_model *m, struct rbuf *r)
{
	struct jvm_thread t = {0};
	uint64_t *idx;

	t.tid = rbuf_u32(r);
	t.alive = rbuf_u8(r) != 0;
	t.java_thread = rbuf_u64(r);
	t.stack_base = rbuf_u64(r);
	t.stack_size = rbuf_u64(r);
	rbuf_u64(r);
	rbuf_str_copy(r, t.name, sizeof(t.name));
	safe_text_inplace(t.name, sizeof(t.name));
	if (r->err || t.tid == 0 || t.stack_size > t.stack_base || t.stack_size > (1ull << 34))
		return -1;
	idx = u64_map_get(&m->threads, t.tid);
	if (idx) {
		m->thread_list.v[*idx] = t;
	} else {
		if (m->thread_list.n >= (1u << 20) || vec_push(&m->thread_list, t) != 0 ||
		    u64_map_put(&m->threads, t.tid, m->thread_list.n - 1) != 0)
			return -1;
	}
	if (vec_push(&m->thread_changes, t.tid) != 0)
		return -1;
	return 0;
}

void jvm_model_forget_thread(struct jvm_model *m, uint32_t tid)
{
	uint64_t *idx = u64_map_get(&m->threads, tid);
	size_t i, last;

	if (!idx)
		return;
	i = *idx;
	last = m->thread_list.n - 1;
	u64_map_del(&m->threads, tid);
	if (i != last) {
		m->thread_list.v[i] = m->thread_list.v[last];
		u64_map_put(&m->threads, m->thread_list.v[i].tid, i);
	}
	m->thread_list.n--;
}

const struct jvm_thread *jvm_model_thread(const struct jvm_model *m, uint32_t tid)
{
	uint64_t *idx = u64_map_get(&m->threads, tid);

	return idx ? &m->thread_list.v[*idx] : NULL;
}

int jvm_model_apply_record(struct jvm_model *m, uint16_t kind, const void *payload, size_t len)
{
	struct rbuf r;
	int e;

	rbuf_init(&r, payload, len);
	switch (kind) {
	case JS_REC_VM_LAYOUT: {
		struct vm_layout l;
		e = vm_layout_parse(&l, &r);
		if (e == 0)
			m->layout = l;
		break;
	}
	case JS_REC_CODE_LOAD:
		e = codemap_load(&m->code, &r);
		break;
	case JS_REC_CODE_UNLOAD:
		e = codemap_unload(&m->code, &r);
		break;
	case JS_REC_CLASS:
		e = method_table_put_class(&m->methods, &r);
		break;
	case JS_REC_METHOD:
		e = method_table_put_method(&m->methods, &r);
		break;
	case JS_REC_METHOD_REF:
		e = method_table_put_ref(&m->methods, &r);
		break;
	case JS_REC_CLASS_UNLOAD:
		e = method_table_unload_classes(&m->methods, &r);
		break;
	case JS_REC_THREAD:
		e = apply_thread(m, &r);
		break;
	case JS_REC_EVENTS:
		return 0; /* samples, not facts about the JVM: the process takes them */
	default:
		m->unknown_records++;
		return 0;
	}
	if (e == 0)
		m->records++;
	else
		m->malformed_records++;
	return e;
}

int jvm_model_apply_batch(struct jvm_model *m, const void *payload, size_t len, struct batch_info *info,
			  size_t max_bytes)
{
	struct rbuf r;

	rbuf_init(&r, payload, len);
	info->since = rbuf_u64(&r);
	info->upto = rbuf_u64(&r);
	info->cut_ns = rbuf_u64(&r);
	info->more = rbuf_u8(&r) != 0;
	info->count = rbuf_u32(&r);
	if (r.err || info->upto < info->since)
		return BATCH_MALFORMED;
	for (uint32_t i = 0; i < info->count; i++) {
		uint16_t kind = rbuf_u16(&r);
		uint32_t rlen = rbuf_u32(&r);
		const void *body = rbuf_bytes(&r, rlen);

		if (r.err)
			return BATCH_MALFORMED;
		/* Checked before each record: one record adds at most a few
		 * times its own size, and a record is at most a message. */
		if (max_bytes && jvm_model_bytes(m) > max_bytes)
			return BATCH_OVER_LIMIT;
		jvm_model_apply_record(m, kind, body, rlen);
	}
	return rbuf_left(&r) == 0 ? BATCH_OK : BATCH_MALFORMED;
}

size_t jvm_model_code_bytes(const struct jvm_model *m)
{
	return m->code.bytes + m->code.blobs.cap * sizeof(void *) + m->code.nodes_cap * sizeof(struct codemap_node) +
	       (size_t)m->code.nhits * sizeof(*m->code.hits) + u64_map_bytes(&m->code.by_id) +
	       u64_map_bytes(&m->code.live_at);
}

size_t jvm_model_thread_bytes(const struct jvm_model *m)
{
	return m->thread_list.cap * sizeof(struct jvm_thread) + m->thread_changes.cap * sizeof(uint32_t) +
	       u64_map_bytes(&m->threads);
}

size_t jvm_model_bytes(const struct jvm_model *m)
{
	return jvm_model_code_bytes(m) + method_table_bytes(&m->methods) + jvm_model_thread_bytes(m);
}
