/* SPDX-License-Identifier: GPL-2.0-only */
#include "cct.h"

#include "userspace/common/big_alloc.h"
#include "cct_internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

int cct_init(struct cct *c, uint32_t max_nodes)
{
	struct cct_node root = {.parent = 0, .method_id = 0, .type = FRAME_PSEUDO, .bci = -1};

	memset(c, 0, sizeof(*c));
	u64_map_init(&c->children);
	cct_slices_init(&c->slices);
	c->max_nodes = max_nodes < 2 ? 2 : max_nodes;
	return vec_push(&c->nodes, root) != 0 || vec_push(&c->self, (uint64_t)0) != 0 ? -1 : 0;
}

void cct_set_caps(struct cct *c, uint32_t max_nodes, size_t max_bytes)
{
	c->max_nodes = max_nodes < 2 ? 2 : max_nodes;
	c->max_bytes = max_bytes;
}

void cct_free(struct cct *c)
{
	/* Grown by big_realloc (cct_init's first elements by malloc, which
	 * big_free tells apart by their size). */
	big_free(c->nodes.v, c->nodes.cap * sizeof(*c->nodes.v));
	big_free(c->self.v, c->self.cap * sizeof(*c->self.v));
	for (int k = 0; c->paths && k < CCT_CACHED_PATHS + CCT_THREAD_PATHS; k++)
		free(c->paths[k].step);
	free(c->paths);
	u64_map_free(&c->children);
	cct_slices_free(&c->slices);
}

uint64_t cct_child_key(uint32_t parent, uint32_t method_id, uint8_t type, int32_t bci, uint32_t attempt)
{
	uint64_t k = u64_hash((uint64_t)parent << 32 | method_id) ^
		     u64_hash(((uint64_t)type << 32 | (uint32_t)bci) + (uint64_t)attempt * 0x9e3779b97f4a7c15ull);
	return k ? k : 1; /* 0 is no key of the map */
}

static bool is_node(const struct cct_node *n, uint32_t parent, uint32_t method_id, uint8_t type, int32_t bci)
{
	return n->parent == parent && n->method_id == method_id && n->type == type && n->bci == bci;
}

/* The bci a node keeps for a frame: none for a pseudo frame, and none for
 * one past a node's 24 bits (a method's bytecode ends at 65,535). */
static int32_t node_bci(uint32_t type, int32_t bci)
{
	return type == FRAME_PSEUDO || bci < -(1 << 23) || bci >= (1 << 23) ? -1 : bci;
}

/* Notes child as parent's last one (a hint). */
static uint32_t remember_child(struct cct *c, uint32_t parent, uint32_t child)
{
	c->nodes.v[parent].last_child = child;
	return child;
}

/* The child of parent for a frame, 0 if it has none; *key is set to the
 * child's children-map key whenever a new child would go into the map. */
static uint32_t find_child(struct cct *c, uint32_t parent, uint32_t method_id, uint8_t type, int32_t bci,
			   uint64_t *key)
{
	*key = 0;
	if (parent >= c->nodes.n)
		return 0;
	/* A node's children all come after it, so the newest node has none:
	 * below it (most of a new path) there is nothing to look up. */
	if (parent + 1 >= c->nodes.n)
		return 0;
	/* The nodes made for one new path are consecutive, so a child is
	 * most often the node right after its parent, on the line the
	 * parent's check has just read or the next: no miss, where the hint
	 * and the map below cost one or two each (measured in replays of
	 * fop, xalan and Jython: the next node is the child in 67-89 % of
	 * lookups). */
	if (is_node(&c->nodes.v[parent + 1], parent, method_id, type, bci))
		return parent + 1;
	if (!parent && c->root_other && is_node(&c->nodes.v[c->root_other], 0, method_id, type, bci))
		return c->root_other;
	{
		uint32_t hint = c->nodes.v[parent].last_child;
		if (hint && hint < c->nodes.n && is_node(&c->nodes.v[hint], parent, method_id, type, bci))
			return hint;
	}
	for (uint32_t attempt = 0;; attempt++) {
		uint64_t *hit;

		*key = cct_child_key(parent, method_id, type, bci, attempt);
		hit = u64_map_get(&c->children, *key);
		if (!hit)
			return 0;
		if (is_node(&c->nodes.v[*hit], parent, method_id, type, bci))
			return remember_child(c, parent, (uint32_t)*hit);
	}
}

