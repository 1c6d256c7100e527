/* SPDX-License-Identifier: GPL-2.0-only */
#include "codemap.h"

#include <stdlib.h>
#include <string.h>

#include "userspace/common/agent_protocol.h"
#include "stray_scopes.h"

/* Caps on one record, so a lying agent cannot make us allocate wildly. */
#define MAX_PCS_PER_BLOB (1u << 20)
#define MAX_FRAMES_PER_BLOB (1u << 22)
#define MAX_BLOB_SIZE (64u << 20)

void codemap_init(struct codemap *m)
{
	memset(m, 0, sizeof(*m));
	u64_map_init(&m->by_id);
	u64_map_init(&m->live_at);
	m->unload_epoch = 1;
	m->oldest_unload_ns = CODE_LIVE;
}

static size_t blob_bytes(const struct code_blob *b)
{
	return sizeof(*b) + b->npcs * sizeof(struct pc_scope) +
	       b->nframes * sizeof(struct scope_frame) + b->nstates * sizeof(struct frame_state_span) +
	       (b->name ? strlen(b->name) + 1 : 0);
}

static void blob_free(struct code_blob *b)
{
	if (!b)
		return;
	free(b->name);
	free(b->pcs);
	free(b->frames);
	free(b->states);
	free(b);
}

void codemap_free(struct codemap *m)
{
	for (size_t i = 0; i < m->blobs.n; i++)
		blob_free(m->blobs.v[i]);
	vec_free(&m->blobs);
	u64_map_free(&m->by_id);
	u64_map_free(&m->live_at);
	free(m->nodes);
	free(m->hits);
	free(m->added);
	codemap_init(m);
}

static int cmp_scope(const void *a, const void *b)
{
	const struct pc_scope *x = a, *y = b;
	return (x->pc_offset > y->pc_offset) - (x->pc_offset < y->pc_offset);
}

/* b is no blob's twin any more, nor the live blob at its start. */
static void forget_links(struct codemap *m, struct code_blob *b)
{
	uint64_t *at = u64_map_get(&m->live_at, b->start);

	if (at && *at == (uint64_t)(uintptr_t)b)
		u64_map_del(&m->live_at, b->start);
	if (b->twin) {
		b->twin->twin = NULL;
		b->twin = NULL;
	}
}

static void mark_unloaded(struct codemap *m, struct code_blob *b, uint64_t when)
{
	b->unload_ns = when;
	if (when < m->oldest_unload_ns)
		m->oldest_unload_ns = when;
	m->changes++;
	if (++m->unload_epoch == 0)
		m->unload_epoch = 1;
	if (when > m->latest_event_ns)
		m->latest_event_ns = when;
}

/* Ends b (and its twin) at when: its start may hold other code now. */
static void end_blob(struct codemap *m, struct code_blob *b, uint64_t when)
{
	struct code_blob *twin = b->twin;

	forget_links(m, b);
	mark_unloaded(m, b, when);
	if (twin && twin->unload_ns == CODE_LIVE) {
		forget_links(m, twin);
		mark_unloaded(m, twin, when);
	}
}

static bool same_code(const struct code_blob *a, const struct code_blob *b)
{
	return a->start == b->start && a->size == b->size && a->kind == b->kind && a->method_id == b->method_id;
}

/* A new compiled method b at the start of a live one: the same code again
 * (twins), or new code where the old one's unload has not come (yet). */
static int place_live(struct codemap *m, struct code_blob *b)
{
	uint64_t *at;
	struct code_blob *prev;

	/* Compiled methods only: a stub may start where the buffer it lies
	 * in starts, both live. */
	if (b->kind != JS_CODE_NMETHOD && b->kind != JS_CODE_NATIVE_WRAPPER)
		return 0;
	at = u64_map_get(&m->live_at, b->start);
	prev = at ? (struct code_blob *)(uintptr_t)*at : NULL;

	if (prev && prev->unload_ns == CODE_LIVE) {
		if (same_code(prev, b)) {
			if (prev->twin)
				return 0; /* a third report: the two cover it */
			prev->twin = b;
			b->twin = prev;
		} else if (b->load_ns >= prev->load_ns) {
			end_blob(m, prev, b->load_ns);
		}
	}
	return u64_map_put(&m->live_at, b->start, (uint64_t)(uintptr_t)b);
}

