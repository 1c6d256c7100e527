/* SPDX-License-Identifier: GPL-2.0-only */
#include "stray_scopes.h"

#include <stdlib.h>

#include "userspace/common/u64_map.h"

/* Rounds of marking (each marks the scope with the most isolated
 * descriptors); a blob has few shared nodes worth the name. */
#define STRAY_ROUNDS 8
/* A scope must stand alone this often to be taken for a shared node. */
#define STRAY_MIN_ISOLATED 3
#define NONE UINT32_MAX

/* Whether scope in runs inside scope outer's call: from the outermost
 * frame, the same method at every level of outer, and the same call-site
 * bci at every level but outer's innermost (whose bci is only where in
 * that call the code was). */
static bool runs_inside(const struct code_blob *b, const struct pc_scope *in, const struct pc_scope *outer)
{
	const struct scope_frame *fi, *fo;

	if (in->depth < outer->depth)
		return false;
	fi = &b->frames[in->first + (in->depth - outer->depth)];
	fo = &b->frames[outer->first];
	for (uint8_t l = 0; l < outer->depth; l++) {
		if (fi[l].method_id != fo[l].method_id || (l > 0 && fi[l].bci != fo[l].bci))
			return false;
	}
	return true;
}

/* Neither scope's call contains the other's: two different inlined calls. */
static bool unrelated(const struct code_blob *b, const struct pc_scope *x, const struct pc_scope *y)
{
	return !runs_inside(b, x, y) && !runs_inside(b, y, x);
}

/* The same inline chain, bcis and all. */
static bool same_scope(const struct code_blob *b, const struct pc_scope *x, const struct pc_scope *y)
{
	return x->depth == y->depth && runs_inside(b, x, y) && b->frames[x->first].bci == b->frames[y->first].bci;
}

static uint64_t scope_hash(const struct code_blob *b, const struct pc_scope *s)
{
	uint64_t h = s->depth;

	for (uint8_t l = 0; l < s->depth; l++) {
		const struct scope_frame *f = &b->frames[s->first + l];
		h = u64_hash(h ^ ((uint64_t)f->method_id << 32 | (uint32_t)f->bci));
	}
	return h;
}

struct candidate {
	uint64_t hash;
	uint32_t index;  /* into b->pcs */
	uint32_t before; /* the kept descriptor before it that made it isolated */
};

static int cmp_candidate(const void *a, const void *b)
{
	const struct candidate *x = a, *y = b;

	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	return (x->index > y->index) - (x->index < y->index);
}

/* The neighbours each descriptor has among those not skipped: prev[i] the
 * last before it, next[i] the first after it (NONE: none). */
static void neighbours(const struct code_blob *b, const bool *skip, uint32_t *prev, uint32_t *next)
{
	uint32_t last = NONE;

	for (uint32_t i = 0; i < b->npcs; i++) {
		prev[i] = last;
		if (!skip[i])
			last = i;
	}
	last = NONE;
	for (uint32_t i = b->npcs; i-- > 0;) {
		next[i] = last;
		if (!skip[i])
			last = i;
	}
}

/* Whether descriptor i sits in the middle of another call's code: its
 * neighbours p and q are one call (or one inside the other) and its call
 * is unrelated to both. */
static bool isolated(const struct code_blob *b, uint32_t i, uint32_t p, uint32_t q)
{
	const struct pc_scope *s = &b->pcs[i];

	return p != NONE && q != NONE && unrelated(b, s, &b->pcs[p]) && unrelated(b, s, &b->pcs[q]) &&
	       !unrelated(b, &b->pcs[p], &b->pcs[q]);
}

/* Whether descriptor i has the scope of one of the shared nodes found. */
static bool of_shared_node(const struct code_blob *b, uint32_t i, const uint32_t *found, int nfound)
{
	for (int k = 0; k < nfound; k++)
		if (same_scope(b, &b->pcs[i], &b->pcs[found[k]]))
			return true;
	return false;
}

/* Scratch arrays of a marking, npcs entries each. */
struct marking {
	struct candidate *c;
	uint32_t *prev, *next;     /* neighbours among the descriptors not stray */
	uint32_t *prev_s, *next_s; /* and among those not of a shared node found either */
	bool *skip;
	uint32_t found[STRAY_ROUNDS];
	int nfound;
};

