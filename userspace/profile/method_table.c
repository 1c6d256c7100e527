/* SPDX-License-Identifier: GPL-2.0-only */
#include "method_table.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "userspace/common/agent_protocol.h"
#include "safe_text.h"

void method_table_init(struct method_table *t)
{
	memset(t, 0, sizeof(*t));
	u64_map_init(&t->old_ptrs);
	u64_map_init(&t->class_index);
}

/* The memo starts small (an idle JVM's few edges) and doubles while its
 * slots fill, up to the call edges of a large program. */
#define MEMO_MIN_SLOTS 1024 /* powers of two: 16 KiB */
#define MEMO_MAX_SLOTS 16384 /* 256 KiB */

/* A call edge's answers: whether bci is a call site of the caller
 * (method_table_is_call_site) and whether that site names the callee
 * (method_table_calls), each -1, 0 or 1. */
struct call_memo {
	uint64_t key;        /* caller id << 40 | bci << 24 | callee id; 0: empty */
	uint32_t generation; /* of the table when answered */
	int8_t site;
	int8_t calls;
};

/* Takes a shared blob and counts it against the table. */
static const void *take_blob(struct method_table *t, const void *bytes, size_t n)
{
	const void *b = shared_blob_get(bytes, n);

	t->shared_bytes += shared_blob_charge(b);
	return b;
}

static const void *take_ref(struct method_table *t, const void *blob)
{
	const void *b = shared_blob_ref(blob);

	t->shared_bytes += shared_blob_charge(b);
	return b;
}

static void drop_blob(struct method_table *t, const void *blob)
{
	t->shared_bytes -= shared_blob_charge(blob);
	shared_blob_put(blob);
}

void method_table_free(struct method_table *t)
{
	free(t->memo);
	for (size_t i = 0; i < t->methods.n; i++)
		drop_blob(t, t->methods.v[i].body);
	for (size_t i = 0; i < t->classes.n; i++) {
		drop_blob(t, t->classes.v[i].name);
		drop_blob(t, t->classes.v[i].source);
	}
	vec_free(&t->methods);
	vec_free(&t->classes);
	free(t->by_id.slots);
	free(t->by_ptr.slots);
	u64_map_free(&t->old_ptrs);
	u64_map_free(&t->class_index);
	memset(t, 0, sizeof(*t));
}

/* --- the two method indexes: linear probing over positions, the key
 * read from the method (so an index slot is 4 bytes) --- */

static uint64_t index_key(const struct method_table *t, const struct method_index *ix, uint32_t pos)
{
	const struct method_info *m = &t->methods.v[pos];

	return ix == &t->by_id ? m->id : m->method_ptr;
}

/* A slot holds its method's position + 1 in the low 24 bits (ids, hence
 * methods, are fewer than JS_MAX_METHOD_ID) and 8 bits of its key's hash
 * above: a probe reads the method itself only when those match. */
#define SLOT_POS_MASK ((1u << 24) - 1)
_Static_assert(JS_MAX_METHOD_ID < SLOT_POS_MASK, "positions fit a slot");

static uint32_t slot_pos(uint32_t slot)
{
	return (slot & SLOT_POS_MASK) - 1;
}

static uint32_t key_tag(uint64_t hash)
{
	return (uint32_t)(hash >> 56) << 24;
}

/* The slot holding key, or of the empty slot where it would go; cap > 0. */
static uint32_t index_probe(const struct method_table *t, const struct method_index *ix, uint64_t key)
{
	uint64_t h = u64_hash(key);
	uint32_t mask = ix->cap - 1, i = (uint32_t)h & mask, tag = key_tag(h);

	while (ix->slots[i] && ((ix->slots[i] & ~SLOT_POS_MASK) != tag || index_key(t, ix, slot_pos(ix->slots[i])) != key))
		i = (i + 1) & mask;
	return i;
}

/* A lookup, inlined for each index: decoding asks for a method (by id, or
 * by Method* for an interpreted frame) at almost every frame. */
