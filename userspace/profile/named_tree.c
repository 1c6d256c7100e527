/* SPDX-License-Identifier: GPL-2.0-only */
#include "named_tree.h"
#include "kernel_symbols.h"
#include "userspace/common/fnv1a.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[KIND_COUNT] = {"root", "interpreted", "compiled", "inlined",
						   "native", "kernel", "jvm", "pseudo", "java", "class"};

const char *frame_kind_name(enum frame_kind k)
{
	return k < KIND_COUNT ? kind_names[k] : "pseudo";
}

enum frame_kind frame_kind_of(uint8_t frame_type, uint32_t method_id)
{
	switch (frame_type) {
	case FRAME_INTERPRETED:
		return KIND_INTERPRETED;
	case FRAME_COMPILED:
		return KIND_COMPILED;
	case FRAME_INLINED:
		return KIND_INLINED;
	case FRAME_NATIVE:
		return KIND_NATIVE;
	case FRAME_KERNEL:
		return KIND_KERNEL;
	case FRAME_C:
		return KIND_NATIVE;
	case FRAME_JAVA:
		return KIND_JAVA;
	case FRAME_CLASS:
		return KIND_CLASS;
	default:
		switch (method_id) {
		case 0:
			return KIND_ROOT;
		case PSEUDO_GC:
		case PSEUDO_JIT:
		case PSEUDO_VM:
		case PSEUDO_OTHER_THREAD:
		case PSEUDO_AGENT:
			return KIND_JVM;
		default:
			return KIND_PSEUDO;
		}
	}
}

static uint64_t hash_str(const char *s)
{
	return fnv1a_str(FNV1A_START, s);
}

static uint64_t nonzero(uint64_t k)
{
	return k ? k : 1;
}

/* The index of name, added if new; UINT32_MAX if out of memory. */
static uint32_t name_id(struct named_tree *t, const char *name)
{
	uint64_t h = hash_str(name), key;

	for (uint64_t attempt = 0;; attempt++) {
		uint64_t *hit;

		key = nonzero(u64_hash(h + attempt * 0x9e3779b97f4a7c15ull));
		hit = u64_map_get(&t->name_index, key);
		if (!hit)
			break;
		if (strcmp(t->names.v[*hit - 1], name) == 0)
			return (uint32_t)(*hit - 1);
	}
	const char *copy = string_pool_intern(&t->pool, name, strlen(name));
	if (!copy || vec_push(&t->names, copy) != 0)
		return UINT32_MAX;
	if (u64_map_put(&t->name_index, key, t->names.n) != 0) {
		t->names.n--;
		return UINT32_MAX;
	}
	return (uint32_t)(t->names.n - 1);
}

/* The child of parent named name with kind, made if new; 0 if out of
 * memory. */
static uint32_t child(struct named_tree *t, uint32_t parent, uint32_t name, uint8_t kind)
{
	uint64_t key;

	for (uint64_t attempt = 0;; attempt++) {
		uint64_t *hit;

		key = nonzero(u64_hash((uint64_t)parent << 32 | name) ^ u64_hash(kind + attempt * 0x9e3779b97f4a7c15ull));
		hit = u64_map_get(&t->children, key);
		if (!hit)
			break;
		const struct named_node *n = &t->nodes.v[*hit];
		if (n->parent == parent && n->name == name && n->kind == kind)
			return (uint32_t)*hit;
	}
	struct named_node n = {.parent = parent, .name = name, .kind = kind};
	if (vec_push(&t->nodes, n) != 0)
		return 0;
	if (u64_map_put(&t->children, key, t->nodes.n - 1) != 0) {
		t->nodes.n--;
		return 0;
	}
	return (uint32_t)(t->nodes.n - 1);
}

