/* SPDX-License-Identifier: GPL-2.0-only */
#include "daemon/decode/stack_fragment.h"
#include "replay_extract.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "userspace/common/agent_protocol.h"
#include "userspace/common/wire.h"
#include "daemon/record/recording.h"
#include "replay_outcomes.h"

enum { CAT_NOT_JAVA = 1, CAT_INCOMPLETE = 2, CAT_RULE = 16, CAT_FAIL = 64, CAT_COUNT = 128 };

#define BATCH_HEADER 25 /* u64 since, u64 upto, u64 cut, u8 more */

void extract_init(struct extract_plan *x, unsigned per_outcome, const char *only, bool minimal)
{
	memset(x, 0, sizeof(*x));
	x->per_outcome = per_outcome;
	x->only = only;
	x->minimal = minimal;
	u64_map_init(&x->kept);
	u64_map_init(&x->methods);
	u64_map_init(&x->words);
}

int extract_only_sample(struct extract_plan *x, const char *spec)
{
	unsigned long tid;
	unsigned long long t;
	char end;

	if (sscanf(spec, "%lu:%llu%c", &tid, &t, &end) != 2 || tid == 0 || tid > UINT32_MAX)
		return -1;
	x->only_tid = (uint32_t)tid;
	x->only_time_ns = t;
	return 0;
}

void extract_free(struct extract_plan *x)
{
	u64_map_free(&x->kept);
	u64_map_free(&x->methods);
	u64_map_free(&x->words);
}

/* Every value a decoding of s can look up in the model: the registers,
 * the anchor and each stack word (at every 8-byte offset). */
static void note_words(struct extract_plan *x, const struct js_sample *s)
{
	const uint64_t fixed[] = {s->anchor_sp, s->anchor_fp, s->anchor_pc};

	/* (0 is no key of the map, and no address either.) */
	for (int i = 0; i < JS_NREGS; i++)
		u64_map_put(&x->words, s->regs[i], 1);
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		u64_map_put(&x->words, fixed[i], 1);
	for (uint32_t off = 0; off + 8 <= s->stack_len; off += 8) {
		uint64_t w;
		memcpy(&w, s->stack + off, 8);
		u64_map_put(&x->words, w, 1);
	}
}

void extract_note(struct extract_plan *x, const struct js_sample *s, enum decode_status st, int reason,
		  const struct trace *tr)
{
	int cat = st == DECODE_NOT_JAVA ? CAT_NOT_JAVA
		: st == DECODE_FAILED   ? CAT_FAIL + reason
		: st == DECODE_INCOMPLETE ? CAT_INCOMPLETE
					  : CAT_RULE + tr->top_rule;

	char what[96];

	if (cat >= CAT_COUNT || x->count[cat] >= x->per_outcome)
		return;
	if (x->only_tid && (s->tid != x->only_tid || s->time_ns != x->only_time_ns))
		return;
	snprintf(what, sizeof(what), "%s %s", outcome_status_name(st), st == DECODE_NOT_JAVA ? "" : outcome_name(st, reason, tr));
	if (x->only && strncmp(what, x->only, strlen(x->only)) != 0)
		return;
	x->count[cat]++;
	u64_map_put(&x->kept, sample_key(s), 1);
	for (uint32_t i = 0; i < tr->n; i++)
		if (tr->frames[i].type != FRAME_PSEUDO)
			u64_map_put(&x->methods, (uint64_t)tr->frames[i].method_id + 1, 1);
	if (x->minimal)
		note_words(x, s);
}

