/* SPDX-License-Identifier: GPL-2.0-only */
#include "clickhouse_rows.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "userspace/profile/json.h"
#include "userspace/common/fnv1a.h"

/* Frames deeper than this are cut (jsampled's own traces stop at 4096). */
#define CH_MAX_FRAMES 4096

void ch_stacks_written_init(struct ch_stacks_written *w, size_t max)
{
	u64_map_init(&w->day_of);
	w->max = max;
}

void ch_stacks_written_free(struct ch_stacks_written *w)
{
	u64_map_free(&w->day_of);
}

void ch_stacks_written_add(struct ch_stacks_written *w, const uint64_t *hashes, size_t n, int64_t day)
{
	if (w->day_of.count + n > w->max) {
		u64_map_free(&w->day_of);
		u64_map_init(&w->day_of);
	}
	for (size_t i = 0; i < n; i++)
		u64_map_put(&w->day_of, hashes[i], (uint64_t)day + 1);
}

void ch_batch_init(struct ch_batch *b, const char *host, int64_t from_s, uint32_t interval_s)
{
	memset(b, 0, sizeof(*b));
	b->from_s = from_s;
	b->interval_s = interval_s;
	snprintf(b->host, sizeof(b->host), "%s", host);
	/* The same interval of the same host always has the same id: a
	 * retried batch is recognisable as one. */
	snprintf(b->batch_id, sizeof(b->batch_id), "%s/%" PRId64 "/%u", host, from_s, interval_s);
	wbuf_init(&b->samples);
	wbuf_init(&b->stacks);
	u64_map_init(&b->in_batch);
}

void ch_batch_free(struct ch_batch *b)
{
	wbuf_free(&b->samples);
	wbuf_free(&b->stacks);
	vec_free(&b->new_stacks);
	u64_map_free(&b->in_batch);
}

const char *ch_kind_of_mapping(const char *m)
{
	/* cct_pprof.c names a Mapping after each frame kind. */
	if (strstr(m, "interpreted"))
		return "interpreted";
	if (strstr(m, "compiled"))
		return "compiled";
	if (strstr(m, "native"))
		return "native";
	if (strstr(m, "kernel"))
		return "kernel";
	if (strstr(m, "JVM"))
		return "jvm";
	return "pseudo";
}

uint64_t ch_stack_hash(const char *const *names, const char *const *kinds, size_t n)
{
	static const uint8_t unit_sep = 0x1f, record_sep = 0x1e; /* between kind and name, frames */
	uint64_t h = FNV1A_START;

	for (size_t i = 0; i < n; i++) {
		h = fnv1a_bytes(fnv1a_str(h, kinds[i]), &unit_sep, 1);
		h = fnv1a_bytes(fnv1a_str(h, names[i]), &record_sep, 1);
	}
	return h ? h : 1; /* 0 is no key of a u64_map */
}

static const char *pstr(const Perftools__Profiles__Profile *p, int64_t i)
{
	return i >= 0 && (size_t)i < p->n_string_table ? p->string_table[i] : "";
}

static const Perftools__Profiles__Function *function_by_id(const Perftools__Profiles__Profile *p, uint64_t id)
{
	/* jsampled numbers functions 1..n in order; others are searched. */
	if (id >= 1 && id <= p->n_function && p->function[id - 1]->id == id)
		return p->function[id - 1];
	for (size_t i = 0; i < p->n_function; i++)
		if (p->function[i]->id == id)
			return p->function[i];
	return NULL;
}

static const Perftools__Profiles__Location *location_by_id(const Perftools__Profiles__Profile *p, uint64_t id)
{
	if (id >= 1 && id <= p->n_location && p->location[id - 1]->id == id)
		return p->location[id - 1];
	for (size_t i = 0; i < p->n_location; i++)
		if (p->location[i]->id == id)
			return p->location[i];
	return NULL;
}

static const char *mapping_name(const Perftools__Profiles__Profile *p, uint64_t id)
{
	for (size_t i = 0; i < p->n_mapping; i++)
		if (p->mapping[i]->id == id)
			return pstr(p, p->mapping[i]->filename);
	return "";
}

/* The sample's thread pool (its "thread" label, cct_pprof.c), or NULL. */
static const char *sample_thread(const Perftools__Profiles__Profile *p, const Perftools__Profiles__Sample *s)
{
	for (size_t i = 0; i < s->n_label; i++)
		if (strcmp(pstr(p, s->label[i]->key), "thread") == 0 && s->label[i]->str > 0)
			return pstr(p, s->label[i]->str);
	return NULL;
}

/* One sample's frames, root first; n is 0 if it has none. A sample with
 * a thread pool starts at a frame of kind "thread" (jsampled's thread
 * frame), so a stack's rows of different pools keep apart in the
 * samples table's key. */
static size_t sample_frames(const Perftools__Profiles__Profile *p, const Perftools__Profiles__Sample *s,
			    const char **names, const char **kinds)
{
	const char *thread = sample_thread(p, s);
	size_t n = 0;

	if (thread && thread[0] && s->n_location_id) {
		names[n] = thread;
		kinds[n++] = "thread";
	}

	/* location_id is leaf first; a Location's lines innermost first, its
	 * last line the physical frame's own (compiled or interpreted) method. */
	for (size_t i = s->n_location_id; i-- > 0 && n < CH_MAX_FRAMES;) {
		const Perftools__Profiles__Location *l = location_by_id(p, s->location_id[i]);
		const char *kind;

		if (!l)
			continue;
		kind = ch_kind_of_mapping(mapping_name(p, l->mapping_id));
		for (size_t j = l->n_line; j-- > 0 && n < CH_MAX_FRAMES;) {
			const Perftools__Profiles__Function *f = function_by_id(p, l->line[j]->function_id);

			names[n] = f ? pstr(p, f->name) : "[unknown]";
			kinds[n] = j + 1 == l->n_line ? kind : "inlined";
			n++;
		}
	}
	return n;
}