/* Removing keeps the order of the others (and so the sorted prefix). */
static void remove_blob(struct codemap *m, struct code_blob *b)
{
	forget_links(m, b);
	for (size_t i = 0; i < m->blobs.n; i++) {
		if (m->blobs.v[i] == b) {
			memmove(&m->blobs.v[i], &m->blobs.v[i + 1], (m->blobs.n - i - 1) * sizeof(b));
			m->blobs.n--;
			if (i < m->sorted) {
				memmove(&m->nodes[i], &m->nodes[i + 1], (m->sorted - i - 1) * sizeof(*m->nodes));
				m->sorted--;
			}
			break;
		}
	}
	m->indexed = false;
	m->hits_void = true;
	m->bytes -= blob_bytes(b);
	blob_free(b);
}

int codemap_load(struct codemap *m, struct rbuf *r)
{
	struct code_blob *b = calloc(1, sizeof(*b));
	size_t name_len, nframes = 0;
	const char *name;
	uint64_t *old;

	if (!b)
		return -1;
	b->id = rbuf_u64(r);
	b->kind = rbuf_u8(r);
	b->flags = rbuf_u8(r);
	rbuf_u16(r);
	b->start = rbuf_u64(r);
	b->size = rbuf_u32(r);
	b->load_ns = rbuf_u64(r);
	m->changes++;
	if (b->load_ns > m->latest_event_ns)
		m->latest_event_ns = b->load_ns;
	rbuf_u64(r); /* CodeBlob*: not needed by the decoder */
	b->frame_size_words = rbuf_i32(r);
	b->frame_complete_offset = rbuf_i32(r);
	b->verified_entry_offset = rbuf_i32(r);
	b->stub_offset = rbuf_i32(r);
	b->orig_pc_offset = rbuf_i32(r);
	b->entry_bci = rbuf_i32(r);
	b->comp_level = rbuf_i32(r);
	b->method_id = rbuf_u32(r);
	name = rbuf_str(r, &name_len);
	b->npcs = rbuf_u32(r);
	b->unload_ns = CODE_LIVE;
	if (r->err || b->id == 0 || b->size == 0 || b->size > MAX_BLOB_SIZE ||
	    b->start + b->size < b->start || b->kind >= JS_CODE_KIND_COUNT ||
	    b->npcs > MAX_PCS_PER_BLOB || b->npcs > rbuf_left(r) / 5 ||
	    b->frame_size_words < -1 || b->frame_size_words > (1 << 20))
		goto bad;
	b->name = malloc(name_len + 1);
	if (!b->name)
		goto bad;
	memcpy(b->name, name, name_len);
	b->name[name_len] = 0;
	if (b->npcs) {
		size_t cap = 64;
		b->pcs = calloc(b->npcs, sizeof(*b->pcs));
		b->frames = malloc(cap * sizeof(*b->frames));
		if (!b->pcs || !b->frames)
			goto bad;
		for (uint32_t i = 0; i < b->npcs; i++) {
			struct pc_scope *s = &b->pcs[i];
			s->pc_offset = rbuf_u32(r);
			s->depth = rbuf_u8(r);
			s->first = (uint32_t)nframes;
			if (r->err || s->pc_offset > b->size || s->depth == 0 ||
			    nframes + s->depth > MAX_FRAMES_PER_BLOB || s->depth > rbuf_left(r) / 8)
				goto bad;
			while (nframes + s->depth > cap) {
				void *p = realloc(b->frames, cap * 2 * sizeof(*b->frames));
				if (!p)
					goto bad;
				b->frames = p;
				cap *= 2;
			}
			for (uint8_t d = 0; d < s->depth; d++) {
				b->frames[nframes].method_id = rbuf_u32(r);
				b->frames[nframes].bci = rbuf_i32(r);
				nframes++;
			}
		}
		if (r->err)
			goto bad;
		b->nframes = (uint32_t)nframes;
		/* Sorted by pc with the frame ranges kept: each scope carries
		 * its own 'first', so sorting the headers alone is enough. */
		qsort(b->pcs, b->npcs, sizeof(*b->pcs), cmp_scope);
		stray_scopes_mark(b);
	}
	b->nstates = rbuf_u32(r);
	if (r->err || b->nstates > JS_MAX_FRAME_STATES || b->nstates > rbuf_left(r) / 9)
		goto bad;
	if (b->nstates) {
		b->states = calloc(b->nstates, sizeof(*b->states));
		if (!b->states)
			goto bad;
		for (uint32_t i = 0; i < b->nstates; i++) {
			struct frame_state_span *st = &b->states[i];
			st->start = rbuf_u32(r);
			st->end = rbuf_u32(r);
			st->state = rbuf_u8(r);
			/* Sorted, non-overlapping, inside the blob: else the agent lies. */
			if (r->err || st->start >= st->end || st->end > b->size ||
			    (i && st->start < b->states[i - 1].end) || st->state > JS_FRAME_STATE_MAX)
				goto bad;
		}
	}
	old = u64_map_get(&m->by_id, b->id);
	if (old)
		remove_blob(m, (struct code_blob *)(uintptr_t)*old);
	if (vec_push(&m->blobs, b) != 0 || u64_map_put(&m->by_id, b->id, (uint64_t)(uintptr_t)b) != 0 ||
	    place_live(m, b) != 0) {
		forget_links(m, b);
		if (m->blobs.n && m->blobs.v[m->blobs.n - 1] == b)
			m->blobs.n--;
		u64_map_del(&m->by_id, b->id);
		goto bad;
	}
	m->indexed = false;
	m->bytes += blob_bytes(b);
	return 0;
bad:
	blob_free(b);
	return -1;
}