static inline __attribute__((always_inline)) struct method_info *
index_lookup(const struct method_table *t, const struct method_index *ix, uint64_t key, bool by_ptr)
{
	uint64_t h;
	uint32_t mask, i, tag, s;

	if (!ix->cap || !key)
		return NULL;
	h = u64_hash(key);
	mask = ix->cap - 1;
	tag = key_tag(h);
	for (i = (uint32_t)h & mask; (s = ix->slots[i]); i = (i + 1) & mask)
		if ((s & ~SLOT_POS_MASK) == tag) {
			struct method_info *m = &t->methods.v[slot_pos(s)];

			if ((by_ptr ? m->method_ptr : m->id) == key)
				return m;
		}
	return NULL;
}

static int index_resize(struct method_table *t, struct method_index *ix, uint32_t cap)
{
	struct method_index grown = {.slots = calloc(cap, sizeof(uint32_t)), .cap = cap, .count = ix->count};

	if (!grown.slots)
		return -1;
	for (uint32_t j = 0; j < ix->cap; j++)
		if (ix->slots[j])
			grown.slots[index_probe(t, &grown, index_key(t, ix, slot_pos(ix->slots[j])))] = ix->slots[j];
	free(ix->slots);
	*ix = grown;
	return 0;
}

/* Points key (the method's own, nonzero) at position pos, replacing the
 * method it pointed at before, whose position goes to *was (UINT32_MAX:
 * none). */
static int index_set(struct method_table *t, struct method_index *ix, uint32_t pos, uint32_t *was)
{
	uint64_t key = index_key(t, ix, pos);
	uint32_t i;

	*was = UINT32_MAX;
	if ((ix->count + 1) * 4 > ix->cap * 3 && index_resize(t, ix, ix->cap ? ix->cap * 2 : 64) != 0)
		return -1;
	i = index_probe(t, ix, key);
	if (ix->slots[i])
		*was = slot_pos(ix->slots[i]);
	else
		ix->count++;
	ix->slots[i] = key_tag(u64_hash(key)) | (pos + 1);
	return 0;
}

/* Takes the slot of position pos (under key) out, moving later entries of
 * its probe chain back so that no lookup stops early. */
static void index_unset(struct method_table *t, struct method_index *ix, uint64_t key, uint32_t pos)
{
	uint32_t mask = ix->cap - 1, i;

	if (!ix->cap || !key)
		return;
	i = index_probe(t, ix, key);
	if (!ix->slots[i] || slot_pos(ix->slots[i]) != pos)
		return;
	for (uint32_t j = (i + 1) & mask; ix->slots[j]; j = (j + 1) & mask) {
		uint32_t home = (uint32_t)u64_hash(index_key(t, ix, slot_pos(ix->slots[j]))) & mask;
		bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);

		if (!stays) {
			ix->slots[i] = ix->slots[j];
			i = j;
		}
	}
	ix->slots[i] = 0;
	ix->count--;
}

static size_t index_bytes(const struct method_index *ix)
{
	return (size_t)ix->cap * sizeof(uint32_t);
}

static struct method_info *method_slot(const struct method_table *t, uint32_t id)
{
	return index_lookup(t, &t->by_id, id, false);
}

static struct class_info *class_slot(const struct method_table *t, uint32_t id)
{
	uint64_t *i = id ? u64_map_get(&t->class_index, id) : NULL;

	return i ? &t->classes.v[*i - 1] : NULL;
}

/* --- bodies --- */

struct body_parts {
	uint32_t nlines;
	int32_t ncalls;
	uint32_t name_hash, modifiers;
	uint16_t code_size;
	bool named;
	const struct line_entry *lines;
	const uint32_t *targets; /* NULL: none */
	const uint16_t *calls;
	const char *name, *signature;
	size_t name_len, signature_len;
};

