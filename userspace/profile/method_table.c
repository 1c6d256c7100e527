/* SPDX-License-Identifier: GPL-2.0-only */
#include "method_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "userspace/common/agent_protocol.h"
#include "safe_text.h"

void method_table_init(struct method_table *t)
{
	memset(t, 0, sizeof(*t));
	u64_map_init(&t->method_index);
	u64_map_init(&t->class_index);
	u64_map_init(&t->by_method_ptr);
	string_pool_init(&t->pool);
}

#define MEMO_SLOTS 16384 /* a power of two: 256 KiB, the call edges of a large program */

/* A call edge's answers: whether bci is a call site of the caller
 * (method_table_is_call_site) and whether that site names the callee
 * (method_table_calls), each -1, 0 or 1. */
struct call_memo {
	uint64_t key;        /* caller id << 40 | bci << 24 | callee id; 0: empty */
	uint32_t generation; /* of the table when answered */
	int8_t site;
	int8_t calls;
};

void method_table_free(struct method_table *t)
{
	free(t->memo);
	t->memo = NULL;
	for (size_t i = 0; i < t->methods.n; i++) {
		free(t->methods.v[i].lines);
		free(t->methods.v[i].calls);
		free(t->methods.v[i].targets);
	}
	vec_free(&t->methods);
	vec_free(&t->classes);
	u64_map_free(&t->method_index);
	u64_map_free(&t->class_index);
	u64_map_free(&t->by_method_ptr);
	string_pool_free(&t->pool);
}

static struct method_info *method_slot(const struct method_table *t, uint32_t id)
{
	uint64_t *i = id ? u64_map_get(&t->method_index, id) : NULL;

	return i ? &t->methods.v[*i - 1] : NULL;
}

static struct class_info *class_slot(const struct method_table *t, uint32_t id)
{
	uint64_t *i = id ? u64_map_get(&t->class_index, id) : NULL;

	return i ? &t->classes.v[*i - 1] : NULL;
}

/* The entry for id, created empty if new; NULL on allocation failure. */
static struct method_info *method_entry(struct method_table *t, uint32_t id)
{
	struct method_info *m = method_slot(t, id), fresh = {.id = id, .ncalls = -1};

	if (m)
		return m;
	if (vec_push(&t->methods, fresh) != 0)
		return NULL;
	if (u64_map_put(&t->method_index, id, t->methods.n) != 0) {
		t->methods.n--;
		return NULL;
	}
	return &t->methods.v[t->methods.n - 1];
}

static struct class_info *class_entry(struct method_table *t, uint32_t id)
{
	struct class_info *c = class_slot(t, id), fresh = {.id = id};

	if (c)
		return c;
	if (vec_push(&t->classes, fresh) != 0)
		return NULL;
	if (u64_map_put(&t->class_index, id, t->classes.n) != 0) {
		t->classes.n--;
		return NULL;
	}
	return &t->classes.v[t->classes.n - 1];
}

/* An agent's string, escaped and interned. */
static const char *intern_safe(struct method_table *t, const char *s, size_t n)
{
	char buf[JS_MAX_NAME];
	size_t len = safe_text(buf, sizeof(buf), s, n);

	return string_pool_intern(&t->pool, buf, len);
}

/* "Ljava/lang/String;" -> "java.lang.String"; arrays keep their descriptor. */
static const char *java_class_name(struct method_table *t, const char *sig, size_t n)
{
	char name[JS_MAX_NAME];
	size_t k = 0;

	if (n >= 2 && sig[0] == 'L' && sig[n - 1] == ';') {
		sig++;
		n -= 2;
	}
	for (size_t i = 0; i < n && k + 1 < sizeof(name); i++)
		name[k++] = sig[i] == '/' ? '.' : sig[i];
	return intern_safe(t, name, k);
}

int method_table_put_class(struct method_table *t, struct rbuf *r)
{
	uint32_t id = rbuf_u32(r);
	size_t sn, fn;
	const char *sig = rbuf_str(r, &sn);
	const char *src = rbuf_str(r, &fn);
	const char *name, *source;
	struct class_info *c;

	if (r->err || id == 0 || id >= JS_MAX_CLASS_ID)
		return -1;
	name = java_class_name(t, sig, sn);
	source = intern_safe(t, src, fn);
	if (!name || !source || !(c = class_entry(t, id)))
		return -1;
	c->name = name;
	c->source = source;
	return 0;
}

static int cmp_line(const void *a, const void *b)
{
	const struct line_entry *x = a, *y = b;
	return (x->start_bci > y->start_bci) - (x->start_bci < y->start_bci);
}