int codemap_unload(struct codemap *m, struct rbuf *r)
{
	uint64_t id = rbuf_u64(r);
	uint64_t when = rbuf_u64(r);
	uint64_t *p;
	struct code_blob *b;

	if (r->err)
		return -1;
	p = u64_map_get(&m->by_id, id);
	if (!p)
		return -1;
	b = (struct code_blob *)(uintptr_t)*p;
	/* Ended already with its twin, or new code at its start: the
	 * earlier end stands. */
	if (b->unload_ns != CODE_LIVE && b->unload_ns <= when)
		return 0;
	end_blob(m, b, when);
	return 0;
}

static int cmp_blob(const void *a, const void *b)
{
	const struct code_blob *x = *(struct code_blob *const *)a, *y = *(struct code_blob *const *)b;
	if (x->start != y->start)
		return (x->start > y->start) - (x->start < y->start);
	return (x->load_ns > y->load_ns) - (x->load_ns < y->load_ns);
}

static uint64_t blob_end(const struct code_blob *b)
{
	return b->start + b->size;
}

static int reserve_nodes(struct codemap *m, size_t n)
{
	size_t cap = m->nodes_cap ? m->nodes_cap : 256;
	struct codemap_node *nodes;

	if (n <= m->nodes_cap)
		return 0;
	while (cap < n)
		cap *= 2;
	/* Line-aligned, so that no node spans two lines. */
	if (posix_memalign((void **)&nodes, 64, cap * sizeof(*nodes)) != 0)
		return -1;
	if (m->nodes)
		memcpy(nodes, m->nodes, m->sorted * sizeof(*nodes));
	free(m->nodes);
	m->nodes = nodes;
	m->nodes_cap = cap;
	return 0;
}

/* Sorts the blobs added since the last index and merges them in, from the
 * back: each older blob moves at most once, compared by its node's start
 * (its own struct is not read: a JIT adding code all the time has the
 * index rebuilt all the time, over tens of thousands of blobs). */
