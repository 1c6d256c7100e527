/* SPDX-License-Identifier: GPL-2.0-only */
/* A profile tree whose frames are named: what the flame-graph page, the SVG
 * and the diff render. Built from CCT views (cct_view.h); frames are keyed
 * by name and kind, not by method id, so the trees of two processes (or two
 * windows) can be laid over each other for a diff: the base side's counts
 * go into base_self/base_total of the same paths. */
#ifndef JSAMPLED_NAMED_TREE_H
#define JSAMPLED_NAMED_TREE_H

#include <stdbool.h>
#include <stdint.h>

#include "userspace/common/u64_map.h"
#include "userspace/common/vec.h"
#include "cct.h"
#include "method_table.h"
#include "string_pool.h"

/* The kinds a page colours frames by (userspace/common/web/FORMAT.md). */
enum frame_kind {
	KIND_ROOT,
	KIND_INTERPRETED,
	KIND_COMPILED,
	KIND_INLINED,
	KIND_NATIVE,
	KIND_KERNEL,
	KIND_JVM,    /* JVM-internal threads: [GC], [JIT compiler], [VM] */
	KIND_PSEUDO, /* [truncated], [other], ... */
	KIND_JAVA,   /* a Java frame of an allocation or lock event's stack */
	KIND_CLASS,  /* the allocated or locked class */
	KIND_COUNT
};

const char *frame_kind_name(enum frame_kind k);
enum frame_kind frame_kind_of(uint8_t frame_type, uint32_t method_id);

struct named_node {
	uint32_t parent;
	uint32_t name; /* index into names */
	uint8_t kind;  /* enum frame_kind */
	uint64_t self, total;
	uint64_t base_self, base_total; /* diffs: the base side */
};

struct named_tree {
	VEC(struct named_node) nodes; /* [0] is the root; parents before children */
	VEC(const char *) names;
	struct u64_map name_index; /* hash of the name (+ attempt) -> index + 1 */
	struct u64_map children;   /* hash of (parent, name, kind, attempt) -> node */
	struct string_pool pool;
};

int named_tree_init(struct named_tree *t);
void named_tree_free(struct named_tree *t);
/* Adds a view's counts (self; totals follow in named_tree_totals): into
 * self, or into base_self when base. -1 if out of memory. */
int named_tree_add_view(struct named_tree *t, const struct cct *view, const struct method_table *m, bool base);
/* Computes total and base_total from the self counts. */
void named_tree_totals(struct named_tree *t);
/* Children lists, heaviest first (by total, then base_total): kids of node
 * i are kids[start[i] .. start[i+1]). Arrays malloc'd; -1 if out of memory. */
int named_tree_children(const struct named_tree *t, uint32_t **start, uint32_t **kids);

#endif