int named_tree_init(struct named_tree *t)
{
	struct named_node root = {.kind = KIND_ROOT};

	memset(t, 0, sizeof(*t));
	u64_map_init(&t->name_index);
	u64_map_init(&t->children);
	string_pool_init(&t->pool);
	if (name_id(t, "[root]") != 0)
		return -1;
	return vec_push(&t->nodes, root);
}

void named_tree_free(struct named_tree *t)
{
	vec_free(&t->nodes);
	vec_free(&t->names);
	u64_map_free(&t->name_index);
	u64_map_free(&t->children);
	string_pool_free(&t->pool);
}

int named_tree_add_view(struct named_tree *t, const struct cct *view, const struct method_table *m, bool base)
{
	uint32_t *to = calloc(view->nodes.n ? view->nodes.n : 1, sizeof(*to));
	char name[1024];
	int rc = -1;

	if (!to)
		return -1;
	for (size_t i = 0; i < view->nodes.n; i++) {
		const struct cct_node *n = &view->nodes.v[i];

		if (i) {
			if (n->type == FRAME_PSEUDO)
				snprintf(name, sizeof(name), "%s", pseudo_frame_name(n->method_id));
			else if (frame_named_by_symbol(n->type))
				snprintf(name, sizeof(name), "%s", kernel_symbols_name(n->method_id));
			else
				method_table_name(m, n->method_id, name, sizeof(name));
			uint32_t id = name_id(t, name);
			if (id == UINT32_MAX)
				goto cleanup;
			to[i] = child(t, to[n->parent], id, (uint8_t)frame_kind_of(n->type, n->method_id));
			if (!to[i])
				goto cleanup;
		}
		if (base)
			t->nodes.v[to[i]].base_self += view->self.v[i];
		else
			t->nodes.v[to[i]].self += view->self.v[i];
	}
	rc = 0;
cleanup:
	free(to);
	return rc;
}

void named_tree_totals(struct named_tree *t)
{
	for (size_t i = 0; i < t->nodes.n; i++) {
		t->nodes.v[i].total = t->nodes.v[i].self;
		t->nodes.v[i].base_total = t->nodes.v[i].base_self;
	}
	for (size_t i = t->nodes.n; i-- > 1;) {
		struct named_node *p = &t->nodes.v[t->nodes.v[i].parent];
		p->total += t->nodes.v[i].total;
		p->base_total += t->nodes.v[i].base_total;
	}
}

static const struct named_node *sort_nodes;

static int heavier_first(const void *a, const void *b)
{
	const struct named_node *x = &sort_nodes[*(const uint32_t *)a], *y = &sort_nodes[*(const uint32_t *)b];

	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	if (x->base_total != y->base_total)
		return x->base_total < y->base_total ? 1 : -1;
	return (*(const uint32_t *)a > *(const uint32_t *)b) - (*(const uint32_t *)a < *(const uint32_t *)b);
}

int named_tree_children(const struct named_tree *t, uint32_t **start_out, uint32_t **kids_out)
{
	size_t n = t->nodes.n;
	uint32_t *start = calloc(n + 1, sizeof(*start)), *kids = calloc(n ? n : 1, sizeof(*kids));
	uint32_t *fill = calloc(n + 1, sizeof(*fill));

	if (!start || !kids || !fill) {
		free(start);
		free(kids);
		free(fill);
		return -1;
	}
	for (size_t i = 1; i < n; i++)
		start[t->nodes.v[i].parent + 1]++;
	for (size_t i = 0; i < n; i++)
		start[i + 1] += start[i];
	memcpy(fill, start, (n + 1) * sizeof(*fill));
	for (size_t i = 1; i < n; i++)
		kids[fill[t->nodes.v[i].parent]++] = (uint32_t)i;
	sort_nodes = t->nodes.v; /* rendering is single-threaded */
	for (size_t i = 0; i < n; i++)
		qsort(kids + start[i], start[i + 1] - start[i], sizeof(*kids), heavier_first);
	free(fill);
	*start_out = start;
	*kids_out = kids;
	return 0;
}
