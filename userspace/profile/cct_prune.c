/* SPDX-License-Identifier: GPL-2.0-only */
/* Pruning a full calling-context tree (cct.h, cct_enable_pruning): keep
 * the nodes with the most samples, put the others' samples where their
 * method stays visible, renumber everything that names a node. */
#include "cct.h"

#include <stddef.h>
#include <stdlib.h>

#include "userspace/common/big_alloc.h"
#include "cct_internal.h"

void cct_enable_pruning(struct cct *c)
{
	c->prune_when_full = true;
}

/* A prune keeps every node with this many samples in and below it (it
 * looks for its threshold below). */
#define PRUNE_MAX_THRESHOLD 4096
/* In a prune's renumbering, a dropped node: the rest of its entry is the
 * new index of its nearest kept ancestor (indices stay below 2^31:
 * max-cct-nodes is at most 2^30). */
#define PRUNED (1u << 31)

/* The least threshold t >= 2 at which the nodes a prune keeps, and the
 * [other] nodes it makes (one under each kept node with a child dropped),
 * are at most keep; PRUNE_MAX_THRESHOLD if none. total[i]: samples in and
 * below node i; minc[i]: the least total of its children (UINT32_MAX:
 * none). A node's total is never above its parent's, so the nodes kept
 * are a tree. */
static uint64_t prune_threshold(const uint64_t *total, const uint32_t *minc, size_t n, size_t keep)
{
	/* hist[v]: nodes of total v (capped); others[t]: kept nodes with a
	 * child dropped at threshold t (as differences first). */
	size_t *hist = calloc(PRUNE_MAX_THRESHOLD + 1, sizeof(*hist));
	ptrdiff_t *others = calloc(PRUNE_MAX_THRESHOLD + 2, sizeof(*others));
	size_t below = 0, all = n ? n - 1 : 0;
	uint64_t t = PRUNE_MAX_THRESHOLD;

	if (!hist || !others)
		goto done;
	for (size_t i = 1; i < n; i++)
		hist[total[i] < PRUNE_MAX_THRESHOLD ? total[i] : PRUNE_MAX_THRESHOLD]++;
	for (size_t p = 0; p < n; p++) {
		/* p keeps (the root always) and drops a child for minc < t <= total */
		uint64_t lo = minc[p] == UINT32_MAX ? PRUNE_MAX_THRESHOLD + 1 : (uint64_t)minc[p] + 1;
		uint64_t hi = p == 0 || total[p] > PRUNE_MAX_THRESHOLD ? PRUNE_MAX_THRESHOLD : total[p];

		if (lo < 2)
			lo = 2;
		if (lo <= hi) {
			others[lo]++;
			others[hi + 1]--;
		}
	}
	for (uint64_t v = 2, o = 0; v <= PRUNE_MAX_THRESHOLD; v++) {
		below += hist[v - 1] + (v == 2 ? hist[0] : 0);
		o += (size_t)others[v];
		if (all - below + o <= keep) {
			t = v;
			break;
		}
	}
done:
	free(hist);
	free(others);
	return t;
}

/* After a prune, the node arrays hold what is left and some room: the
 * bytes they gave back are the cap's again (the children map's growth, the
 * next nodes). Unchanged if the kernel refuses. */
static void shrink_nodes(struct cct *c)
{
	size_t want = c->nodes.n + c->nodes.n / 8 + 8;
	struct cct_node *nodes;
	uint64_t *self;

	if (want >= c->nodes.cap || want >= c->self.cap)
		return;
	if ((nodes = big_realloc(c->nodes.v, c->nodes.cap * sizeof(*nodes), want * sizeof(*nodes)))) {
		c->nodes.v = nodes;
		c->nodes.cap = want;
	}
	if ((self = big_realloc(c->self.v, c->self.cap * sizeof(*self), want * sizeof(*self)))) {
		c->self.v = self;
		c->self.cap = want;
	}
}

/* Puts node j into the children map (unless found without it). The map
 * holds no more entries than before the prune, so it does not grow. */
static int map_child(struct cct *c, uint32_t j)
{
	const struct cct_node *nd = &c->nodes.v[j];

	if (j == nd->parent + 1 || j == c->root_other)
		return 0;
	for (uint32_t attempt = 0;; attempt++) {
		uint64_t key = cct_child_key(nd->parent, nd->method_id, (uint8_t)nd->type, nd->bci, attempt);

		if (!u64_map_get(&c->children, key))
			return u64_map_put(&c->children, key, j);
	}
}

/* What a prune decides for a node (old index): it stays, renumbered. */
#define PRUNE_KEEP 1

/* A dropped node's samples keep the method they ended in, at the top Java
 * frame (a kernel or C frame above it, hidden in the Java view, is left
 * out): into that frame's own node if it is kept, else into a node of
 * that method under the [other] node of their nearest kept ancestor (under
 * the root's if that method node is dropped in turn), so that a profile's
 * self time by method stays whole. */
