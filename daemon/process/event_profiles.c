/* SPDX-License-Identifier: GPL-2.0-only */
#include "event_profiles.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "userspace/common/agent_protocol.h"
#include "userspace/profile/trace.h"

void event_profiles_free(struct event_profiles *e)
{
	for (int i = 0; i < EVENT_TREE_COUNT; i++) {
		if (e->tree[i])
			cct_free(e->tree[i]);
		free(e->tree[i]);
		e->tree[i] = NULL;
	}
}

size_t event_profiles_bytes(const struct event_profiles *e)
{
	size_t b = 0;

	for (int i = 0; i < EVENT_TREE_COUNT; i++)
		if (e->tree[i])
			b += sizeof(struct cct) + cct_bytes(e->tree[i]);
	return b;
}

void event_weights(uint64_t v, uint64_t interval, uint64_t *first, uint64_t *second)
{
	double p = interval ? -expm1(-(double)v / (double)interval) : 1.0;

	if (!(p > 0)) /* v == 0: p is 0; such an event is never sampled */
		p = 1.0;
	*first = (uint64_t)llround((double)v / p);
	*second = (uint64_t)llround(1.0 / p);
}

void event_class_name(const char *held, char *out, size_t outlen)
{
	static const struct {
		char code;
		const char *name;
	} prims[] = {{'B', "byte"}, {'C', "char"}, {'D', "double"}, {'F', "float"}, {'I', "int"},
		     {'J', "long"}, {'S', "short"}, {'Z', "boolean"}};
	size_t dims = 0, n, at;
	const char *elem = NULL;

	while (held[dims] == '[')
		dims++;
	if (!dims) {
		snprintf(out, outlen, "%s", held);
		return;
	}
	n = strlen(held + dims);
	for (size_t i = 0; i < sizeof(prims) / sizeof(prims[0]) && n == 1; i++)
		if (held[dims] == prims[i].code)
			elem = prims[i].name;
	if (elem)
		at = (size_t)snprintf(out, outlen, "%s", elem);
	else if (n >= 2 && held[dims] == 'L' && held[dims + n - 1] == ';')
		at = (size_t)snprintf(out, outlen, "%.*s", (int)(n - 2), held + dims + 1);
	else
		at = (size_t)snprintf(out, outlen, "%s", held + dims);
	for (size_t i = 0; i < dims && at + 2 < outlen; i++, at += 2)
		memcpy(out + at, "[]", 3);
}

struct cct *event_profiles_tree(struct event_profiles *e, int which, const struct event_caps *caps)
{
	struct cct *c = e->tree[which];

	if (c)
		return c;
	c = calloc(1, sizeof(*c));
	if (!c || cct_init(c, caps->max_nodes) != 0) {
		free(c);
		return NULL;
	}
	cct_set_caps(c, caps->max_nodes, caps->max_bytes);
	cct_enable_pruning(c);
	cct_slices_set_finest(&c->slices, caps->slice_s);
	if (caps->slice_max_bytes)
		c->slices.max_bytes = caps->slice_max_bytes;
	e->tree[which] = c;
	return c;
}

/* The class frame's name id: the class as Java writes it. */
static uint32_t class_frame(const struct method_table *m, struct name_refs *names, uint32_t class_id)
{
	const char *held = class_id ? method_table_class_name(m, class_id) : NULL;
	char name[JS_MAX_NAME + 64];

	if (!held)
		return 0;
	event_class_name(held, name, sizeof(name));
	return kernel_symbols_intern_for(names, name);
}

/* One event's path, root first: [truncated] when cut, the Java frames
 * from the oldest, then the class. 0 frames if malformed. */
static uint32_t event_path(struct rbuf *r, uint16_t depth, uint8_t flags, uint32_t class_id,
			   const struct method_table *m, struct name_refs *names, struct trace_frame *f)
{
	uint32_t n = 0, cls;
	uint32_t base = (flags & JS_EVENT_TRUNCATED) ? 1 : 0;

	if (base)
		f[0] = (struct trace_frame){.method_id = PSEUDO_TRUNCATED, .type = FRAME_PSEUDO, .bci = -1};
	/* leaf first on the wire: fill from the end of the Java part */
	for (uint32_t i = 0; i < depth; i++) {
		uint32_t id = rbuf_u32(r);
		int32_t bci = rbuf_i32(r);

		if (id == 0 || id >= JS_MAX_METHOD_ID)
			return 0;
		f[base + depth - 1 - i] = (struct trace_frame){
			.method_id = id, .type = FRAME_JAVA, .bci = bci >= 0 && bci <= 0xffff ? bci : -1};
	}
	if (r->err)
		return 0;
	n = base + depth;
	cls = class_frame(m, names, class_id);
	if (cls)
		f[n++] = (struct trace_frame){.method_id = cls, .type = FRAME_CLASS, .bci = -1};
	return n;
}

int event_profiles_apply(struct event_profiles *e, const struct event_caps *caps, const struct method_table *m,
			 struct name_refs *names, int64_t wall_offset_ns, const void *payload, size_t len)
{
	struct trace_frame *f = NULL;
	struct rbuf r;
	uint32_t count;
	int rc = -1;

	rbuf_init(&r, payload, len);
	uint64_t alloc_interval = rbuf_u64(&r), lock_interval = rbuf_u64(&r);
	uint64_t drops = rbuf_u64(&r), full = rbuf_u64(&r), nostack = rbuf_u64(&r);
	count = rbuf_u32(&r);
	if (r.err)
		goto bad;
	e->alloc_interval = alloc_interval;
	e->lock_interval = lock_interval;
	e->agent_dropped = drops + full + nostack;
	f = malloc((JS_MAX_EVENT_DEPTH + 2) * sizeof(*f));
	if (!f)
		goto bad;
	for (uint32_t i = 0; i < count; i++) {
		uint8_t kind = rbuf_u8(&r), flags = rbuf_u8(&r);
		uint16_t depth = rbuf_u16(&r);
		uint32_t tid = rbuf_u32(&r);
		uint64_t time_ns = rbuf_u64(&r), value = rbuf_u64(&r);
		uint32_t class_id = rbuf_u32(&r), n;
		uint64_t first, second;
		int which;

		if (r.err || kind == 0 || kind > JS_EVENT_KIND_MAX || depth == 0 || depth > JS_MAX_EVENT_DEPTH ||
		    !(n = event_path(&r, depth, flags, class_id, m, names, f)))
			goto bad;
		which = kind == JS_EVENT_ALLOC ? EVENT_ALLOC_BYTES : EVENT_LOCK_DELAY;
		event_weights(value, kind == JS_EVENT_ALLOC ? alloc_interval : lock_interval, &first, &second);
		int64_t t_s = (int64_t)((time_ns + (uint64_t)wall_offset_ns) / 1000000000u);
		struct cct *a = event_profiles_tree(e, which, caps), *b = event_profiles_tree(e, which + 1, caps);
		if (!a || !b || cct_add_samples(a, f, n, first, t_s, tid) != 0 ||
		    cct_add_samples(b, f, n, second, t_s, tid) != 0) {
			e->no_memory++;
			continue;
		}
		if (kind == JS_EVENT_ALLOC)
			e->alloc_events++;
		else if (kind == JS_EVENT_MONITOR)
			e->monitor_events++;
		else
			e->park_events++;
	}
	if (rbuf_left(&r) != 0)
		goto bad;
	rc = 0;
	goto cleanup;
bad:
	e->malformed++;
cleanup:
	free(f);
	return rc;
}