/* What the tree itself holds: its nodes, their hints and the children
 * map, as allocated (the path cache and time slices are apart). */
static size_t tree_bytes(const struct cct *c)
{
	return big_alloc_footprint(c->nodes.cap * sizeof(struct cct_node)) +
	       big_alloc_footprint(c->self.cap * sizeof(uint64_t)) + u64_map_bytes(&c->children);
}

/* The node array and its counts for cap nodes, as allocated. */
static size_t arrays_bytes(size_t cap)
{
	return big_alloc_footprint(cap * sizeof(struct cct_node)) + big_alloc_footprint(cap * sizeof(uint64_t));
}

/* A node and its count. */
#define NODE_BYTES (sizeof(struct cct_node) + sizeof(uint64_t))

/* The bytes ordinary nodes may take; the rest of max_bytes is kept for
 * [other] nodes, one per parent where paths pass the cap, and the last
 * node's room for the root's. */
static size_t nodes_budget(const struct cct *c)
{
	size_t kept = c->max_bytes / 32 + NODE_BYTES;

	return c->max_bytes > kept ? c->max_bytes - kept : 0;
}

/* Grows the node array and its hints together to room for n nodes, more
 * if budget allows (by half, as vec.h grows), never past it with the map's
 * coming growth (map_growth bytes); past it only if must (then to n). */
static bool reserve_nodes(struct cct *c, size_t n, size_t budget, size_t map_growth, bool must)
{
	size_t want = c->nodes.cap < 4096 ? 2 * c->nodes.cap + 8 : c->nodes.cap + c->nodes.cap / 2;
	struct cct_node *nodes;
	uint64_t *self;

	if (n <= c->nodes.cap && n <= c->self.cap)
		return true;
	if (want < n)
		want = n;
	if (c->max_bytes) {
		size_t other = tree_bytes(c) - arrays_bytes(c->nodes.cap > c->self.cap ? c->nodes.cap : c->self.cap) +
			       map_growth;
		size_t room = budget > other ? budget - other : 0;

		/* The most nodes whose arrays, rounded as allocated, fit. */
		if (arrays_bytes(want) > room) {
			size_t lo = c->nodes.cap, hi = want; /* lo fits (it is allocated), hi does not */

			if (arrays_bytes(lo) > room)
				hi = lo;
			while (hi - lo > 1) {
				size_t mid = lo + (hi - lo) / 2;

				*(arrays_bytes(mid) <= room ? &lo : &hi) = mid;
			}
			want = lo;
		}
		if (want < n && !must)
			return false;
		if (want < n)
			want = n;
	}
	if (!(nodes = big_realloc(c->nodes.v, c->nodes.cap * sizeof(*nodes), want * sizeof(*nodes))))
		return false;
	c->nodes.v = nodes;
	c->nodes.cap = want;
	if (!(self = big_realloc(c->self.v, c->self.cap * sizeof(*self), want * sizeof(*self))))
		return false;
	c->self.v = self;
	c->self.cap = want;
	return true;
}

/* Whether one more node (with a children-map entry if in_map) fits
 * budget bytes of memory actually allocated (and, unless an [other] node,
 * max_nodes). The arrays grow here, within the budget, so the push that
 * follows needs no more. */
