/* SPDX-License-Identifier: GPL-2.0-only */
#include "agent_store.h"

#include <stdlib.h>
#include <string.h>

#include "userspace/common/agent_protocol.h"

int store_init(struct agent_store *s)
{
	memset(s, 0, sizeof(*s));
	u64_map_init(&s->method_ids);
	u64_map_init(&s->live_code);
	u64_map_init(&s->open_version);
	s->next_method_id = 1;
	s->next_class_id = 1;
	s->next_code_id = 1;
	return pthread_mutex_init(&s->lock, NULL);
}

void store_destroy(struct agent_store *s)
{
	for (size_t i = 0; i < s->log.n; i++)
		free(s->log.v[i].bytes);
	vec_free(&s->log);
	vec_free(&s->pending);
	u64_map_free(&s->method_ids);
	u64_map_free(&s->live_code);
	u64_map_free(&s->open_version);
	pthread_mutex_destroy(&s->lock);
}

int store_has_method_locked(const struct agent_store *s, uint64_t handle)
{
	return u64_map_get(&s->method_ids, handle) != NULL;
}

uint32_t store_method_id_locked(struct agent_store *s, uint64_t handle, uint32_t class_id,
				int *is_new)
{
	uint64_t *id = u64_map_get(&s->method_ids, handle);
	struct pending_method p;

	if (is_new)
		*is_new = 0;
	if (id) {
		if (class_id && !(*id >> 32))
			*id |= (uint64_t)class_id << 32;
		return (uint32_t)*id;
	}
	p.method_id = s->next_method_id;
	p.class_id = class_id;
	p.handle = handle;
	if (u64_map_put(&s->method_ids, handle, (uint64_t)class_id << 32 | p.method_id) != 0)
		return 0;
	if (vec_push(&s->pending, p) != 0) {
		u64_map_del(&s->method_ids, handle);
		return 0;
	}
	s->next_method_id++;
	if (is_new)
		*is_new = 1;
	return p.method_id;
}

uint32_t store_method_class_locked(const struct agent_store *s, uint64_t handle)
{
	const uint64_t *id = u64_map_get(&s->method_ids, handle);

	return id ? (uint32_t)(*id >> 32) : 0;
}

uint32_t store_new_class_id_locked(struct agent_store *s)
{
	return s->next_class_id++;
}

uint64_t store_new_code_id_locked(struct agent_store *s)
{
	return s->next_code_id++;
}

uint64_t store_append_locked(struct agent_store *s, uint16_t kind, uint64_t key, int ends_life,
			     const void *payload, size_t len)
{
	struct store_entry e = {0};

	if (len > UINT32_MAX || vec_grow(&s->log) != 0)
		goto oom;
	e.bytes = malloc(len ? len : 1);
	if (!e.bytes)
		goto oom;
	memcpy(e.bytes, payload, len);
	e.len = (uint32_t)len;
	e.kind = kind;
	e.key = key;
	e.ends_life = ends_life ? 1 : 0;
	e.version = ++s->version;
	s->log.v[s->log.n++] = e;
	s->bytes += len;
	if (key && (kind == JS_REC_CODE_LOAD || kind == JS_REC_CODE_UNLOAD || kind == JS_REC_THREAD)) {
		uint64_t life = key * 2 + (kind == JS_REC_THREAD);
		uint64_t *v = u64_map_get(&s->open_version, life);

		if (!ends_life) {
			u64_map_put(&s->open_version, life, e.version);
		} else if (v) {
			/* Mark the start record dead so compaction can pair them. */
			size_t lo = 0, hi = s->log.n;
			while (lo < hi) {
				size_t mid = (lo + hi) / 2;
				if (s->log.v[mid].version < *v)
					lo = mid + 1;
				else
					hi = mid;
			}
			if (lo < s->log.n && s->log.v[lo].version == *v) {
				s->log.v[lo].end_version = e.version;
				s->dead += 2;
			}
			u64_map_del(&s->open_version, life);
		}
	}
	return e.version;
oom:
	s->dropped_oom++;
	return 0;
}

static int is_class_record(uint16_t kind)
{
	return kind == JS_REC_CLASS || kind == JS_REC_METHOD || kind == JS_REC_METHOD_REF;
}