static size_t extra_bytes(const struct method_info *m)
{
	size_t calls = m->ncalls > 0 ? (size_t)m->ncalls : 0;

	return m->nlines * sizeof(struct line_entry) + calls * sizeof(uint16_t) +
	       (m->targets ? calls * sizeof(uint32_t) : 0);
}

int method_table_put_method(struct method_table *t, struct rbuf *r)
{
	struct method_info m = {0}, *slot;
	uint32_t id = rbuf_u32(r), code_size;
	size_t nn, sn;
	const char *name, *sig;

	t->changes++;
	m.id = id;
	m.class_id = rbuf_u32(r);
	m.method_ptr = rbuf_u64(r);
	m.const_method = rbuf_u64(r);
	code_size = rbuf_u32(r);
	m.modifiers = rbuf_u32(r);
	name = rbuf_str(r, &nn);
	sig = rbuf_str(r, &sn);
	m.nlines = rbuf_u32(r);
	if (r->err || id == 0 || id >= JS_MAX_METHOD_ID || m.class_id >= JS_MAX_CLASS_ID ||
	    m.nlines > JS_MAX_LINES || m.nlines > rbuf_left(r) / 8 || code_size > 65535)
		return -1;
	m.code_size = (uint16_t)code_size;
	if (m.nlines) {
		m.lines = malloc(m.nlines * sizeof(*m.lines));
		if (!m.lines)
			return -1;
		for (uint32_t i = 0; i < m.nlines; i++) {
			m.lines[i].start_bci = rbuf_u32(r);
			m.lines[i].line = rbuf_u32(r);
		}
		/* JVMTI does not promise an order. */
		qsort(m.lines, m.nlines, sizeof(*m.lines), cmp_line);
	}
	m.ncalls = rbuf_i32(r);
	if (r->err || m.ncalls < -1 || m.ncalls > JS_MAX_LINES || (m.ncalls > 0 && (size_t)m.ncalls > rbuf_left(r) / 2)) {
		free(m.lines);
		return -1;
	}
	if (m.ncalls > 0) {
		m.calls = malloc((size_t)m.ncalls * sizeof(*m.calls));
		if (!m.calls) {
			free(m.lines);
			return -1;
		}
		for (int32_t i = 0; i < m.ncalls; i++) {
			m.calls[i] = rbuf_u16(r);
			if (i && m.calls[i] <= m.calls[i - 1])
				r->err = 1; /* must ascend */
		}
	}
	/* Appended by newer agents: name hashes of the method and its calls. */
	if (!r->err && rbuf_left(r) >= 8) {
		uint32_t ntargets;
		m.name_hash = rbuf_u32(r);
		ntargets = rbuf_u32(r);
		if (ntargets && (m.ncalls <= 0 || ntargets != (uint32_t)m.ncalls || ntargets > rbuf_left(r) / 4))
			r->err = 1;
		if (ntargets && !r->err && (m.targets = malloc(ntargets * sizeof(*m.targets))))
			for (uint32_t i = 0; i < ntargets; i++)
				m.targets[i] = rbuf_u32(r);
	}
	m.name = intern_safe(t, name, nn);
	m.signature = intern_safe(t, sig, sn);
	if (r->err || !m.name || !m.signature || !(slot = method_entry(t, id))) {
		free(m.lines);
		free(m.calls);
		free(m.targets);
		return -1;
	}
	m.named = true;
	/* The call memo keeps definite answers only, and those name methods
	 * whose records had come: a method's first record changes none of
	 * them (new ones come every few samples while a program warms up),
	 * a record sent again may. */
	if (slot->named)
		t->generation++;
	/* Re-sent after class redefinition: the old Method* may still be on
	 * stacks, so it keeps mapping to this id. */
	t->line_bytes -= extra_bytes(slot);
	free(slot->lines);
	free(slot->calls);
	free(slot->targets);
	*slot = m;
	t->line_bytes += extra_bytes(slot);
	if (m.method_ptr)
		u64_map_put(&t->by_method_ptr, m.method_ptr, id);
	return 0;
}