static bool room_for_node(struct cct *c, bool in_map, size_t budget, bool other)
{
	if ((!other && c->nodes.n >= c->max_nodes) || c->nodes.n >= UINT32_MAX - 1)
		return false;
	if (!c->max_bytes)
		return true;
	/* The map doubles when it passes three quarters full (u64_map.c). */
	size_t map_growth = in_map && (c->children.count + 1) * 4 > c->children.cap * 3
				    ? big_alloc_footprint((c->children.cap ? 2 * c->children.cap : 16) * 16) -
					      u64_map_bytes(&c->children)
				    : 0;

	if (tree_bytes(c) + map_growth > budget)
		return false;
	return reserve_nodes(c, c->nodes.n + 1, budget, map_growth, false);
}

/* Makes the child found missing by find_child (key: its map key, 0 if it
 * is the node right after parent). 0 without memory. */
static uint32_t make_child(struct cct *c, uint32_t parent, uint32_t method_id, uint8_t type, int32_t bci,
			   uint64_t key)
{
	struct cct_node n = {.parent = parent, .method_id = method_id, .type = type, .bci = bci};

	if (parent >= c->nodes.n || c->nodes.n >= UINT32_MAX - 1 || !reserve_nodes(c, c->nodes.n + 1, c->max_bytes, 0, true))
		return 0;
	/* Room reserved above (never vec_push: its realloc is not big_realloc). */
	c->nodes.v[c->nodes.n++] = n;
	c->self.v[c->nodes.n - 1] = 0;
	c->self.n = c->nodes.n;
	/* A child made right after its parent is always found by the check
	 * of the next node, so only the others go into the children map (a
	 * new path's nodes after its first: one map write each saved, and
	 * the map's size). */
	if (key && u64_map_put(&c->children, key, c->nodes.n - 1) != 0) {
		c->nodes.n--;
		c->self.n--;
		return 0;
	}
	return remember_child(c, parent, (uint32_t)(c->nodes.n - 1));
}

uint32_t cct_child(struct cct *c, uint32_t parent, uint32_t method_id, uint8_t type, int32_t bci, int create)
{
	uint64_t key;
	uint32_t found;

	bci = node_bci(type, bci);
	found = find_child(c, parent, method_id, type, bci, &key);

	return found || !create ? found : make_child(c, parent, method_id, type, bci, key);
}

/* The child for a frame, made if the caps leave room for it; 0 if not. */
uint32_t cct_child_within_caps(struct cct *c, uint32_t parent, uint32_t method_id, uint8_t type, int32_t bci)
{
	uint64_t key;
	uint32_t found = find_child(c, parent, method_id, type, bci, &key);

	if (found || parent >= c->nodes.n || !room_for_node(c, key != 0, nodes_budget(c), false))
		return found;
	return make_child(c, parent, method_id, type, bci, key);
}

/* Where a path past the caps ends: parent's [other] node, made in the
 * memory kept for such nodes; with that gone too, the root's, which is
 * kept apart from the children map (whose next growth may not fit): one
 * node's room is always left for it. 0 without memory. */
uint32_t cct_overflow_node(struct cct *c, uint32_t parent)
{
	uint64_t key;
	uint32_t found = find_child(c, parent, PSEUDO_OVERFLOW, FRAME_PSEUDO, -1, &key);

	if (found)
		return found;
	if (parent >= c->nodes.n)
		return 0;
	if (parent) {
		if (room_for_node(c, key != 0, c->max_bytes ? c->max_bytes - NODE_BYTES : 0, true))
			return make_child(c, parent, PSEUDO_OVERFLOW, FRAME_PSEUDO, -1, key);
		return cct_overflow_node(c, 0);
	}
	return c->root_other = make_child(c, 0, PSEUDO_OVERFLOW, FRAME_PSEUDO, -1, 0);
}

static int32_t frame_bci(const struct trace_frame *f)
{
	return node_bci(f->type, f->bci);
}

/* A path keeps its frames as the trace had them (the bci unclamped): the
 * same frame is the same node, compared without node_bci; two frames
 * that differ only where node_bci makes them one node end the shared
 * prefix there, and the lookup below finds that node. */
static bool same_step(const struct cct_path_step *s, const struct trace_frame *f)
{
	return s->method_id == f->method_id && s->bci == f->bci && s->type == f->type;
}