static int merge_new(struct codemap *m)
{
	size_t n = m->blobs.n, k = m->sorted, nnew = n - k, i = k, j = nnew, o = n;
	struct code_blob **added;

	if (nnew == 0)
		return 0;
	if (reserve_nodes(m, n) != 0 || !(added = malloc(nnew * sizeof(*added))))
		return -1;
	qsort(m->blobs.v + k, nnew, sizeof(*m->blobs.v), cmp_blob);
	memcpy(added, m->blobs.v + k, nnew * sizeof(*added));
	while (j > 0) {
		const struct code_blob *b = added[j - 1];

		o--;
		/* On equal keys the older blob stays first. */
		if (i > 0 && (m->nodes[i - 1].start > b->start ||
			      (m->nodes[i - 1].start == b->start && cmp_blob(&m->blobs.v[i - 1], &added[j - 1]) > 0))) {
			i--;
			m->blobs.v[o] = m->blobs.v[i];
			m->nodes[o] = m->nodes[i];
		} else {
			j--;
			m->blobs.v[o] = added[j];
			m->nodes[o] = (struct codemap_node){.start = b->start, .end = blob_end(b)};
		}
	}
	free(added);
	m->sorted = n;
	return 0;
}

/* max_end of node i at level lvl, for a node past the end of the array: its
 * real descendants are all in its left subtree. */
static uint64_t virtual_max(const struct codemap *m, size_t i, unsigned lvl)
{
	while (i >= m->blobs.n) {
		if (lvl == 0)
			return 0;
		lvl--;
		i -= (size_t)1 << lvl;
	}
	return m->nodes[i].max_end;
}

/* Logs the ranges of the blobs an index build adds (see codemap.h); hits
 * the log cannot vouch for any more are void from now on. */
static void log_added(struct codemap *m, size_t first, size_t n, uint32_t generation)
{
	if (!m->added && !(m->added = malloc(CODEMAP_ADDED_LOG * sizeof(*m->added)))) {
		m->hits_from = generation;
		return;
	}
	for (size_t i = first; i < first + n; i++) {
		struct codemap_added *a = &m->added[m->added_next];

		if (m->added_n == CODEMAP_ADDED_LOG && a->generation > m->hits_from)
			m->hits_from = a->generation; /* a hit older than this needs the entry */
		*a = (struct codemap_added){.start = m->blobs.v[i]->start, .end = blob_end(m->blobs.v[i]),
					    .generation = generation};
		m->added_next = (m->added_next + 1) % CODEMAP_ADDED_LOG;
		if (m->added_n < CODEMAP_ADDED_LOG)
			m->added_n++;
	}
}

/* Whether slot h's answer for pc holds for the current index; an older
 * one that no blob added since covers is brought up to date. */
static bool hit_current(struct codemap *m, struct codemap_hit *h, uint64_t pc)
{
	if (h->pc != pc)
		return false;
	if (h->generation == m->generation)
		return true;
	if (h->generation < m->hits_from || h->generation > m->generation)
		return false;
	for (uint32_t k = 1; k <= m->added_n; k++) {
		const struct codemap_added *a =
			&m->added[(m->added_next + CODEMAP_ADDED_LOG - k) % CODEMAP_ADDED_LOG];

		if (a->generation <= h->generation)
			break; /* older entries were there when the hit was made */
		if (pc >= a->start && pc < a->end)
			return false;
	}
	h->generation = m->generation;
	return true;
}

/* The hit cache for the code map's size: grown (and emptied) when the
 * code outgrows it. Nonzero: the cache is new. Without memory it stays as
 * it was (without any, every lookup searches). */
static int size_hits(struct codemap *m)
{
	uint32_t want = CODEMAP_CACHE_MIN_SLOTS;
	struct codemap_hit *h;

	while (want < CODEMAP_CACHE_MAX_SLOTS && want < m->blobs.n * CODEMAP_CACHE_PER_BLOB)
		want *= 2;
	if (m->hits && want <= m->nhits)
		return 0;
	if (!m->hits)
		want = CODEMAP_CACHE_FIRST_SLOTS;
	else if (m->hit_misses < m->nhits)
		return 0; /* seldom used: stays small */
	m->hit_misses = 0;
	if (!(h = aligned_alloc(_Alignof(struct codemap_hit), want * sizeof(*h))))
		return 0;
	memset(h, 0, want * sizeof(*h));
	free(m->hits);
	m->hits = h;
	m->nhits = want;
	return 1;
}

