/* SPDX-License-Identifier: GPL-2.0-only */
/* Finding the CodeBlob that holds a code address, the way HotSpot's own
 * CodeHeap::find_blob_start does: through the code heap's segment map. JVMTI
 * reports code ranges but not the blob facts the decoder needs (frame size,
 * frame-complete offset, nmethod entry points), so they are read here. */
#ifndef JSAGENT_CODE_HEAP_H
#define JSAGENT_CODE_HEAP_H

#include <stdint.h>

#include "hotspot_layout.h"

struct hs_blob {
	uint64_t blob;       /* CodeBlob* */
	uint64_t code_begin; /* first instruction */
	uint64_t code_end;
	int32_t frame_size_words;      /* -1 unknown */
	int32_t frame_complete_offset; /* from code_begin, -1 unknown */
	char name[64];
};

struct hs_nmethod {
	int32_t verified_entry_offset; /* from code_begin, -1 unknown */
	int32_t stub_offset;           /* from code_begin, -1 unknown */
	int32_t orig_pc_offset;        /* bytes from the frame's sp, -1 unknown */
	int32_t entry_bci;             /* -1 (InvocationEntryBci) unless OSR */
	int32_t comp_level;
};

/* 0 when addr lies in a used code-cache block whose blob contains addr. */
int hs_blob_find(const struct hs_layout *L, uint64_t addr, struct hs_blob *out);
int hs_blob_nmethod(const struct hs_layout *L, const struct hs_blob *b, struct hs_nmethod *out);

#endif
