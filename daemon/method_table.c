#include "method_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void method_table_init(struct method_table *t)
{
	memset(t, 0, sizeof(*t));
	u64_map_init(&t->by_method_ptr);
	string_pool_init(&t->pool);
}

void method_table_free(struct method_table *t)
{
	for (size_t i = 0; i < t->methods.n; i++) {
		free(t->methods.v[i].lines);
		free(t->methods.v[i].calls);
	}
	vec_free(&t->methods);
	vec_free(&t->classes);
	u64_map_free(&t->by_method_ptr);
	string_pool_free(&t->pool);
}

/* Grows a vector of structs to hold index id, zero-filling new slots. */
static int grow_zeroed(void **v, size_t *n, size_t *cap, size_t elem, size_t id)
{
	size_t need = id + 1, ncap = *cap ? *cap : 64;
	char *p;

	if (id < *n)
		return 0;
	while (ncap < need)
		ncap *= 2;
	p = ncap > *cap ? realloc(*v, ncap * elem) : *v;
	if (!p)
		return -1;
	memset(p + *n * elem, 0, (need - *n) * elem);
	*v = p;
	if (ncap > *cap)
		*cap = ncap;
	*n = need;
	return 0;
}

#define ENSURE_SLOT(vec, id) \
	grow_zeroed((void **)&(vec).v, &(vec).n, &(vec).cap, sizeof(*(vec).v), (id))

/* "Ljava/lang/String;" -> "java.lang.String"; arrays keep their descriptor. */
static size_t java_class_name(const char *sig, size_t n, char *out, size_t outlen)
{
	size_t k = 0;

	if (n >= 2 && sig[0] == 'L' && sig[n - 1] == ';') {
		sig++;
		n -= 2;
	}
	for (size_t i = 0; i < n && k + 1 < outlen; i++)
		out[k++] = sig[i] == '/' ? '.' : sig[i];
	out[k] = 0;
	return k;
}

int method_table_put_class(struct method_table *t, struct rbuf *r)
{
	uint32_t id = rbuf_u32(r);
	size_t sn, fn;
	const char *sig = rbuf_str(r, &sn);
	const char *src = rbuf_str(r, &fn);
	char name[1024];
	size_t n;

	if (r->err || id == 0 || id >= JS_MAX_CLASS_ID)
		return -1;
	if (ENSURE_SLOT(t->classes, id) != 0)
		return -1;
	n = java_class_name(sig, sn, name, sizeof(name));
	t->classes.v[id].name = string_pool_intern(&t->pool, name, n);
	t->classes.v[id].source = string_pool_intern(&t->pool, src, fn);
	t->classes.v[id].known = t->classes.v[id].name && t->classes.v[id].source;
	return 0;
}