int method_table_put_ref(struct method_table *t, struct rbuf *r)
{
	uint32_t id = rbuf_u32(r), class_id = rbuf_u32(r);
	uint64_t method = rbuf_u64(r), const_method = rbuf_u64(r);
	uint32_t code_size = rbuf_u32(r);
	struct method_info *m;

	t->changes++;
	if (r->err || id == 0 || id >= JS_MAX_METHOD_ID || class_id >= JS_MAX_CLASS_ID ||
	    code_size > 65535 || !method)
		return -1;
	if (!(m = method_entry(t, id)))
		return -1;
	if (m->named)
		return 0; /* the full record came first */
	m->class_id = class_id;
	m->method_ptr = method;
	m->const_method = const_method;
	m->code_size = (uint16_t)code_size;
	return u64_map_put(&t->by_method_ptr, method, id);
}

const struct method_info *method_table_get(const struct method_table *t, uint32_t id)
{
	return method_slot(t, id);
}

const char *method_table_class_name(const struct method_table *t, uint32_t class_id)
{
	const struct class_info *c = class_slot(t, class_id);

	return c ? c->name : NULL;
}

const char *method_table_class_source(const struct method_table *t, uint32_t class_id)
{
	const struct class_info *c = class_slot(t, class_id);

	return c ? c->source : NULL;
}

uint32_t method_table_by_ptr(const struct method_table *t, uint64_t method_ptr)
{
	uint64_t *id = u64_map_get(&t->by_method_ptr, method_ptr);

	return id ? (uint32_t)*id : 0;
}

