/* SPDX-License-Identifier: GPL-2.0-only */
/* What cct.c shares with cct_prune.c only: the tree's own lookups,
 * which a prune uses to rebuild the children map and make [other] nodes. */
#ifndef JSAMPLED_CCT_INTERNAL_H
#define JSAMPLED_CCT_INTERNAL_H

#include <stdint.h>

#include "cct.h"

/* The children map's key of a child (attempt: the how-many-th for its
 * frame, past 64-bit collisions). */
uint64_t cct_child_key(uint32_t parent, uint32_t method_id, uint8_t type, int32_t bci, uint32_t attempt);
/* The child for a frame, made if the caps leave room for it; 0 if not. */
uint32_t cct_child_within_caps(struct cct *c, uint32_t parent, uint32_t method_id, uint8_t type, int32_t bci);
/* parent's [other] node, found or made in the bytes kept for such nodes
 * (the root's past those); 0 without memory. */
uint32_t cct_overflow_node(struct cct *c, uint32_t parent);

#endif