uint64_t store_classes_unloaded_locked(struct agent_store *s, const uint32_t *class_ids, size_t n,
				       uint64_t time_ns)
{
	struct u64_map gone; /* class id -> version of the record naming it */
	uint64_t last = 0;
	size_t kept;
	struct wbuf w;

	if (n == 0)
		return 0;
	u64_map_init(&gone);
	wbuf_init(&w);
	for (size_t at = 0; at < n; at += JS_MAX_UNLOADS_PER_RECORD) {
		size_t k = n - at < JS_MAX_UNLOADS_PER_RECORD ? n - at : JS_MAX_UNLOADS_PER_RECORD;
		uint64_t v;

		wbuf_reset(&w);
		wbuf_u64(&w, time_ns);
		wbuf_u32(&w, (uint32_t)k);
		for (size_t i = 0; i < k; i++)
			wbuf_u32(&w, class_ids[at + i]);
		if (w.oom || !(v = store_append_locked(s, JS_REC_CLASS_UNLOAD, 0, 1, w.data, w.len)))
			break;
		last = v;
		s->dead++;
		for (size_t i = 0; i < k; i++)
			if (class_ids[at + i] && u64_map_put(&gone, class_ids[at + i], v) != 0)
				s->dropped_oom++;
	}
	wbuf_free(&w);
	s->classes_unloaded += gone.count;
	/* The class's own records end with the record that names it. */
	for (size_t i = 0; gone.count && i < s->log.n; i++) {
		struct store_entry *e = &s->log.v[i];
		uint64_t *v = is_class_record(e->kind) && e->key && !e->end_version ? u64_map_get(&gone, e->key) : NULL;

		if (v) {
			e->end_version = *v;
			s->dead++;
		}
	}
	/* Their handles can never come back (HotSpot leaks the jmethodIDs of
	 * an unloaded class loader): forget them, and the unresolved ones. */
	for (size_t i = 0; gone.count && i < s->method_ids.cap; i++)
		if (s->method_ids.slots[i].key && u64_map_get(&gone, s->method_ids.slots[i].val >> 32) &&
		    u64_map_del(&s->method_ids, s->method_ids.slots[i].key))
			i--; /* backward-shift deletion moved a later entry here */
	kept = 0;
	for (size_t i = 0; gone.count && i < s->pending.n; i++)
		if (u64_map_get(&s->method_ids, s->pending.v[i].handle))
			s->pending.v[kept++] = s->pending.v[i];
	if (gone.count)
		s->pending.n = kept;
	u64_map_free(&gone);
	return last;
}

int store_code_loaded_locked(struct agent_store *s, uint64_t start, uint64_t code_id)
{
	return u64_map_put(&s->live_code, start, code_id);
}

uint64_t store_code_unloaded_locked(struct agent_store *s, uint64_t start)
{
	uint64_t *id = u64_map_get(&s->live_code, start);
	uint64_t v = id ? *id : 0;

	if (id)
		u64_map_del(&s->live_code, start);
	return v;
}

void store_take_pending(struct agent_store *s, size_t max, struct pending_method **out, size_t *n,
			size_t *left)
{
	store_lock(s);
	*n = s->pending.n < max ? s->pending.n : max;
	*out = *n ? malloc(*n * sizeof(**out)) : NULL;
	if (!*out) {
		*n = 0;
	} else {
		/* Oldest first; the rest moves down. */
		memcpy(*out, s->pending.v, *n * sizeof(**out));
		memmove(s->pending.v, s->pending.v + *n, (s->pending.n - *n) * sizeof(**out));
		s->pending.n -= *n;
	}
	*left = s->pending.n;
	store_unlock(s);
}

uint32_t store_write_batch(struct agent_store *s, uint64_t since, size_t max_bytes, struct wbuf *w,
			   uint64_t *upto, int *more)
{
	size_t lo = 0, hi, count_at;
	uint32_t count = 0;

	store_lock(s);
	hi = s->log.n;
	while (lo < hi) { /* first entry with version > since */
		size_t mid = (lo + hi) / 2;
		if (s->log.v[mid].version <= since)
			lo = mid + 1;
		else
			hi = mid;
	}
	*upto = since;
	*more = 0;
	count_at = w->len;
	wbuf_u32(w, 0);
	for (size_t i = lo; i < s->log.n; i++) {
		const struct store_entry *e = &s->log.v[i];

		if (e->len > JS_AGENT_MAX_RECORD) { /* could never be sent */
			s->oversized++;
			*upto = e->version;
			continue;
		}
		if (count > 0 && w->len + e->len + 6 > max_bytes) {
			*more = 1;
			break;
		}
		wbuf_u16(w, e->kind);
		wbuf_u32(w, e->len);
		wbuf_put(w, e->bytes, e->len);
		*upto = e->version;
		count++;
	}
	/* Nothing newer yet: the batch still reports how far the log goes. */
	if (count == 0 && s->version > since && lo >= s->log.n)
		*upto = s->version;
	store_unlock(s);
	wbuf_patch_u32(w, count_at, count);
	return count;
}

size_t store_compact(struct agent_store *s, uint64_t acked)
{
	size_t out = 0, removed = 0;

	store_lock(s);
	if (s->dead == 0) {
		store_unlock(s);
		return 0;
	}
	for (size_t i = 0; i < s->log.n; i++) {
		struct store_entry *e = &s->log.v[i];

		/* An ended life whose end jsampled has: both records go. */
		if ((e->ends_life && e->version <= acked) || (e->end_version && e->end_version <= acked)) {
			s->bytes -= e->len;
			free(e->bytes);
			removed++;
			continue;
		}
		s->log.v[out++] = *e;
	}
	s->log.n = out;
	s->dead = removed > s->dead ? 0 : s->dead - removed;
	store_unlock(s);
	return removed;
}