struct dropped_leaf {
	uint32_t node, owner; /* old indices: the dropped node, its nearest kept ancestor */
	uint32_t into;        /* old index of the kept Java frame it goes to, 0: none */
	uint32_t method_id, target;
	uint8_t type;
	uint64_t self;
};

static bool native_frame(const struct cct_node *n)
{
	return frame_named_by_symbol(n->type);
}

/* Marks each node kept or not at threshold t (a node stays if its parent
 * does and it has t samples in and below it, or is an [other] node), sets
 * owner[i] to the old index of its nearest kept ancestor-or-self, and
 * returns the number of dropped nodes whose samples keep their method. */
static size_t prune_decide(const struct cct *c, const uint64_t *total, uint64_t t, uint8_t *state, uint32_t *owner)
{
	size_t leaves = 0;

	state[0] = PRUNE_KEEP;
	owner[0] = 0;
	for (size_t i = 1; i < c->nodes.n; i++) {
		const struct cct_node *node = &c->nodes.v[i];
		uint32_t p = node->parent < i ? node->parent : 0;
		bool other = cct_is_overflow_node(node);

		state[i] = (state[p] & PRUNE_KEEP) && (total[i] >= t || other) ? PRUNE_KEEP : 0;
		owner[i] = state[i] ? (uint32_t)i : owner[p];
		if (!state[i] && c->self.v[i] && !other)
			leaves++;
	}
	return leaves;
}

/* The dropped nodes whose samples keep their method, in index order (the
 * tree still as it was). */
static void prune_leaves(const struct cct *c, const uint8_t *state, const uint32_t *owner, struct dropped_leaf *leaf)
{
	size_t k = 0;

	for (size_t i = 1; i < c->nodes.n; i++) {
		uint32_t a = (uint32_t)i;

		if (state[i] || !c->self.v[i] || cct_is_overflow_node(&c->nodes.v[i]))
			continue;
		while (a && native_frame(&c->nodes.v[a]) && c->nodes.v[a].parent < a)
			a = c->nodes.v[a].parent;
		if (!a || native_frame(&c->nodes.v[a]))
			a = (uint32_t)i; /* no Java frame below: its own */
		leaf[k++] = (struct dropped_leaf){.node = (uint32_t)i, .owner = owner[i], .self = c->self.v[i],
						  .into = a != i && state[a] ? a : 0,
						  .method_id = c->nodes.v[a].method_id, .type = (uint8_t)c->nodes.v[a].type};
	}
}

/* The [other] node for samples dropped under kept node o: o itself if it
 * is one (or is below one, in a leaf: then its [other] parent's), else its
 * [other] child, made if needed; o if there is no room even for that. */
static uint32_t fold_target(struct cct *c, uint32_t o)
{
	uint32_t other;

	if (cct_is_overflow_node(&c->nodes.v[o]))
		return o;
	if (o && cct_is_overflow_node(&c->nodes.v[c->nodes.v[o].parent]))
		return c->nodes.v[o].parent;
	other = cct_overflow_node(c, o);
	return other ? other : o;
}

/* overflow_samples after a prune: the samples in [other] nodes and below
 * them. flag: room for n entries, more allocated if the tree is larger. */
static void recount_overflow(struct cct *c, uint8_t *flag, size_t n)
{
	uint8_t *f = c->nodes.n <= n ? flag : malloc(c->nodes.n);
	uint64_t sum = 0;

	if (!f)
		return; /* the count stays as it was (a few samples off at most) */
	f[0] = 0;
	for (size_t j = 1; j < c->nodes.n; j++) {
		f[j] = cct_is_overflow_node(&c->nodes.v[j]) || f[c->nodes.v[j].parent];
		if (f[j])
			sum += c->self.v[j];
	}
	c->overflow_samples = sum;
	if (f != flag)
		free(f);
}