/* The words of kept samples, sorted: is any in [lo, hi]? */
struct word_index {
	uint64_t *v;
	size_t n;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static int word_index_build(struct word_index *wi, const struct u64_map *words)
{
	wi->n = 0;
	wi->v = malloc((words->count + 1) * sizeof(*wi->v));
	if (!wi->v)
		return -1;
	for (size_t i = 0; i < words->cap; i++)
		if (words->slots[i].key)
			wi->v[wi->n++] = words->slots[i].key;
	qsort(wi->v, wi->n, sizeof(*wi->v), cmp_u64);
	return 0;
}

static bool word_in(const struct word_index *wi, uint64_t lo, uint64_t hi)
{
	size_t a = 0, b = wi->n;

	while (a < b) {
		size_t m = a + (b - a) / 2;
		if (wi->v[m] < lo)
			a = m + 1;
		else
			b = m;
	}
	return a < wi->n && wi->v[a] <= hi;
}

/* --minimal: what of the agent's data to keep. */
struct keep_sets {
	struct word_index words;
	struct u64_map code;    /* code id + 1 */
	struct u64_map methods; /* method id + 1 */
	struct u64_map classes; /* class id + 1 */
};

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* A CODE_LOAD record: its id, range and every method it names. */
static void scan_code(struct keep_sets *k, const uint8_t *body, uint32_t len)
{
	struct rbuf r;
	uint64_t id, start;
	uint32_t size, npc;

	rbuf_init(&r, body, len);
	id = rbuf_u64(&r);
	rbuf_u8(&r);
	rbuf_u8(&r);
	rbuf_u16(&r);
	start = rbuf_u64(&r);
	size = rbuf_u32(&r);
	if (r.err || !word_in(&k->words, start, start + size)) /* the end: a return address past a call */
		return;
	u64_map_put(&k->code, id + 1, 1);
	rbuf_u64(&r); /* load time */
	rbuf_u64(&r); /* CodeBlob* */
	for (int i = 0; i < 7; i++)
		rbuf_i32(&r);
	u64_map_put(&k->methods, (uint64_t)rbuf_u32(&r) + 1, 1);
	size_t name_len;
	rbuf_str(&r, &name_len);
	npc = rbuf_u32(&r);
	for (uint32_t i = 0; i < npc && !r.err; i++) {
		rbuf_u32(&r);
		uint8_t depth = rbuf_u8(&r);
		for (uint8_t d = 0; d < depth && !r.err; d++) {
			u64_map_put(&k->methods, (uint64_t)rbuf_u32(&r) + 1, 1);
			rbuf_i32(&r);
		}
	}
}

/* Calls fn on every record of every batch of the recording. */
typedef void (*record_fn)(struct keep_sets *k, uint16_t kind, const uint8_t *body, uint32_t len);

static int each_record(const char *path, struct keep_sets *k, record_fn fn)
{
	struct recording *rec = recording_open(path);
	int e;

	if (!rec)
		return -1;
	for (;;) {
		uint8_t type;
		pid_t pid;
		uint64_t t;
		const uint8_t *payload;
		uint32_t len;
		struct rbuf r;

		e = recording_next(rec, &type, &pid, &t, &payload, &len);
		if (e <= 0)
			break;
		if (type != REC_BATCH)
			continue;
		rbuf_init(&r, payload, len);
		rbuf_bytes(&r, BATCH_HEADER);
		uint32_t n = rbuf_u32(&r);
		for (uint32_t i = 0; i < n && !r.err; i++) {
			uint16_t kind = rbuf_u16(&r);
			uint32_t rlen = rbuf_u32(&r);
			const uint8_t *body = rbuf_bytes(&r, rlen);
			if (body)
				fn(k, kind, body, rlen);
		}
	}
	recording_close(rec);
	return e;
}

/* Pass 1: code blobs the samples point into, Method*s they hold. */
static void pass_reach(struct keep_sets *k, uint16_t kind, const uint8_t *body, uint32_t len)
{
	if (kind == JS_REC_CODE_LOAD)
		scan_code(k, body, len);
	else if ((kind == JS_REC_METHOD || kind == JS_REC_METHOD_REF) && len >= 16) {
		uint64_t method_ptr;
		memcpy(&method_ptr, body + 8, 8);
		if (word_in(&k->words, method_ptr, method_ptr))
			u64_map_put(&k->methods, (uint64_t)le32(body) + 1, 1);
	}
}

/* Pass 2: the classes of the methods kept. */
static void pass_classes(struct keep_sets *k, uint16_t kind, const uint8_t *body, uint32_t len)
{
	if ((kind == JS_REC_METHOD || kind == JS_REC_METHOD_REF) && len >= 8 &&
	    u64_map_get(&k->methods, (uint64_t)le32(body) + 1))
		u64_map_put(&k->classes, (uint64_t)le32(body + 4) + 1, 1);
}

static bool keep_record(const struct extract_plan *x, const struct keep_sets *k, uint16_t kind, const uint8_t *body,
			uint32_t len)
{
	uint64_t id;

	if (!x->minimal)
		return kind != JS_REC_METHOD || len < 4 || u64_map_get(&x->methods, (uint64_t)le32(body) + 1);
	switch (kind) {
	case JS_REC_CODE_LOAD:
	case JS_REC_CODE_UNLOAD:
		if (len < 8)
			return true;
		memcpy(&id, body, 8);
		return u64_map_get(&k->code, id + 1) != NULL;
	case JS_REC_METHOD:
	case JS_REC_METHOD_REF:
		return len < 4 || u64_map_get(&k->methods, (uint64_t)le32(body) + 1);
	case JS_REC_CLASS:
		return len < 4 || u64_map_get(&k->classes, (uint64_t)le32(body) + 1);
	default:
		return true; /* layout, threads */
	}
}

static void filter_batch(const struct extract_plan *x, const struct keep_sets *k, const uint8_t *payload,
			 uint32_t len, struct wbuf *w)
{
	struct rbuf r;
	size_t count_at;
	uint32_t kept = 0;

	rbuf_init(&r, payload, len);
	wbuf_reset(w);
	wbuf_put(w, rbuf_bytes(&r, BATCH_HEADER), BATCH_HEADER);
	uint32_t n = rbuf_u32(&r);
	count_at = w->len;
	wbuf_u32(w, 0);
	for (uint32_t i = 0; i < n && !r.err; i++) {
		uint16_t kind = rbuf_u16(&r);
		uint32_t rlen = rbuf_u32(&r);
		const uint8_t *body = rbuf_bytes(&r, rlen);

		if (!body)
			break;
		if (!keep_record(x, k, kind, body, rlen))
			continue;
		wbuf_u16(w, kind);
		wbuf_u32(w, rlen);
		wbuf_put(w, body, rlen);
		kept++;
	}
	wbuf_patch_u32(w, count_at, kept);
}

static int plan_minimal(struct extract_plan *x, const char *in, struct keep_sets *k)
{
	if (word_index_build(&k->words, &x->words) != 0)
		return -1;
	/* The kept traces' methods, and what the samples reach. */
	for (size_t i = 0; i < x->methods.cap; i++)
		if (x->methods.slots[i].key)
			u64_map_put(&k->methods, x->methods.slots[i].key, 1);
	if (each_record(in, k, pass_reach) < 0 || each_record(in, k, pass_classes) < 0)
		return -1;
	return 0;
}

int extract_write(struct extract_plan *x, const char *in, const char *out)
{
	struct recording *r = NULL, *w = NULL;
	struct keep_sets k = {0};
	uint64_t samples = 0, written = 0;
	struct wbuf filtered;
	int e = -1;

	wbuf_init(&filtered);
	u64_map_init(&k.code);
	u64_map_init(&k.methods);
	u64_map_init(&k.classes);
	if (x->minimal && plan_minimal(x, in, &k) != 0) {
		fprintf(stderr, "jsreplay: cannot read %s again\n", in);
		goto cleanup;
	}
	r = recording_open(in);
	w = recording_create(out, 9, false);
	if (!r || !w) {
		fprintf(stderr, "jsreplay: cannot open %s or create %s\n", in, out);
		goto cleanup;
	}
	for (;;) {
		uint8_t type;
		pid_t pid;
		uint64_t t;
		const uint8_t *payload;
		uint32_t len;

		e = recording_next(r, &type, &pid, &t, &payload, &len);
		if (e <= 0)
			break;
		if (type == REC_SAMPLE) {
			samples++;
			if (len < sizeof(struct js_sample) ||
			    !u64_map_get(&x->kept, sample_key((const struct js_sample *)payload)))
				continue;
		}
		if (type == REC_BATCH) {
			filter_batch(x, &k, payload, len, &filtered);
			recording_write_at(w, type, pid, t, filtered.data, filtered.len);
		} else {
			recording_write_at(w, type, pid, t, payload, len);
		}
		written++;
	}
	e = e < 0 || recording_error(w);
	fprintf(stderr, "jsreplay: wrote %llu events (%llu samples read) to %s\n", (unsigned long long)written,
		(unsigned long long)samples, out);
cleanup:
	recording_close(r);
	recording_close(w);
	wbuf_free(&filtered);
	free(k.words.v);
	u64_map_free(&k.code);
	u64_map_free(&k.methods);
	u64_map_free(&k.classes);
	return e ? 1 : 0;
}