/* The cached path sharing the longest prefix with frames (*shared frames),
 * or, when none shares any, the least recently used one; NULL without a
 * cache (no memory: every frame is looked up). */
static struct cct_path *best_path(struct cct *c, const struct trace_frame *frames, uint32_t n, uint32_t *shared,
				  int thread_slot)
{
	struct cct_path *best = NULL;
	int from = 0, to = CCT_CACHED_PATHS;

	*shared = 0;
	if (!c->paths && !(c->paths = calloc(CCT_CACHED_PATHS + CCT_THREAD_PATHS, sizeof(*c->paths))))
		return NULL;
	/* A thread's samples mostly share a long prefix with its previous one:
	 * its own slot is the only one compared. */
	if (thread_slot >= 0) {
		from = CCT_CACHED_PATHS + thread_slot % CCT_THREAD_PATHS;
		to = from + 1;
	}
	for (int k = from; k < to; k++) {
		struct cct_path *p = &c->paths[k];
		uint32_t m = 0, lim = p->n < n ? p->n : n;

		while (m < lim && same_step(&p->step[m], &frames[m]))
			m++;
		if (m > *shared || (m == *shared && (!best || p->age < best->age))) {
			best = p;
			*shared = m;
		}
	}
	best->age = ++c->path_uses;
	return best;
}

/* How many of a path's first n steps it can keep (up to CCT_CACHED_DEPTH),
 * grown for them at once: the loop below stores steps without checks. */
static uint32_t steps_room(struct cct_path *p, uint32_t n)
{
	uint32_t want = n < CCT_CACHED_DEPTH ? n : CCT_CACHED_DEPTH;

	if (!p)
		return 0;
	if (want > p->cap) {
		uint32_t cap = p->cap ? p->cap : 64;
		struct cct_path_step *grown;

		while (cap < want)
			cap *= 2;
		if ((grown = realloc(p->step, cap * sizeof(*grown)))) {
			p->step = grown;
			p->cap = cap;
		}
	}
	return want < p->cap ? want : p->cap; /* without memory, the path stays as long as it was: only a cache */
}

/* The node a root-first path ends in, created as far as the cap allows;
 * 0 on allocation failure. */
static uint32_t path_node(struct cct *c, const struct trace_frame *frames, uint32_t n, uint64_t count, int thread_slot)
{
	uint32_t shared, node = 0, i;
	struct cct_path *path = best_path(c, frames, n, &shared, thread_slot);
	uint32_t keep = steps_room(path, n);

	if (shared)
		node = path->step[shared - 1].node;
	for (i = shared; i < n; i++) {
		const struct trace_frame *f = &frames[i];
		int32_t bci = frame_bci(f);
		uint32_t next;

		/* cct_child's first check, without the call: most frames of a
		 * path below its shared prefix are the node after their parent. */
		if (node + 1 < c->nodes.n && is_node(&c->nodes.v[node + 1], node, f->method_id, f->type, bci))
			next = node + 1;
		else
			next = cct_child_within_caps(c, node, f->method_id, f->type, bci);

		if (!next) {
			/* Over the cap: the rest of the path collapses into [other]
			 * (one such node per parent, past the node cap, in the
			 * bytes kept for them; past those, the root's). */
			next = cct_overflow_node(c, node);
			if (next)
				c->overflow_samples += count;
			c->full = true;
			node = next;
			break;
		}
		if (i < keep)
			path->step[i] = (struct cct_path_step){
				.method_id = f->method_id, .bci = f->bci, .type = f->type, .node = next};
		node = next;
	}
	/* The steps found, as far as kept (keep >= shared: the shared steps
	 * were kept before). */
	if (path)
		path->n = i < keep ? i : keep;
	return node;
}

/* A prune needs the tree to have grown this much (and by an eighth)
 * since the last one. */
#define PRUNE_MIN_GROWTH 64

