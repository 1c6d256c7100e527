/* SPDX-License-Identifier: GPL-2.0-only */
/* A calling-context tree (Ammons, Ball & Larus, PLDI'97): one node per
 * distinct call path, with the number of samples that ended there. A path's
 * frames are told apart by method, frame kind and bci (the position in the
 * method: the call site of a caller, the current instruction of the top
 * frame), so line numbers can be shown; the text and page renderings merge
 * frames that differ only by bci (cct_view.h). Nodes are only appended, and
 * always after their parent, so a reverse scan accumulates totals. The tree
 * is capped in nodes and in the bytes it has allocated; paths past a cap
 * end in an [other] node under the deepest context that fits, with the
 * overflow counted. Where samples carry
 * a time, cct_slices.h keeps them per time slice too. */
#ifndef JSAMPLED_CCT_H
#define JSAMPLED_CCT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "userspace/common/u64_map.h"
#include "userspace/common/vec.h"
#include "cct_slices.h"
#include "trace.h"

/* 16 bytes, four to a cache line: a trace's path below what it shares
 * with its thread's last one is read node after node, most often in the
 * order the nodes were made (Jython: ~80 a sample, in a tree of 1.4M). The
 * samples that ended at a node are apart (struct cct's self), read once a
 * sample. */
struct cct_node {
	uint32_t parent;
	uint32_t method_id; /* or enum pseudo_frame */
	int32_t bci : 24;   /* -1: unknown, or a pseudo frame (a bci past 24 bits, no bytecode's, is -1) */
	uint32_t type : 8;  /* enum frame_type; the root is FRAME_PSEUDO, id 0 */
	/* The child last found or made under it (0: none), tried before the
	 * children map (a path below a node mostly goes on the way it went the
	 * last time): on the line its parent's check has just read. */
	uint32_t last_child;
};
_Static_assert(sizeof(struct cct_node) == 16, "cct_node is four to a line");

/* The node path of a recently added trace, root first: a new trace that
 * shares a prefix with it starts below that prefix instead of looking
 * every frame up from the root (the children map's lookups miss the CPU
 * caches on a large tree, and deep interpreters' stacks run to hundreds of
 * frames). Nodes are never removed, so the indices stay valid. A path's
 * steps grow with the deepest trace it held, up to CCT_CACHED_DEPTH. */
#define CCT_CACHED_PATHS 4
/* Plus one path per thread (by tid, modulo): a sample's own thread's last
 * path is the likeliest to share a long prefix, found without comparing. */
#define CCT_THREAD_PATHS 16
#define CCT_CACHED_DEPTH 4096
struct cct_path {
	uint32_t n, cap;
	uint64_t age; /* of its last use: the oldest is replaced */
	struct cct_path_step {
		uint32_t method_id;
		int32_t bci;
		uint32_t type;
		uint32_t node;
	} *step;
};

struct cct {
	VEC(struct cct_node) nodes; /* nodes.v[0] is the root */
	VEC(uint64_t) self;         /* per node: the samples that ended there (self.n == nodes.n) */
	struct cct_path *paths;     /* CCT_CACHED_PATHS + CCT_THREAD_PATHS, allocated on the first add */
	uint64_t path_uses;
	/* hash of (parent, method, type, bci, attempt) -> node index; a hit
	 * is checked against the node, a collision tries the next attempt */
	struct u64_map children;
	uint32_t max_nodes;
	/* Bytes the nodes, their counts and the children map may allocate (0:
	 * no cap): counted as allocated, so a tree of small nodes holds as
	 * many as its memory allows (Jython's deep recursions: 32 bytes a node
	 * with their time slices, not the worst case of 80 the node cap used
	 * to be derived from). */
	size_t max_bytes;
	/* The root's [other] node, made apart from the children map (0: none):
	 * where paths go when even the bytes kept for [other] nodes are spent. */
	uint32_t root_other;
	uint64_t samples;
	uint64_t overflow_samples; /* samples in [other] nodes (and in the methods a prune kept below them) */
	/* Pruning (cct_enable_pruning): a tree that reaches its caps keeps its
	 * well-sampled nodes and folds the others into [other] nodes, so that
	 * new paths find room again; else it stays full and every new path
	 * ends in [other]. */
	bool prune_when_full;
	bool full;          /* a path went to [other] for want of room since the last prune */
	uint32_t pruned_at; /* nodes right after the last prune */
	uint64_t prunes, pruned_nodes;
	uint64_t prune_ns; /* spent pruning (a prune holds up the drain: 80-250 ms for a tree of 1.6M nodes) */
	struct cct_slices slices;  /* the same samples by time, where known */
};

/* Whether n is an [other] node (paths past the caps, samples a prune dropped). */
static inline bool cct_is_overflow_node(const struct cct_node *n)
{
	return n->type == FRAME_PSEUDO && n->method_id == PSEUDO_OVERFLOW;
}

int cct_init(struct cct *c, uint32_t max_nodes);
/* Caps the tree at max_nodes and max_bytes (0: none); a tree already past
 * them keeps what it has and makes no more nodes but [other] ones. */
void cct_set_caps(struct cct *c, uint32_t max_nodes, size_t max_bytes);
void cct_free(struct cct *c);
/* Adds count samples of a root-first path. -1 on allocation failure. */
int cct_add(struct cct *c, const struct trace_frame *root_first, uint32_t n, uint64_t count);
/* The same, for samples taken at wall-clock second t_s: also counted in
 * the time slice of t_s. */
int cct_add_at(struct cct *c, const struct trace_frame *root_first, uint32_t n, uint64_t count, int64_t t_s);
/* One sample of thread tid (the sample path: starts from that thread's
 * previous path). */
int cct_add_sample(struct cct *c, const struct trace_frame *root_first, uint32_t n, int64_t t_s, uint32_t tid);
/* count samples of thread tid at once (an off-CPU sample's ticks). */
int cct_add_samples(struct cct *c, const struct trace_frame *root_first, uint32_t n, uint64_t count, int64_t t_s,
		    uint32_t tid);
/* The child of parent for a frame, created if create (and the tree may
 * still grow: the [other] node is allowed past the cap); 0 if not found and
 * not created. */
uint32_t cct_child(struct cct *c, uint32_t parent, uint32_t method_id, uint8_t type, int32_t bci, int create);
size_t cct_bytes(const struct cct *c);
/* Lets the tree prune itself when full (see struct cct). A prune keeps the
 * nodes with the most samples in and below them (at most half of the
 * tree with the [other] nodes it makes, parents always before their
 * children); a dropped node's samples go below the [other] node of its
 * nearest kept ancestor, into a node of the method they ended in (the top
 * Java frame's: its own node if kept), in the time slices too, counted as
 * overflow_samples. It comes only once the tree has grown by an eighth
 * since the last one, so a tree whose nodes are all well sampled stays
 * full instead of pruning again and again. */
void cct_enable_pruning(struct cct *c);
/* Prunes now (whether or not enabled or full). -1 if out of memory (the
 * tree is then unchanged). */
int cct_prune(struct cct *c);
/* Restores a saved node under parent (an index of this tree; saved nodes
 * come after their parents). Within the caps it becomes parent's child
 * (merged with an equal one); past it, it and everything below fold into
 * parent's [other] node, counted. in_saved_other: the saved parent was an
 * [other] node or below one (this node is a method a prune kept there,
 * already counted), not a node folded here. Returns the node's index, or
 * -1 if parent is out of range or memory ran out. */
int64_t cct_restore_node(struct cct *c, uint32_t parent, uint32_t method_id, uint8_t type, int32_t bci,
			 uint64_t self, bool in_saved_other);

#endif