/* One round: the isolated descriptors, grouped by scope; the largest group
 * whose descriptors sit in code of at least two different calls (a node
 * shared across the method; two inlined calls unrolled in one loop only
 * interleave with each other) is marked. A descriptor is isolated among
 * the kept ones, or with the shared nodes found in earlier rounds seen
 * through too: two shared nodes' descriptors side by side amid a call's
 * code (JDK 17: phaseHash@54 then phaseRecurse@20 in phaseSort's) each
 * have the other for a neighbour. Returns one of the marked descriptors,
 * NONE when none qualifies. */
static uint32_t mark_round(struct code_blob *b, struct marking *k)
{
	struct candidate *c = k->c;
	uint32_t n = 0, best_from = 0, best_n = 0;

	for (uint32_t i = 0; i < b->npcs; i++)
		k->skip[i] = b->pcs[i].stray;
	neighbours(b, k->skip, k->prev, k->next);
	for (uint32_t i = 0; i < b->npcs; i++)
		k->skip[i] = b->pcs[i].stray || of_shared_node(b, i, k->found, k->nfound);
	neighbours(b, k->skip, k->prev_s, k->next_s);
	for (uint32_t i = 0; i < b->npcs; i++) {
		if (b->pcs[i].stray)
			continue;
		if (isolated(b, i, k->prev[i], k->next[i]))
			c[n++] = (struct candidate){.hash = scope_hash(b, &b->pcs[i]), .index = i, .before = k->prev[i]};
		else if (isolated(b, i, k->prev_s[i], k->next_s[i]))
			c[n++] = (struct candidate){.hash = scope_hash(b, &b->pcs[i]), .index = i, .before = k->prev_s[i]};
	}
	qsort(c, n, sizeof(*c), cmp_candidate);
	for (uint32_t from = 0, to; from < n; from = to) {
		const struct pc_scope *first = &b->pcs[c[from].index];
		uint32_t count = 0;
		bool wide = false;

		for (to = from; to < n && c[to].hash == c[from].hash; to++) {
			if (!same_scope(b, &b->pcs[c[to].index], first)) {
				c[to].index = NONE; /* a hash collision: left alone */
				continue;
			}
			count++;
			wide = wide || unrelated(b, &b->pcs[c[to].before], &b->pcs[c[from].before]);
		}
		if (wide && count >= STRAY_MIN_ISOLATED && count > best_n) {
			best_n = count;
			best_from = from;
		}
	}
	if (!best_n)
		return NONE;
	for (uint32_t j = best_from; j < n && c[j].hash == c[best_from].hash; j++)
		if (c[j].index != NONE)
			b->pcs[c[j].index].stray = true;
	return c[best_from].index;
}

/* Shared nodes' descriptors also come in runs (JDK 25's C2 put phaseHash's
 * and phaseRecurse's shared `sink` node one after the other amid
 * phaseMatrix's loop), where none stands alone: with the scopes the rounds
 * found seen through, a descriptor of one of them between two kept
 * descriptors of one call unrelated to it is stray too. */
static void mark_runs(struct code_blob *b, struct marking *k)
{
	for (uint32_t i = 0; i < b->npcs; i++)
		k->skip[i] = b->pcs[i].stray || of_shared_node(b, i, k->found, k->nfound);
	neighbours(b, k->skip, k->prev, k->next);
	for (uint32_t i = 0; i < b->npcs; i++)
		if (!b->pcs[i].stray && k->skip[i] && isolated(b, i, k->prev[i], k->next[i]))
			b->pcs[i].stray = true;
}

void stray_scopes_mark(struct code_blob *b)
{
	struct marking k = {.nfound = 0};

	for (uint32_t i = 0; i < b->npcs; i++)
		b->pcs[i].stray = false;
	if (b->npcs < 2 * STRAY_MIN_ISOLATED + 1)
		return;
	k.c = malloc(b->npcs * sizeof(*k.c));
	k.prev = malloc(b->npcs * sizeof(*k.prev));
	k.next = malloc(b->npcs * sizeof(*k.next));
	k.prev_s = malloc(b->npcs * sizeof(*k.prev_s));
	k.next_s = malloc(b->npcs * sizeof(*k.next_s));
	k.skip = malloc(b->npcs * sizeof(*k.skip));
	if (!k.c || !k.prev || !k.next || !k.prev_s || !k.next_s || !k.skip)
		goto cleanup; /* only the attribution is coarser */
	while (k.nfound < STRAY_ROUNDS && (k.found[k.nfound] = mark_round(b, &k)) != NONE)
		k.nfound++;
	if (k.nfound)
		mark_runs(b, &k);
cleanup:
	free(k.c);
	free(k.prev);
	free(k.next);
	free(k.prev_s);
	free(k.next_s);
	free(k.skip);
}
