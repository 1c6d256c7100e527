#include "cct.h"

#include <string.h>

int cct_init(struct cct *c, uint32_t max_nodes)
{
	struct cct_node root = {.parent = 0, .method_id = 0, .type = FRAME_PSEUDO};

	memset(c, 0, sizeof(*c));
	u64_map_init(&c->children);
	c->max_nodes = max_nodes < 2 ? 2 : max_nodes;
	return vec_push(&c->nodes, root);
}

void cct_free(struct cct *c)
{
	vec_free(&c->nodes);
	u64_map_free(&c->children);
}

static uint64_t child_key(uint32_t parent, uint32_t method_id, uint8_t type)
{
	return (uint64_t)parent << 32 | (uint64_t)(method_id & 0xffffff) << 8 | type;
}

/* The child of parent for a frame, created if allowed. 0 if not found and
 * not created (limit or OOM). */
static uint32_t child(struct cct *c, uint32_t parent, uint32_t method_id, uint8_t type, int create)
{
	uint64_t key = child_key(parent, method_id, type);
	uint64_t *hit = u64_map_get(&c->children, key);
	struct cct_node n = {.parent = parent, .method_id = method_id, .type = type};

	if (hit)
		return (uint32_t)*hit;
	if (!create || c->nodes.n >= UINT32_MAX - 1)
		return 0;
	if (vec_push(&c->nodes, n) != 0)
		return 0;
	if (u64_map_put(&c->children, key, c->nodes.n - 1) != 0) {
		c->nodes.n--;
		return 0;
	}
	return (uint32_t)(c->nodes.n - 1);
}

int cct_add(struct cct *c, const struct trace_frame *frames, uint32_t n, uint64_t count)
{
	uint32_t node = 0;

	for (uint32_t i = 0; i < n; i++) {
		uint32_t next = child(c, node, frames[i].method_id, frames[i].type,
				      c->nodes.n < c->max_nodes);
		if (!next) {
			/* Over the cap: the rest of the path collapses into [other]
			 * (one such node per parent, allowed past the cap). */
			next = child(c, node, PSEUDO_OVERFLOW, FRAME_PSEUDO, 1);
			if (!next)
				return -1;
			c->overflow_samples += count;
			node = next;
			break;
		}
		node = next;
	}
	c->nodes.v[node].self += count;
	c->samples += count;
	return 0;
}

size_t cct_bytes(const struct cct *c)
{
	return c->nodes.cap * sizeof(struct cct_node) + u64_map_bytes(&c->children);
}

uint32_t cct_nodes_for_bytes(size_t bytes)
{
	/* A node's slot in the vector (doubling: up to twice its size) and its
	 * entry in the children map (16 bytes, at most half full: 32). */
	size_t per = 2 * sizeof(struct cct_node) + 32;
	size_t n = bytes / per;
	return n > UINT32_MAX - 2 ? UINT32_MAX - 2 : (uint32_t)n;
}

int64_t cct_restore_node(struct cct *c, uint32_t parent, uint32_t method_id, uint8_t type, uint64_t self)
{
	uint32_t at;

	if (parent >= c->nodes.n || type >= FRAME_TYPE_COUNT)
		return -1;
	if (c->nodes.v[parent].type == FRAME_PSEUDO && c->nodes.v[parent].method_id == PSEUDO_OVERFLOW && parent) {
		at = parent; /* below a folded node: everything folds there too */
	} else {
		at = child(c, parent, method_id, type, c->nodes.n < c->max_nodes);
		if (!at) {
			at = child(c, parent, PSEUDO_OVERFLOW, FRAME_PSEUDO, 1);
			if (!at)
				return -1;
			c->overflow_samples += self;
		}
	}
	c->nodes.v[at].self += self;
	c->samples += self;
	return at;
}
