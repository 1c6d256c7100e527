/* A calling-context tree (Ammons, Ball & Larus, PLDI'97): one node per
 * distinct call path, with the number of samples that ended there. Nodes
 * are only appended, and always after their parent, so a reverse scan
 * accumulates totals. The tree is capped in nodes; paths past the cap end in
 * an [other] node under the deepest context that fits, with the overflow
 * counted. */
#ifndef JSAMPLED_CCT_H
#define JSAMPLED_CCT_H

#include <stddef.h>
#include <stdint.h>

#include "../userspace/common/u64_map.h"
#include "../userspace/common/vec.h"
#include "trace.h"

struct cct_node {
	uint32_t parent;
	uint32_t method_id; /* or enum pseudo_frame */
	uint8_t type;       /* enum frame_type; the root is FRAME_PSEUDO, id 0 */
	uint64_t self;
};

struct cct {
	VEC(struct cct_node) nodes; /* nodes.v[0] is the root */
	struct u64_map children;    /* (parent, method, type) -> node index */
	uint32_t max_nodes;
	uint64_t samples;
	uint64_t overflow_samples; /* samples that landed in an [other] node */
};

int cct_init(struct cct *c, uint32_t max_nodes);
void cct_free(struct cct *c);
/* Adds count samples of a root-first path. -1 on allocation failure. */
int cct_add(struct cct *c, const struct trace_frame *root_first, uint32_t n, uint64_t count);
size_t cct_bytes(const struct cct *c);
/* The node cap that keeps a CCT within about bytes of memory. */
uint32_t cct_nodes_for_bytes(size_t bytes);
/* Restores a saved node under parent (an index of this tree; saved nodes
 * come after their parents). Within the node cap it becomes parent's child
 * (merged with an equal one); past it, it and everything below fold into
 * parent's [other] node, counted. Returns the node's index, or -1 if
 * parent is out of range or memory ran out. */
int64_t cct_restore_node(struct cct *c, uint32_t parent, uint32_t method_id, uint8_t type, uint64_t self);

#endif