/* Index of the invoke instruction at bci among m's call sites, or -1. */
static int32_t call_index(const struct method_info *m, int32_t bci)
{
	int32_t lo = 0, hi = m->ncalls;

	while (lo < hi) {
		int32_t mid = (lo + hi) / 2;
		if (m->calls[mid] < bci)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < m->ncalls && m->calls[lo] == bci ? lo : -1;
}

int method_is_call_site(const struct method_info *m, int32_t bci)
{
	if (!m || !m->named || m->ncalls < 0 || bci < 0)
		return -1;
	return call_index(m, bci) >= 0;
}

int method_table_is_call_site(const struct method_table *t, uint32_t id, int32_t bci)
{
	return method_is_call_site(method_table_get(t, id), bci);
}

/* Whether the call site at bci names callee (-1: unknown, or no call site). */
static int site_names_callee(const struct method_table *t, uint32_t id, int32_t bci, uint32_t callee)
{
	const struct method_info *m = method_table_get(t, id), *c = method_table_get(t, callee);
	int32_t at;

	if (!m || !c || !m->targets || !c->name_hash || m->ncalls <= 0 || bci < 0 ||
	    (at = call_index(m, bci)) < 0 || !m->targets[at])
		return -1;
	return m->targets[at] == c->name_hash;
}

int method_table_line(const struct method_table *t, uint32_t id, int32_t bci)
{
	const struct method_info *m = method_table_get(t, id);
	uint32_t lo = 0, hi;

	if (!m || bci < 0)
		return -1;
	hi = m->nlines;
	while (lo < hi) { /* first entry starting after bci */
		uint32_t mid = (lo + hi) / 2;
		if (m->lines[mid].start_bci <= (uint32_t)bci)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? (int)m->lines[lo - 1].line : -1;
}

int method_table_put_restored(struct method_table *t, uint32_t id, uint32_t class_id, const char *class_name,
			      const char *method_name)
{
	const char *cn, *mn;
	struct method_info *m;
	struct class_info *c;

	t->generation++;
	t->changes++;
	if (id == 0 || id >= JS_MAX_METHOD_ID || class_id >= JS_MAX_CLASS_ID)
		return -1;
	cn = intern_safe(t, class_name, strlen(class_name));
	mn = intern_safe(t, method_name, strlen(method_name));
	if (!cn || !mn)
		return -1;
	if (class_id) {
		if (!(c = class_entry(t, class_id)))
			return -1;
		c->name = cn;
		c->source = "";
	}
	if (method_slot(t, id))
		return 0; /* the agent's own record wins */
	if (!(m = method_entry(t, id)))
		return -1;
	m->named = true;
	m->class_id = class_id;
	m->name = mn;
	m->signature = "";
	return 0;
}

void method_table_name(const struct method_table *t, uint32_t id, char *out, size_t outlen)
{
	const struct method_info *m = method_table_get(t, id);
	const char *cls;

	if (!m) {
		snprintf(out, outlen, "[unknown method #%u]", id);
		return;
	}
	cls = method_table_class_name(t, m->class_id);
	if (m->named)
		snprintf(out, outlen, "%s.%s", cls ? cls : "[unknown class]", m->name);
	else
		snprintf(out, outlen, "%s.[method #%u]", cls ? cls : "[unknown class]", id);
}

bool method_is_native(const struct method_info *m)
{
	return (m->modifiers & JVM_ACC_NATIVE) != 0;
}

/* Strings are interned as they are: they were escaped when they came in. */
static const char *intern_again(struct method_table *dst, const char *s, bool *failed)
{
	const char *r = s ? string_pool_intern(&dst->pool, s, strlen(s)) : NULL;

	if (s && !r)
		*failed = true;
	return r;
}

static void *copy_array(const void *from, size_t bytes, bool *failed)
{
	void *to = bytes ? malloc(bytes) : NULL;

	if (bytes && !to)
		*failed = true;
	else if (bytes)
		memcpy(to, from, bytes);
	return to;
}

static int copy_class(struct method_table *dst, const struct class_info *c)
{
	struct class_info *nc;
	bool failed = false;

	if (class_slot(dst, c->id))
		return 0;
	if (!(nc = class_entry(dst, c->id)))
		return -1;
	nc->name = intern_again(dst, c->name, &failed);
	nc->source = intern_again(dst, c->source, &failed);
	nc->unloaded_ns = c->unloaded_ns;
	return failed ? -1 : 0;
}

/* Copies one method and its class into dst: whole, or only what names it
 * (names, signature, lines; no Method* or call sites: only decoding needs
 * those). */
static int copy_method(struct method_table *dst, const struct method_table *src, const struct method_info *m,
		       bool whole)
{
	const struct class_info *c = class_slot(src, m->class_id);
	size_t calls = m->ncalls > 0 ? (size_t)m->ncalls : 0;
	struct method_info *to;
	bool failed = false;

	if (c && copy_class(dst, c) != 0)
		return -1;
	if (!(to = method_entry(dst, m->id)))
		return -1;
	*to = (struct method_info){.id = m->id, .named = m->named, .class_id = m->class_id, .modifiers = m->modifiers,
				   .code_size = m->code_size, .ncalls = -1, .name_hash = m->name_hash};
	to->name = intern_again(dst, m->name, &failed);
	to->signature = intern_again(dst, m->signature, &failed);
	to->lines = copy_array(m->lines, m->nlines * sizeof(*m->lines), &failed);
	to->nlines = to->lines ? m->nlines : 0;
	if (whole) {
		to->method_ptr = m->method_ptr;
		to->const_method = m->const_method;
		to->ncalls = m->ncalls;
		to->calls = copy_array(m->calls, calls * sizeof(*m->calls), &failed);
		to->targets = m->targets ? copy_array(m->targets, calls * sizeof(*m->targets), &failed) : NULL;
	}
	dst->line_bytes += extra_bytes(to);
	return failed ? -1 : 0;
}

int method_table_keep(struct method_table *t, bool (*used)(void *ctx, uint32_t id), void *ctx)
{
	struct method_table kept;

	method_table_init(&kept);
	for (size_t i = 0; i < t->methods.n; i++)
		if (used(ctx, t->methods.v[i].id) && copy_method(&kept, t, &t->methods.v[i], false) != 0) {
			method_table_free(&kept);
			return -1;
		}
	kept.changes = t->changes + 1;
	kept.dropped_classes = t->dropped_classes;
	kept.dropped_methods = t->dropped_methods;
	method_table_free(t);
	*t = kept;
	return 0;
}

int method_table_unload_classes(struct method_table *t, struct rbuf *r)
{
	uint64_t when = rbuf_u64(r);
	uint32_t n = rbuf_u32(r);

	if (r->err || n > JS_MAX_UNLOADS_PER_RECORD || n > rbuf_left(r) / 4)
		return -1;
	for (uint32_t i = 0; i < n; i++) {
		struct class_info *c = class_slot(t, rbuf_u32(r));

		if (c && !c->unloaded_ns) {
			c->unloaded_ns = when ? when : 1;
			t->unloaded_classes++;
		}
	}
	return 0;
}

int method_table_drop_unloaded(struct method_table *t, uint64_t before_ns, bool (*used)(void *ctx, uint32_t id),
			       void *ctx)
{
	struct method_table kept;
	uint64_t dropped_classes = 0, dropped_methods = 0;

	method_table_init(&kept);
	for (size_t i = 0; i < t->classes.n; i++) {
		const struct class_info *c = &t->classes.v[i];

		if (c->unloaded_ns && c->unloaded_ns < before_ns)
			dropped_classes++; /* back below if a kept method names it */
		else if (copy_class(&kept, c) != 0)
			goto oom;
		else if (c->unloaded_ns)
			kept.unloaded_classes++; /* not yet */
	}
	for (size_t i = 0; i < t->methods.n; i++) {
		const struct method_info *m = &t->methods.v[i];
		const struct class_info *c = class_slot(t, m->class_id);
		bool gone = c && c->unloaded_ns && c->unloaded_ns < before_ns;

		if (gone && !used(ctx, m->id)) {
			dropped_methods++;
			continue;
		}
		if (gone && !class_slot(&kept, c->id))
			dropped_classes--;
		if (copy_method(&kept, t, m, !gone) != 0)
			goto oom;
	}
	/* Every Method* of a method kept whole (a redefined method has had
	 * more than one). */
	for (size_t i = 0; i < t->by_method_ptr.cap; i++) {
		const struct method_info *m;

		if (!t->by_method_ptr.slots[i].key)
			continue;
		m = method_slot(&kept, (uint32_t)t->by_method_ptr.slots[i].val);
		if (m && m->method_ptr && u64_map_put(&kept.by_method_ptr, t->by_method_ptr.slots[i].key, m->id) != 0)
			goto oom;
	}
	kept.changes = t->changes + 1;
	kept.dropped_classes = t->dropped_classes + dropped_classes;
	kept.dropped_methods = t->dropped_methods + dropped_methods;
	method_table_free(t);
	*t = kept;
	return 0;
oom:
	method_table_free(&kept);
	return -1;
}

/* call_edge's answer when its memo has none (out of line: the memo's hits,
 * a deep trace's thousand calls, stay a few instructions each). */
__attribute__((noinline)) static void call_edge_looked_up(const struct method_table *t, uint32_t caller, int32_t bci,
							 uint32_t callee, uint64_t key, int *site, int *calls)
{
	struct call_memo *slot = NULL;

	/* The cache is no part of the table's value: filled through a const
	 * table (the table object itself is never const). */
	if (!t->memo)
		((struct method_table *)t)->memo = calloc(MEMO_SLOTS, sizeof(*t->memo));
	if (t->memo && key)
		slot = &t->memo[(key * 0x9e3779b97f4a7c15ull) >> 40 & (MEMO_SLOTS - 1)];
	*site = method_table_is_call_site(t, caller, bci);
	*calls = *site == 0 ? -1 : site_names_callee(t, caller, bci, callee);
	/* Only definite answers are kept: an unknown one may become known. */
	if (slot && (*site == 0 || (*site == 1 && *calls >= 0)))
		*slot = (struct call_memo){
			.key = key, .generation = t->generation, .site = (int8_t)*site, .calls = (int8_t)*calls};
}

/* Both answers for a call edge, from the memo when it has them: a walk asks
 * about the same few thousand edges sample after sample, and each answer
 * costs two method lookups and a search of the caller's call sites, each
 * missing the CPU caches in a large program; the memo slot is one line. */
static inline void call_edge(const struct method_table *t, uint32_t caller, int32_t bci, uint32_t callee, int *site,
			     int *calls)
{
	/* 0: an edge the memo cannot key (ids past 24 bits, bcis past 16) */
	uint64_t key = caller < (1u << 24) && callee < (1u << 24) && bci >= 0 && bci < 0x10000
			       ? (uint64_t)caller << 40 | (uint64_t)bci << 24 | callee
			       : 0;

	if (key && t->memo) {
		const struct call_memo *slot = &t->memo[(key * 0x9e3779b97f4a7c15ull) >> 40 & (MEMO_SLOTS - 1)];

		if (slot->key == key && slot->generation == t->generation) {
			*site = slot->site;
			*calls = slot->calls;
			return;
		}
	}
	call_edge_looked_up(t, caller, bci, callee, key, site, calls);
}

int method_table_calls(const struct method_table *t, uint32_t id, int32_t bci, uint32_t callee)
{
	int site, calls;

	call_edge(t, id, bci, callee, &site, &calls);
	return calls;
}

int method_table_bad_call(const struct method_table *t, uint32_t caller, int32_t bci, uint32_t callee)
{
	int site, calls;

	call_edge(t, caller, bci, callee, &site, &calls);
	return site == 0 || calls == 0;
}

size_t method_table_bytes(const struct method_table *t)
{
	return t->methods.cap * sizeof(struct method_info) + t->classes.cap * sizeof(struct class_info) +
	       u64_map_bytes(&t->method_index) + u64_map_bytes(&t->class_index) +
	       u64_map_bytes(&t->by_method_ptr) + t->pool.bytes + t->line_bytes +
	       (t->memo ? MEMO_SLOTS * sizeof(*t->memo) : 0);
}