/* Prunes a full tree that may prune and has grown enough since it last
 * did: between two paths, when no node index is held. */
static void prune_if_due(struct cct *c)
{
	uint32_t grown = c->nodes.n > c->pruned_at ? (uint32_t)(c->nodes.n - c->pruned_at) : 0;
	struct timespec a, b;

	if (!c->prune_when_full || !c->full || grown < PRUNE_MIN_GROWTH || grown < c->nodes.n / 8)
		return;
	clock_gettime(CLOCK_MONOTONIC, &a);
	if (cct_prune(c) != 0)
		c->pruned_at = (uint32_t)c->nodes.n; /* no memory: not again until it grew */
	clock_gettime(CLOCK_MONOTONIC, &b);
	c->prune_ns += (uint64_t)((b.tv_sec - a.tv_sec) * 1000000000ll + (b.tv_nsec - a.tv_nsec));
}

static int add_path(struct cct *c, const struct trace_frame *frames, uint32_t n, uint64_t count, int64_t t_s,
		    int thread_slot)
{
	uint32_t node;

	prune_if_due(c);
	node = n ? path_node(c, frames, n, count, thread_slot) : 0;

	if (n && !node)
		return -1;
	c->self.v[node] += count;
	c->samples += count;
	if (t_s > 0)
		cct_slices_add(&c->slices, t_s, node, count);
	return 0;
}

int cct_add_at(struct cct *c, const struct trace_frame *frames, uint32_t n, uint64_t count, int64_t t_s)
{
	return add_path(c, frames, n, count, t_s, -1);
}

int cct_add_sample(struct cct *c, const struct trace_frame *frames, uint32_t n, int64_t t_s, uint32_t tid)
{
	return cct_add_samples(c, frames, n, 1, t_s, tid);
}

int cct_add_samples(struct cct *c, const struct trace_frame *frames, uint32_t n, uint64_t count, int64_t t_s,
		    uint32_t tid)
{
	return add_path(c, frames, n, count, t_s, (int)(tid % CCT_THREAD_PATHS));
}

int cct_add(struct cct *c, const struct trace_frame *frames, uint32_t n, uint64_t count)
{
	return cct_add_at(c, frames, n, count, 0);
}

size_t cct_bytes(const struct cct *c)
{
	/* The path cache is not counted: it is the depth of the deepest
	 * traces, not the tree (at most 20 paths of CCT_CACHED_DEPTH steps, a
	 * few KiB for most programs), so the node cap alone bounds what grows. */
	return tree_bytes(c) + c->slices.bytes;
}

/* Where a restored node folds under parent: parent itself if it is an
 * [other] node, else parent's [other] node (0 without memory). */
static uint32_t restore_fold(struct cct *c, uint32_t parent)
{
	return cct_is_overflow_node(&c->nodes.v[parent]) ? parent : cct_overflow_node(c, parent);
}

int64_t cct_restore_node(struct cct *c, uint32_t parent, uint32_t method_id, uint8_t type, int32_t bci,
			 uint64_t self, bool in_saved_other)
{
	uint32_t at;

	if (parent >= c->nodes.n || type >= FRAME_TYPE_COUNT)
		return -1;
	bci = node_bci(type, bci);
	if (type == FRAME_PSEUDO && method_id == PSEUDO_OVERFLOW) {
		/* a saved [other] node: its samples are in the saved count */
		if (!(at = restore_fold(c, parent)))
			return -1;
	} else if (parent && cct_is_overflow_node(&c->nodes.v[parent]) && !in_saved_other) {
		at = parent; /* below a folded node: everything folds there too */
		c->overflow_samples += self;
	} else {
		/* (below a saved [other] node: a method a prune kept there) */
		at = cct_child_within_caps(c, parent, method_id, type, bci);
		if (!at) {
			if (!(at = restore_fold(c, parent)))
				return -1;
			if (!in_saved_other)
				c->overflow_samples += self;
		}
	}
	c->self.v[at] += self;
	c->samples += self;
	return at;
}