static int build_index(struct codemap *m)
{
	size_t n = m->blobs.n, first = m->sorted, nadded = n - m->sorted;
	uint32_t generation = m->generation + 1;

	/* The new blobs, still after the sorted ones, before the merge. */
	if (m->hits && !m->hits_void && m->generation)
		log_added(m, first, nadded, generation);
	else
		m->hits_from = generation;
	if (merge_new(m) != 0) {
		m->hits_void = true;
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		m->nodes[i].max_end = m->nodes[i].end;
	/* Level lvl holds the indices whose lowest lvl bits are 1 and the next
	 * 0; its children are i -/+ 2^(lvl-1). */
	for (unsigned lvl = 1; ((size_t)1 << lvl) <= n; lvl++) {
		size_t half = (size_t)1 << (lvl - 1);
		for (size_t i = ((size_t)1 << lvl) - 1; i < n; i += (size_t)1 << (lvl + 1)) {
			uint64_t e = m->nodes[i].max_end, l = m->nodes[i - half].max_end;
			uint64_t r = virtual_max(m, i + half, lvl - 1);
			e = l > e ? l : e;
			m->nodes[i].max_end = r > e ? r : e;
		}
	}
	if (size_hits(m) != 0)
		m->hits_from = generation; /* a new, empty cache */
	m->generation = generation;
	m->hits_void = false;
	m->indexed = true;
	return 0;
}

/* Preference between two blobs holding the same pc at time t: live at t
 * first (only a live one is returned); then loaded at or before t (load
 * times are when the agent heard of the code, a little after it was
 * installed); then, for ranges that nest (a stub inside a stub blob), the
 * smaller; then the latest loaded. */
static bool is_compiled(const struct code_blob *b)
{
	return b->kind == JS_CODE_NMETHOD || b->kind == JS_CODE_NATIVE_WRAPPER;
}

static bool better(const struct code_blob *a, const struct code_blob *b, uint64_t t)
{
	bool a_live = a->unload_ns > t, b_live = b->unload_ns > t;
	bool a_before = a->load_ns <= t, b_before = b->load_ns <= t;

	if (a_live != b_live)
		return a_live;
	if (a_before != b_before)
		return a_before;
	/* Two compiled methods never hold the same addresses at once: of two
	 * live ones, the later took the place of the other, whose unload has
	 * not come (HotSpot posts unloads later, from its service thread). */
	if (is_compiled(a) && is_compiled(b) && a_live && a_before)
		return a->load_ns > b->load_ns;
	if (a->size != b->size && a->start <= b->start && a->start + a->size >= b->start + b->size)
		return false; /* a encloses b */
	if (a->size != b->size && b->start <= a->start && b->start + b->size >= a->start + a->size)
		return true; /* b encloses a */
	if (a_before)
		return a->load_ns > b->load_ns;
	return a->load_ns < b->load_ns;
}

/* The blob live at t among those holding pc, searched in the index; *held
 * is how many hold pc (at any time), *live how many of those are live now,
 * *settled the latest load or unload among them, *visited the index nodes
 * visited. */
static const struct code_blob *search(const struct codemap *m, uint64_t pc, uint64_t t, uint32_t *held,
				      uint32_t *live, uint64_t *settled, uint32_t *visited)
{
	struct {
		size_t i;
		unsigned lvl;
	} stack[72];
	const struct code_blob *best = NULL;
	size_t n = m->blobs.n;
	unsigned top = 0, root_lvl = 0;

	*held = *live = *visited = 0;
	*settled = 0;
	while (((size_t)2 << root_lvl) <= n)
		root_lvl++;
	stack[top].i = ((size_t)1 << root_lvl) - 1;
	stack[top++].lvl = root_lvl;
	while (top > 0) {
		size_t i = stack[--top].i;
		unsigned lvl = stack[top].lvl;
		uint64_t reach = i < n ? m->nodes[i].max_end : virtual_max(m, i, lvl);

		(*visited)++;
		if (reach <= pc)
			continue; /* nothing below ends past pc */
		if (i < n) {
			if (m->nodes[i].start <= pc && pc < m->nodes[i].end) {
				const struct code_blob *b = m->blobs.v[i];
				uint64_t last = b->unload_ns == CODE_LIVE ? b->load_ns : b->unload_ns;

				(*held)++;
				*live += b->unload_ns == CODE_LIVE;
				if (last > *settled)
					*settled = last;
				if (!best || better(b, best, t))
					best = b;
			}
			/* The right subtree starts at or after blob i. */
			if (lvl > 0 && m->nodes[i].start <= pc) {
				stack[top].i = i + ((size_t)1 << (lvl - 1));
				stack[top++].lvl = lvl - 1;
			}
		}
		if (lvl > 0) {
			stack[top].i = i - ((size_t)1 << (lvl - 1));
			stack[top++].lvl = lvl - 1;
		}
	}
	return best;
}

static struct codemap_hit *hit_slot(const struct codemap *m, uint64_t pc)
{
	return m->hits ? &m->hits[u64_hash(pc) & (m->nhits - 1)] : NULL;
}

const struct code_blob *codemap_find_counted(struct codemap *m, uint64_t pc, uint64_t t, uint32_t *work)
{
	struct codemap_hit *slot;

	return codemap_find_slot(m, pc, t, work, &slot);
}

const struct code_blob *codemap_find_searched(struct codemap *m, uint64_t pc, uint64_t t, uint32_t *work,
					      struct codemap_hit **slot)
{
	const struct code_blob *best;
	struct codemap_hit *h;
	uint32_t held, live, visited;
	uint64_t settled;

	*slot = NULL;
	if (m->blobs.n == 0 || (!m->indexed && build_index(m) != 0))
		return NULL;
	*slot = h = hit_slot(m, pc);
	if (h && hit_current(m, h, pc) && t >= h->from) {
		/* With at most one blob holding pc, the search's answer at any
		 * time is that blob while it is live; with one live among
		 * unloaded ones, it is from the last of their loads and unloads
		 * on. (Unloading it later leaves none live, which the check
		 * below returns as the search would.) */
		best = h->blob;
		visited = h->visited;
	} else {
		if (h && ++m->hit_misses >= m->nhits && size_hits(m)) {
			m->hits_from = m->generation; /* a new, empty cache */
			*slot = h = hit_slot(m, pc);
		}
		best = search(m, pc, t, &held, &live, &settled, &visited);
		if (h && (held <= 1 || (live == 1 && best && best->unload_ns == CODE_LIVE && t >= settled)))
			*h = (struct codemap_hit){.pc = pc,
						  .blob = best,
						  .from = held <= 1 ? 0 : settled,
						  .generation = m->generation,
						  .visited = visited,
						  .kind = best ? best->kind : 0};
	}
	if (h && h->pc == pc && h->blob == best && best)
		h->live_epoch = best->unload_ns == CODE_LIVE ? m->unload_epoch : 0;
	if (work)
		*work += visited;
	/* Code unloaded before t ran no more at t (the unload time is when the
	 * agent heard of it, after the fact): the pc is in code the map does
	 * not know yet - often a new method at the same address, whose load
	 * the sample must wait for. */
	return best && best->unload_ns > t ? best : NULL;
}

const struct code_blob *codemap_find(struct codemap *m, uint64_t pc, uint64_t t)
{
	return codemap_find_counted(m, pc, t, NULL);
}

/* The exact scope of slot h's blob b at its pc, looked up once. */
static const struct pc_scope *slot_exact(struct codemap_hit *h, const struct code_blob *b, uint64_t pc)
{
	if (!h->exact_known) {
		h->exact = code_blob_scope(b, pc, true);
		h->exact_known = true;
	}
	return h->exact;
}

const struct codemap_hit *codemap_plain_slow(struct codemap *m, struct codemap_hit *slot, const struct code_blob *b,
					     uint64_t pc)
{
	const struct pc_scope *sc;

	if (!slot || slot->pc != pc || slot->blob != b || slot->plain == PLAIN_NO)
		return NULL;
	if (slot->plain == PLAIN_UNKNOWN) {
		slot->plain = PLAIN_NO;
		if ((b->kind != JS_CODE_NMETHOD && b->kind != JS_CODE_NATIVE_WRAPPER) || b->frame_size_words <= 0 ||
		    (b->stub_offset > 0 && pc >= b->start + (uint64_t)b->stub_offset))
			return NULL;
		sc = codemap_slot_scope(m, slot, b, pc);
		if (!sc || !sc->depth)
			return NULL;
		slot->frames = &b->frames[sc->first];
		slot->depth = sc->depth;
		slot->frame_size_words = b->frame_size_words;
		slot->plain = PLAIN_YES;
	}
	return slot;
}

const struct pc_scope *codemap_exact_scope(struct codemap *m, const struct code_blob *b, uint64_t pc)
{
	struct codemap_hit *h = hit_slot(m, pc);

	if (!h || !m->indexed || h->blob != b || !hit_current(m, h, pc))
		return code_blob_scope(b, pc, true);
	return slot_exact(h, b, pc);
}

const struct pc_scope *codemap_slot_scope(struct codemap *m, struct codemap_hit *slot, const struct code_blob *b,
					  uint64_t pc)
{
	if (!slot || slot->pc != pc || slot->blob != b)
		return codemap_exact_scope(m, b, pc);
	return slot_exact(slot, b, pc);
}

const struct pc_scope *code_blob_scope(const struct code_blob *b, uint64_t pc, bool exact)
{
	uint64_t off;
	size_t lo = 0, hi = b->npcs;

	if (pc < b->start || pc > b->start + b->size)
		return NULL;
	off = pc - b->start;
	while (lo < hi) { /* first scope with pc_offset >= off */
		size_t mid = (lo + hi) / 2;
		if (b->pcs[mid].pc_offset < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (exact)
		return lo < b->npcs && b->pcs[lo].pc_offset == off ? &b->pcs[lo] : NULL;
	/* An interrupted instruction belongs to the next descriptor strictly
	 * after it (the pc of a descriptor is the end of its instruction). */
	while (lo < b->npcs && (b->pcs[lo].pc_offset == off || b->pcs[lo].stray))
		lo++;
	return lo < b->npcs ? &b->pcs[lo] : NULL;
}

int code_blob_frame_state(const struct code_blob *b, uint64_t pc)
{
	uint64_t off;
	size_t lo = 0, hi = b->nstates;

	if (pc < b->start || !b->nstates)
		return -1;
	off = pc - b->start;
	while (lo < hi) { /* first span ending after off */
		size_t mid = (lo + hi) / 2;
		if (b->states[mid].end <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < b->nstates && b->states[lo].start <= off)
		return b->states[lo].state;
	return -1;
}

int codemap_each_method(const struct codemap *m, int (*each)(void *ctx, uint32_t id), void *ctx)
{
	for (size_t i = 0; i < m->blobs.n; i++) {
		const struct code_blob *b = m->blobs.v[i];
		int r;

		if (b->method_id && (r = each(ctx, b->method_id)) != 0)
			return r;
		for (uint32_t k = 0; k < b->nframes; k++)
			if ((r = each(ctx, b->frames[k].method_id)) != 0)
				return r;
	}
	return 0;
}

size_t codemap_prune(struct codemap *m, uint64_t before_ns)
{
	size_t out = 0, removed = 0, sorted = 0;
	uint64_t oldest = CODE_LIVE;

	if (m->oldest_unload_ns >= before_ns)
		return 0;
	for (size_t i = 0; i < m->blobs.n; i++) {
		struct code_blob *b = m->blobs.v[i];
		if (b->unload_ns < before_ns) {
			forget_links(m, b);
			u64_map_del(&m->by_id, b->id);
			m->bytes -= blob_bytes(b);
			blob_free(b);
			removed++;
			continue;
		}
		if (i < m->sorted) {
			/* the order of the rest is kept */
			m->nodes[sorted++] = m->nodes[i];
		}
		if (b->unload_ns < oldest)
			oldest = b->unload_ns;
		m->blobs.v[out++] = b;
	}
	m->blobs.n = out;
	m->oldest_unload_ns = oldest;
	m->sorted = sorted;
	if (removed) {
		m->indexed = false;
		m->hits_void = true;
		m->changes++;
	}
	return removed;
}