static unsigned char *put_bytes(unsigned char *at, const void *src, size_t n)
{
	if (n)
		memcpy(at, src, n);
	return at + n;
}

/* The shared body of these parts, counted against t; NULL without memory. */
static const struct method_body *take_body(struct method_table *t, const struct body_parts *p)
{
	size_t calls = p->ncalls > 0 ? (size_t)p->ncalls : 0;
	size_t len = sizeof(struct method_body) + p->nlines * sizeof(struct line_entry) +
		     (p->targets ? calls * sizeof(uint32_t) : 0) + calls * sizeof(uint16_t) + p->name_len + 1 +
		     p->signature_len + 1;
	struct method_body head = {
		.nlines = p->nlines,
		.ncalls = p->ncalls,
		.name_hash = p->name_hash,
		.modifiers = p->modifiers,
		.code_size = p->code_size,
		.name_len = (uint16_t)p->name_len,
		.signature_len = (uint16_t)p->signature_len,
		.named = p->named,
		.has_targets = p->targets && calls,
	};
	unsigned char small[512], *buf = len <= sizeof(small) ? small : malloc(len), *at;
	const void *b;

	if (!buf)
		return NULL;
	at = buf;
	at = put_bytes(at, &head, sizeof(head));
	at = put_bytes(at, p->lines, p->nlines * sizeof(struct line_entry));
	if (head.has_targets)
		at = put_bytes(at, p->targets, calls * sizeof(uint32_t));
	at = put_bytes(at, p->calls, calls * sizeof(uint16_t));
	at = put_bytes(at, p->name, p->name_len);
	*at++ = 0;
	at = put_bytes(at, p->signature, p->signature_len);
	*at = 0;
	b = take_blob(t, buf, len);
	if (buf != small)
		free(buf);
	return b;
}

/* The body of a method known only by its Method* and bytecode size. */
static const struct method_body *take_ref_body(struct method_table *t, uint16_t code_size)
{
	const struct body_parts p = {.ncalls = -1, .code_size = code_size, .name = "", .signature = ""};

	return take_body(t, &p);
}

/* Gives the entry for id body (a reference the caller took), dropping its
 * old one; m: the entry, if method_slot found it. Creates the entry if
 * new; NULL without memory (body is then still the caller's). */
static struct method_info *method_entry(struct method_table *t, struct method_info *m, uint32_t id,
					const struct method_body *body)
{
	struct method_info fresh = {.id = id, .body = body};
	uint32_t was;

	if (m) {
		drop_blob(t, m->body);
		m->body = body;
		return m;
	}
	if (vec_push(&t->methods, fresh) != 0)
		return NULL;
	if (index_set(t, &t->by_id, (uint32_t)(t->methods.n - 1), &was) != 0) {
		t->methods.n--;
		return NULL;
	}
	return &t->methods.v[t->methods.n - 1];
}