static void json_array_of(struct wbuf *w, const char *const *v, size_t n)
{
	wbuf_put(w, "[", 1);
	for (size_t i = 0; i < n; i++) {
		if (i)
			wbuf_put(w, ",", 1);
		json_quote(w, v[i]);
	}
	wbuf_put(w, "]", 1);
}

static void day_text(int64_t t, char *date, size_t datelen, char *stamp, size_t stamplen)
{
	time_t tt = (time_t)t;
	struct tm tm;

	gmtime_r(&tt, &tm);
	strftime(date, datelen, "%Y-%m-%d", &tm);
	strftime(stamp, stamplen, "%Y-%m-%d %H:%M:%S", &tm);
}

int ch_batch_add_profile(struct ch_batch *b, const struct ch_stacks_written *written,
			 const Perftools__Profiles__Profile *p, const char *profile_type, const char *service, int pid,
			 const char *const *labels, size_t n_labels)
{
	int cpu = strcmp(profile_type, "cpu") == 0;
	/* A row's count: samples, or for the agent's event types the pprof's
	 * second value, the one they are weighed by (bytes, nanoseconds). */
	size_t v = strcmp(profile_type, "alloc") == 0 || strcmp(profile_type, "lock") == 0 ? 1 : 0;
	static const char *names[CH_MAX_FRAMES], *kinds[CH_MAX_FRAMES];
	struct u64_map counts; /* stack hash -> samples in this profile */
	int64_t day = b->from_s / 86400;
	char date[16], stamp[32];
	struct wbuf keys, values;

	day_text(b->from_s, date, sizeof(date), stamp, sizeof(stamp));
	u64_map_init(&counts);
	for (size_t i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];
		uint64_t h, *have, *seen;
		size_t n;

		if (s->n_value <= v || s->value[v] <= 0)
			continue;
		n = sample_frames(p, s, names, kinds);
		if (n == 0)
			continue;
		h = ch_stack_hash(names, kinds, n);
		/* Another type's rows of the same stack must not collapse
		 * with the CPU's in the samples table's key: they name the
		 * stack by a hash of its own. */
		if (!cpu)
			h = fnv1a_str(h, profile_type);
		have = u64_map_get(&counts, h);
		if (u64_map_put(&counts, h, (have ? *have : 0) + (uint64_t)s->value[v]) != 0)
			b->oom = 1;
		/* A new stack for the store (or for this day of it). */
		seen = u64_map_get(&written->day_of, h);
		if ((seen && *seen == (uint64_t)day + 1) || u64_map_get(&b->in_batch, h))
			continue;
		if (u64_map_put(&b->in_batch, h, 1) != 0 || vec_push(&b->new_stacks, h) != 0)
			b->oom = 1;
		wbuf_printf(&b->stacks, "{\"date\":\"%s\",\"stack_hash\":%" PRIu64 ",\"frames\":", date, h);
		json_array_of(&b->stacks, names, n);
		wbuf_put(&b->stacks, ",\"kinds\":", 9);
		json_array_of(&b->stacks, kinds, n);
		wbuf_put(&b->stacks, "}\n", 2);
	}
	/* The labels, as two parallel arrays (no Map type in ClickHouse 18). */
	wbuf_init(&keys);
	wbuf_init(&values);
	wbuf_put(&keys, "[", 1);
	wbuf_put(&values, "[", 1);
	for (size_t i = 0, k = 0; i + 1 < n_labels * 2; i += 2) {
		if (!labels[i + 1] || !labels[i + 1][0])
			continue;
		if (k++) {
			wbuf_put(&keys, ",", 1);
			wbuf_put(&values, ",", 1);
		}
		json_quote(&keys, labels[i]);
		json_quote(&values, labels[i + 1]);
	}
	wbuf_put(&keys, "]", 1);
	wbuf_put(&values, "]", 1);
	for (size_t i = 0; i < counts.cap; i++) {
		if (!counts.slots[i].key)
			continue;
		wbuf_printf(&b->samples, "{\"date\":\"%s\",\"time\":\"%s\",\"interval_s\":%u,\"host\":", date, stamp,
			    b->interval_s);
		json_quote(&b->samples, b->host);
		wbuf_put(&b->samples, ",\"service\":", 11);
		json_quote(&b->samples, service);
		wbuf_printf(&b->samples, ",\"pid\":%d,\"label_keys\":", pid);
		wbuf_put(&b->samples, keys.data, keys.len);
		wbuf_put(&b->samples, ",\"label_values\":", 16);
		wbuf_put(&b->samples, values.data, values.len);
		wbuf_printf(&b->samples, ",\"stack_hash\":%" PRIu64 ",\"count\":%" PRIu64 ",\"batch_id\":", counts.slots[i].key,
			    counts.slots[i].val);
		json_quote(&b->samples, b->batch_id);
		/* CPU rows have none ('' in the store): a store of an older
		 * schema still takes them. */
		if (!cpu) {
			wbuf_put(&b->samples, ",\"profile_type\":", 16);
			json_quote(&b->samples, profile_type);
		}
		wbuf_put(&b->samples, "}\n", 2);
		b->rows++;
		b->samples_total += counts.slots[i].val;
	}
	if (keys.oom || values.oom || b->samples.oom || b->stacks.oom)
		b->oom = 1;
	wbuf_free(&keys);
	wbuf_free(&values);
	u64_map_free(&counts);
	return b->oom ? -1 : 0;
}