int cct_prune(struct cct *c)
{
	size_t n = c->nodes.n, most = cct_slices_most_counts(&c->slices), nleaves;
	/* total[i]: samples in and below node i; reused, once node i is past,
	 * once the threshold is known, as acc[i]: the samples of the dropped
	 * nodes that keep no method (the [other] ones) whose nearest kept
	 * ancestor got the new index i, then where they went + 1. */
	uint64_t *total = n < PRUNED ? calloc(n, sizeof(*total)) : NULL, *acc = total, t;
	uint32_t *to = malloc(n * sizeof(*to)), m = 1;
	uint8_t *state = malloc(n);
	struct slice_count *tmp = most ? malloc(most * sizeof(*tmp)) : NULL;
	struct dropped_leaf *leaf = NULL;
	int rc = -1;

	if (!total || !to || !state || (most && !tmp))
		goto cleanup;
	for (size_t i = n; i-- > 0;) {
		total[i] += c->self.v[i];
		if (i)
			total[c->nodes.v[i].parent] += total[i];
	}
	/* to[] first holds each node's least child total, for the threshold */
	for (size_t i = 0; i < n; i++)
		to[i] = UINT32_MAX;
	for (size_t i = 1; i < n; i++) {
		uint32_t v = total[i] < UINT32_MAX - 1 ? (uint32_t)total[i] : UINT32_MAX - 1, p = c->nodes.v[i].parent;

		if (p < i && v < to[p])
			to[p] = v;
	}
	t = prune_threshold(total, to, n, n / 2);
	/* to[] next holds each node's nearest kept ancestor-or-self */
	nleaves = prune_decide(c, total, t, state, to);
	if (nleaves && !(leaf = malloc(nleaves * sizeof(*leaf))))
		goto cleanup;
	if (nleaves)
		prune_leaves(c, state, to, leaf);
	/* Nothing fails from here on. Parents come first: a node's parent is
	 * renumbered before it, and a kept node moves down to its new index,
	 * never over one unread. */
	to[0] = 0;
	acc[0] = 0; /* the root stays; its total is not needed again */
	for (size_t i = 1; i < n; i++) {
		struct cct_node node = c->nodes.v[i];
		uint32_t p = node.parent < i ? to[node.parent] : PRUNED;
		uint32_t owner = p & ~PRUNED;
		uint64_t self = c->self.v[i];

		if (state[i] & PRUNE_KEEP) {
			node.parent = p;
			node.last_child = 0;
			c->nodes.v[m] = node;
			c->self.v[m] = self;
			acc[m] = 0;
			to[i] = m++;
			continue;
		}
		to[i] = PRUNED | owner;
		if (!self || cct_is_overflow_node(&node))
			acc[owner] += self; /* the others are in leaf[], in this order */
	}
	c->nodes.n = m;
	c->self.n = m;
	shrink_nodes(c); /* before the [other] nodes below: the cap counts what the arrays hold */
	if (c->root_other)
		c->root_other = to[c->root_other] & PRUNED ? 0 : to[c->root_other];
	u64_map_clear(&c->children);
	/* Cannot fail (the slots are there); a node missing from the map
	 * would only be made again beside itself, not lost. */
	for (uint32_t j = 1; j < m; j++)
		(void)map_child(c, j);
	/* The dropped [other] nodes' samples, in their kept ancestor's
	 * [other] node (made after the kept nodes, so after its parent;
	 * where even that finds no room, the ancestor keeps them). */
	for (uint32_t o = 0; o < m; o++) {
		uint64_t sum = acc[o];
		uint32_t other;

		if (!sum)
			continue;
		other = fold_target(c, o);
		c->self.v[other] += sum;
		acc[o] = (uint64_t)other + 1;
	}
	for (size_t j = 0; j < nleaves; j++) {
		uint32_t o = to[leaf[j].owner], other, at;

		if (leaf[j].into) {
			leaf[j].target = to[leaf[j].into];
			c->self.v[leaf[j].target] += leaf[j].self;
			continue;
		}
		/* A method an earlier prune kept under an [other] node, dropped
		 * now: under the root's [other] node, which holds the methods
		 * whose contexts are gone (one node a method: bounded). */
		if (cct_is_overflow_node(&c->nodes.v[o]) || (o && cct_is_overflow_node(&c->nodes.v[c->nodes.v[o].parent])))
			o = 0;
		other = fold_target(c, o);
		at = other;
		if (cct_is_overflow_node(&c->nodes.v[other]))
			at = cct_child_within_caps(c, other, leaf[j].method_id, leaf[j].type, -1);
		leaf[j].target = at ? at : other;
		c->self.v[leaf[j].target] += leaf[j].self;
	}
	/* Where each dropped node's samples went, for the time slices. */
	for (size_t i = 0, j = 0; i < n; i++) {
		if (!(to[i] & PRUNED))
			continue;
		if (j < nleaves && leaf[j].node == i)
			to[i] = leaf[j++].target;
		else
			to[i] = acc[to[i] & ~PRUNED] ? (uint32_t)(acc[to[i] & ~PRUNED] - 1) : to[i] & ~PRUNED;
	}
	cct_slices_renumber(&c->slices, to, n, tmp);
	/* Paths cached by node index start again. */
	for (int q = 0; c->paths && q < CCT_CACHED_PATHS + CCT_THREAD_PATHS; q++)
		c->paths[q].n = 0;
	recount_overflow(c, state, n);
	c->prunes++;
	c->pruned_nodes += n - m;
	c->pruned_at = (uint32_t)c->nodes.n;
	c->full = false;
	rc = 0;
cleanup:
	free(total);
	free(to);
	free(state);
	free(tmp);
	free(leaf);
	return rc;
}