/* Gives m the Method* ptr, kept in the index (0: m keeps the one it has). */
static int set_method_ptr(struct method_table *t, struct method_info *m, uint64_t ptr)
{
	uint32_t pos = (uint32_t)(m - t->methods.v), was;

	if (!ptr || m->method_ptr == ptr)
		return 0;
	if (m->method_ptr) {
		/* Re-sent after class redefinition: the old Method* may still
		 * be on stacks, so it keeps mapping to this id. */
		if (u64_map_put(&t->old_ptrs, m->method_ptr, m->id) != 0)
			return -1;
		index_unset(t, &t->by_ptr, m->method_ptr, pos);
		m->method_ptr = 0;
	}
	u64_map_del(&t->old_ptrs, ptr);
	m->method_ptr = ptr;
	if (index_set(t, &t->by_ptr, pos, &was) != 0) {
		m->method_ptr = 0;
		return -1;
	}
	/* The Method* of a method gone (its memory reused): the newest wins. */
	if (was != UINT32_MAX && was != pos)
		t->methods.v[was].method_ptr = 0;
	return 0;
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

/* Gives a class its names (blobs already taken), dropping the old ones. */
static void set_class_names(struct method_table *t, struct class_info *c, const char *name, const char *source)
{
	drop_blob(t, c->name);
	drop_blob(t, c->source);
	c->name = name;
	c->source = source;
}

/* An agent's string, escaped, as a shared blob counted against t. */
static const char *take_safe(struct method_table *t, const char *s, size_t n)
{
	char buf[JS_MAX_NAME];
	size_t len = safe_text(buf, sizeof(buf), s, n);

	return take_blob(t, buf, len);
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
	return take_safe(t, name, k);
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
	source = take_safe(t, src, fn);
	if (!name || !source || !(c = class_entry(t, id))) {
		drop_blob(t, name);
		drop_blob(t, source);
		return -1;
	}
	set_class_names(t, c, name, source);
	return 0;
}

static int cmp_line(const void *a, const void *b)
{
	const struct line_entry *x = a, *y = b;
	return (x->start_bci > y->start_bci) - (x->start_bci < y->start_bci);
}

/* A METHOD record's arrays, parsed into one scratch allocation. */
struct method_arrays {
	struct line_entry *lines;
	uint16_t *calls;
	uint32_t *targets;
};

static void free_arrays(struct method_arrays *a)
{
	free(a->lines);
	free(a->calls);
	free(a->targets);
}

static void method_table_trim(struct method_table *t);

int method_table_put_method(struct method_table *t, struct rbuf *r)
{
	struct body_parts p = {.named = true};
	struct method_arrays a = {0};
	struct method_info *slot;
	const struct method_body *body;
	uint32_t id = rbuf_u32(r), class_id, code_size;
	uint64_t method_ptr, const_method;
	char name[JS_MAX_NAME], sig[JS_MAX_NAME];
	const char *raw_name, *raw_sig;
	size_t nn, sn;

	t->changes++;
	class_id = rbuf_u32(r);
	method_ptr = rbuf_u64(r);
	const_method = rbuf_u64(r);
	code_size = rbuf_u32(r);
	p.modifiers = rbuf_u32(r);
	raw_name = rbuf_str(r, &nn);
	raw_sig = rbuf_str(r, &sn);
	p.nlines = rbuf_u32(r);
	if (r->err || id == 0 || id >= JS_MAX_METHOD_ID || class_id >= JS_MAX_CLASS_ID ||
	    p.nlines > JS_MAX_LINES || p.nlines > rbuf_left(r) / 8 || code_size > 65535)
		return -1;
	p.code_size = (uint16_t)code_size;
	if (p.nlines) {
		if (!(a.lines = malloc(p.nlines * sizeof(*a.lines))))
			return -1;
		for (uint32_t i = 0; i < p.nlines; i++) {
			a.lines[i].start_bci = rbuf_u32(r);
			a.lines[i].line = rbuf_u32(r);
		}
		/* JVMTI does not promise an order. */
		qsort(a.lines, p.nlines, sizeof(*a.lines), cmp_line);
	}
	p.ncalls = rbuf_i32(r);
	if (r->err || p.ncalls < -1 || p.ncalls > JS_MAX_LINES || (p.ncalls > 0 && (size_t)p.ncalls > rbuf_left(r) / 2))
		goto malformed;
	if (p.ncalls > 0) {
		if (!(a.calls = malloc((size_t)p.ncalls * sizeof(*a.calls))))
			goto malformed;
		for (int32_t i = 0; i < p.ncalls; i++) {
			a.calls[i] = rbuf_u16(r);
			if (i && a.calls[i] <= a.calls[i - 1])
				r->err = 1; /* must ascend */
		}
	}
	/* Appended by newer agents: name hashes of the method and its calls. */
	if (!r->err && rbuf_left(r) >= 8) {
		uint32_t ntargets;
		p.name_hash = rbuf_u32(r);
		ntargets = rbuf_u32(r);
		if (ntargets && (p.ncalls <= 0 || ntargets != (uint32_t)p.ncalls || ntargets > rbuf_left(r) / 4))
			r->err = 1;
		if (ntargets && !r->err && (a.targets = malloc(ntargets * sizeof(*a.targets))))
			for (uint32_t i = 0; i < ntargets; i++)
				a.targets[i] = rbuf_u32(r);
	}
	if (r->err)
		goto malformed;
	p.lines = a.lines;
	p.calls = a.calls;
	p.targets = a.targets;
	p.name = name;
	p.name_len = safe_text(name, sizeof(name), raw_name, nn);
	p.signature = sig;
	p.signature_len = safe_text(sig, sizeof(sig), raw_sig, sn);
	body = take_body(t, &p);
	free_arrays(&a);
	/* The call memo keeps definite answers only, and those name methods
	 * whose records had come: a method's first record changes none of
	 * them (new ones come every few samples while a program warms up),
	 * a record sent again may. */
	slot = method_slot(t, id);
	if (body && slot && slot->body->named)
		t->generation++;
	if (!body || !(slot = method_entry(t, slot, id, body))) {
		drop_blob(t, body);
		return -1;
	}
	slot->class_id = class_id;
	slot->const_method = const_method;
	return set_method_ptr(t, slot, method_ptr);
malformed:
	free_arrays(&a);
	return -1;
}

int method_table_put_ref(struct method_table *t, struct rbuf *r)
{
	uint32_t id = rbuf_u32(r), class_id = rbuf_u32(r);
	uint64_t method = rbuf_u64(r), const_method = rbuf_u64(r);
	uint32_t code_size = rbuf_u32(r);
	const struct method_body *body;
	struct method_info *m;

	t->changes++;
	if (r->err || id == 0 || id >= JS_MAX_METHOD_ID || class_id >= JS_MAX_CLASS_ID ||
	    code_size > 65535 || !method)
		return -1;
	if ((m = method_slot(t, id)) && m->body->named)
		return 0; /* the full record came first */
	if (!(body = take_ref_body(t, (uint16_t)code_size)))
		return -1;
	if (!(m = method_entry(t, m, id, body))) {
		drop_blob(t, body);
		return -1;
	}
	m->class_id = class_id;
	m->const_method = const_method;
	return set_method_ptr(t, m, method);
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
	const struct method_info *m = index_lookup(t, &t->by_ptr, method_ptr, true);
	uint64_t *id;

	if (m)
		return m->id;
	id = method_ptr ? u64_map_get(&t->old_ptrs, method_ptr) : NULL;
	return id ? (uint32_t)*id : 0;
}

/* Index of the invoke instruction at bci among m's call sites, or -1. */
static int32_t call_index(const struct method_info *m, int32_t bci)
{
	const uint16_t *calls = method_calls(m);
	int32_t lo = 0, hi = m->body->ncalls;

	while (lo < hi) {
		int32_t mid = (lo + hi) / 2;
		if (calls[mid] < bci)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < m->body->ncalls && calls[lo] == bci ? lo : -1;
}

int method_is_call_site(const struct method_info *m, int32_t bci)
{
	if (!m || !m->body->named || m->body->ncalls < 0 || bci < 0)
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
	const uint32_t *targets;
	int32_t at;

	if (!m || !c || !(targets = method_targets(m)) || !c->body->name_hash || m->body->ncalls <= 0 || bci < 0 ||
	    (at = call_index(m, bci)) < 0 || !targets[at])
		return -1;
	return targets[at] == c->body->name_hash;
}

int method_table_line(const struct method_table *t, uint32_t id, int32_t bci)
{
	const struct method_info *m = method_table_get(t, id);
	const struct line_entry *lines;
	uint32_t lo = 0, hi;

	if (!m || bci < 0)
		return -1;
	lines = method_lines(m);
	hi = m->body->nlines;
	while (lo < hi) { /* first entry starting after bci */
		uint32_t mid = (lo + hi) / 2;
		if (lines[mid].start_bci <= (uint32_t)bci)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? (int)lines[lo - 1].line : -1;
}

int method_table_put_restored(struct method_table *t, uint32_t id, uint32_t class_id, const char *class_name,
			      const char *method_name)
{
	char name[JS_MAX_NAME];
	struct body_parts p = {.named = true, .ncalls = -1, .signature = ""};
	const struct method_body *body;
	struct method_info *m;
	struct class_info *c;

	t->generation++;
	t->changes++;
	if (id == 0 || id >= JS_MAX_METHOD_ID || class_id >= JS_MAX_CLASS_ID)
		return -1;
	if (class_id) {
		const char *cn = take_safe(t, class_name, strlen(class_name)), *src = take_blob(t, "", 0);

		if (!cn || !src || !(c = class_entry(t, class_id))) {
			drop_blob(t, cn);
			drop_blob(t, src);
			return -1;
		}
		set_class_names(t, c, cn, src);
	}
	if (method_slot(t, id))
		return 0; /* the agent's own record wins */
	p.name = name;
	p.name_len = safe_text(name, sizeof(name), method_name, strlen(method_name));
	if (!(body = take_body(t, &p)))
		return -1;
	if (!(m = method_entry(t, NULL, id, body))) {
		drop_blob(t, body);
		return -1;
	}
	m->class_id = class_id;
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
	if (m->body->named)
		snprintf(out, outlen, "%s.%s", cls ? cls : "[unknown class]", method_name(m));
	else
		snprintf(out, outlen, "%s.[method #%u]", cls ? cls : "[unknown class]", id);
}

bool method_is_native(const struct method_info *m)
{
	return (m->body->modifiers & JVM_ACC_NATIVE) != 0;
}

static int copy_class(struct method_table *dst, const struct class_info *c)
{
	const char *name, *source;
	struct class_info *nc;

	if (class_slot(dst, c->id))
		return 0;
	name = take_ref(dst, c->name);
	source = take_ref(dst, c->source);
	if ((c->name && !name) || (c->source && !source) || !(nc = class_entry(dst, c->id))) {
		drop_blob(dst, name);
		drop_blob(dst, source);
		return -1;
	}
	nc->name = name;
	nc->source = source;
	nc->unloaded_ns = c->unloaded_ns;
	return 0;
}

/* Copies one method and its class into dst: whole, or only what names it
 * (its body; no Method*: that memory may hold another method now, and only
 * decoding needs it). */
static int copy_method(struct method_table *dst, const struct method_table *src, const struct method_info *m,
		       bool whole)
{
	const struct class_info *c = class_slot(src, m->class_id);
	const struct method_body *body;
	struct method_info *to;

	if (c && copy_class(dst, c) != 0)
		return -1;
	if (!(body = take_ref(dst, m->body)))
		return -1;
	if (!(to = method_entry(dst, method_slot(dst, m->id), m->id, body))) {
		drop_blob(dst, body);
		return -1;
	}
	to->class_id = m->class_id;
	if (whole) {
		to->const_method = m->const_method;
		return set_method_ptr(dst, to, m->method_ptr);
	}
	return 0;
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
	method_table_trim(t);
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
	/* The older Method*s of methods kept whole (a redefined method has
	 * had more than one). */
	for (size_t i = 0; i < t->old_ptrs.cap; i++) {
		const struct method_info *m;

		if (!t->old_ptrs.slots[i].key)
			continue;
		m = method_slot(&kept, (uint32_t)t->old_ptrs.slots[i].val);
		if (m && m->method_ptr && u64_map_put(&kept.old_ptrs, t->old_ptrs.slots[i].key, m->id) != 0)
			goto oom;
	}
	kept.changes = t->changes + 1;
	kept.dropped_classes = t->dropped_classes + dropped_classes;
	kept.dropped_methods = t->dropped_methods + dropped_methods;
	method_table_free(t);
	*t = kept;
	method_table_trim(t);
	return 0;
oom:
	method_table_free(&kept);
	return -1;
}

/* call_edge's answer when its memo has none (out of line: the memo's hits,
 * a deep trace's thousand calls, stay a few instructions each). */
static inline struct call_memo *memo_slot(const struct method_table *t, uint64_t key)
{
	return &t->memo[(key * 0x9e3779b97f4a7c15ull) >> 40 & (t->memo_slots - 1)];
}

/* A memo of twice the slots, keeping the answers it has; false if there
 * is none to be had. */
static bool grow_memo(struct method_table *t)
{
	uint32_t slots = t->memo_slots ? t->memo_slots * 2 : MEMO_MIN_SLOTS, old_slots = t->memo_slots;
	struct call_memo *m, *old = t->memo;

	if (slots > MEMO_MAX_SLOTS || !(m = calloc(slots, sizeof(*m))))
		return false;
	t->memo = m;
	t->memo_slots = slots;
	t->memo_fill = 0;
	for (uint32_t i = 0; i < old_slots; i++)
		if (old[i].key) {
			struct call_memo *to = memo_slot(t, old[i].key);

			t->memo_fill += !to->key;
			*to = old[i];
		}
	free(old);
	return true;
}

/* call_edge's answer when its memo has none (out of line: the memo's hits,
 * a deep trace's thousand calls, stay a few instructions each). */
__attribute__((noinline)) static void call_edge_looked_up(const struct method_table *t, uint32_t caller, int32_t bci,
							 uint32_t callee, uint64_t key, int *site, int *calls)
{
	/* The cache is no part of the table's value: filled through a const
	 * table (the table object itself is never const). */
	struct method_table *w = (struct method_table *)t;
	struct call_memo *slot = NULL;

	/* Past half full, the memo doubles. */
	if (key && (!t->memo || (t->memo_fill * 2 > t->memo_slots && t->memo_slots < MEMO_MAX_SLOTS)))
		grow_memo(w);
	if (t->memo && key)
		slot = memo_slot(t, key);
	*site = method_table_is_call_site(t, caller, bci);
	*calls = *site == 0 ? -1 : site_names_callee(t, caller, bci, callee);
	/* Only definite answers are kept: an unknown one may become known. */
	if (slot && (*site == 0 || (*site == 1 && *calls >= 0))) {
		if (!slot->key)
			w->memo_fill++;
		*slot = (struct call_memo){
			.key = key, .generation = t->generation, .site = (int8_t)*site, .calls = (int8_t)*calls};
	}
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
		const struct call_memo *slot = memo_slot(t, key);

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

static void method_table_trim(struct method_table *t)
{
	void *v;

	if (t->methods.cap > t->methods.n && t->methods.n &&
	    (v = realloc(t->methods.v, t->methods.n * sizeof(*t->methods.v)))) {
		t->methods.v = v;
		t->methods.cap = t->methods.n;
	}
	if (t->classes.cap > t->classes.n && t->classes.n &&
	    (v = realloc(t->classes.v, t->classes.n * sizeof(*t->classes.v)))) {
		t->classes.v = v;
		t->classes.cap = t->classes.n;
	}
}

void method_table_tick(struct method_table *t)
{
	if (t->changes == t->changes_at_tick)
		method_table_trim(t);
	t->changes_at_tick = t->changes;
}

size_t method_table_shared_bytes(const struct method_table *t)
{
	return t->shared_bytes;
}

size_t method_table_bytes(const struct method_table *t)
{
	return t->methods.cap * sizeof(struct method_info) + t->classes.cap * sizeof(struct class_info) +
	       index_bytes(&t->by_id) + index_bytes(&t->by_ptr) + u64_map_bytes(&t->old_ptrs) +
	       u64_map_bytes(&t->class_index) + t->shared_bytes + (size_t)t->memo_slots * sizeof(struct call_memo);
}