int method_table_put_method(struct method_table *t, struct rbuf *r)
{
	struct method_info m = {0};
	uint32_t id = rbuf_u32(r);
	size_t nn, sn;
	const char *name, *sig;

	m.class_id = rbuf_u32(r);
	m.method_ptr = rbuf_u64(r);
	m.const_method = rbuf_u64(r);
	m.code_size = rbuf_u32(r);
	m.modifiers = rbuf_u32(r);
	name = rbuf_str(r, &nn);
	sig = rbuf_str(r, &sn);
	m.nlines = rbuf_u32(r);
	if (r->err || id == 0 || id >= JS_MAX_METHOD_ID || m.class_id >= JS_MAX_CLASS_ID ||
	    m.nlines > rbuf_left(r) / 8 || m.code_size > 65535)
		return -1;
	if (m.nlines) {
		m.lines = malloc(m.nlines * sizeof(*m.lines));
		if (!m.lines)
			return -1;
		for (uint32_t i = 0; i < m.nlines; i++) {
			m.lines[i].start_bci = rbuf_u32(r);
			m.lines[i].line = rbuf_u32(r);
		}
		/* JVMTI does not promise an order: sort by bci (insertion sort, tables are short). */
		for (uint32_t i = 1; i < m.nlines; i++) {
			struct line_entry e = m.lines[i];
			uint32_t j = i;
			while (j > 0 && m.lines[j - 1].start_bci > e.start_bci) {
				m.lines[j] = m.lines[j - 1];
				j--;
			}
			m.lines[j] = e;
		}
	}
	m.ncalls = rbuf_i32(r);
	if (r->err || m.ncalls < -1 || m.ncalls > 65535 || (m.ncalls > 0 && (size_t)m.ncalls > rbuf_left(r) / 2)) {
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
	m.name = string_pool_intern(&t->pool, name, nn);
	m.signature = string_pool_intern(&t->pool, sig, sn);
	if (r->err || !m.name || !m.signature || ENSURE_SLOT(t->methods, id) != 0) {
		free(m.lines);
		free(m.calls);
		return -1;
	}
	m.known = true;
	m.named = true;
	struct method_info *slot = &t->methods.v[id];
	if (slot->known) {
		/* Re-sent after class redefinition: the old Method* may still be
		 * on stacks, so it keeps mapping to this id. */
		t->line_bytes -= slot->nlines * sizeof(struct line_entry) +
				 (slot->ncalls > 0 ? (size_t)slot->ncalls * 2 : 0);
		free(slot->lines);
		free(slot->calls);
	}
	*slot = m;
	t->line_bytes += m.nlines * sizeof(struct line_entry) + (m.ncalls > 0 ? (size_t)m.ncalls * 2 : 0);
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

	if (r->err || id == 0 || id >= JS_MAX_METHOD_ID || class_id >= JS_MAX_CLASS_ID ||
	    code_size > 65535 || !method)
		return -1;
	if (ENSURE_SLOT(t->methods, id) != 0)
		return -1;
	m = &t->methods.v[id];
	if (m->named)
		return 0; /* the full record came first */
	m->known = true;
	m->ncalls = -1;
	m->class_id = class_id;
	m->method_ptr = method;
	m->const_method = const_method;
	m->code_size = code_size;
	return u64_map_put(&t->by_method_ptr, method, id);
}

const struct method_info *method_table_get(const struct method_table *t, uint32_t id)
{
	if (id == 0 || id >= t->methods.n || !t->methods.v[id].known)
		return NULL;
	return &t->methods.v[id];
}

uint32_t method_table_by_ptr(const struct method_table *t, uint64_t method_ptr)
{
	uint64_t *id = u64_map_get(&t->by_method_ptr, method_ptr);

	return id ? (uint32_t)*id : 0;
}

int method_table_is_call_site(const struct method_table *t, uint32_t id, int32_t bci)
{
	const struct method_info *m = method_table_get(t, id);
	int32_t lo = 0, hi;

	if (!m || !m->named || m->ncalls < 0 || bci < 0)
		return -1;
	hi = m->ncalls;
	while (lo < hi) {
		int32_t mid = (lo + hi) / 2;
		if (m->calls[mid] < bci)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < m->ncalls && m->calls[lo] == bci;
}

int method_table_line(const struct method_table *t, uint32_t id, int32_t bci)
{
	const struct method_info *m = method_table_get(t, id);
	int line = -1;

	if (!m || bci < 0)
		return -1;
	for (uint32_t i = 0; i < m->nlines && m->lines[i].start_bci <= (uint32_t)bci; i++)
		line = (int)m->lines[i].line;
	return line;
}

int method_table_put_restored(struct method_table *t, uint32_t id, uint32_t class_id, const char *class_name,
			      const char *method_name)
{
	const char *cn, *mn;

	if (id == 0 || id >= JS_MAX_METHOD_ID || class_id >= JS_MAX_CLASS_ID)
		return -1;
	cn = string_pool_intern(&t->pool, class_name, strlen(class_name));
	mn = string_pool_intern(&t->pool, method_name, strlen(method_name));
	if (!cn || !mn || ENSURE_SLOT(t->methods, id) != 0)
		return -1;
	if (class_id) {
		if (ENSURE_SLOT(t->classes, class_id) != 0)
			return -1;
		t->classes.v[class_id].name = cn;
		t->classes.v[class_id].source = "";
		t->classes.v[class_id].known = true;
	}
	if (t->methods.v[id].known)
		return 0; /* the agent's own record wins */
	t->methods.v[id].known = true;
	t->methods.v[id].named = true;
	t->methods.v[id].class_id = class_id;
	t->methods.v[id].name = mn;
	t->methods.v[id].signature = "";
	t->methods.v[id].ncalls = -1;
	return 0;
}

void method_table_name(const struct method_table *t, uint32_t id, char *out, size_t outlen)
{
	const struct method_info *m = method_table_get(t, id);
	const struct class_info *c = NULL;

	if (!m) {
		snprintf(out, outlen, "[unknown method #%u]", id);
		return;
	}
	if (m->class_id && m->class_id < t->classes.n && t->classes.v[m->class_id].known)
		c = &t->classes.v[m->class_id];
	if (m->named)
		snprintf(out, outlen, "%s.%s", c ? c->name : "[unknown class]", m->name);
	else
		snprintf(out, outlen, "%s.[method #%u]", c ? c->name : "[unknown class]", id);
}

size_t method_table_bytes(const struct method_table *t)
{
	return t->methods.cap * sizeof(struct method_info) + t->classes.cap * sizeof(struct class_info) +
	       u64_map_bytes(&t->by_method_ptr) + t->pool.bytes + t->line_bytes;
}
