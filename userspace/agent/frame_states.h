/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Where in a compiled method the frame is not (yet, or any more) in place.
 *
 * A sample can interrupt a compiled method before its prologue has built the
 * frame or after its epilogue has torn it down; walking by frame size there
 * reads garbage. The agent has the machine code at CompiledMethodLoad time,
 * so it finds those ranges once per method by matching the exact instruction
 * sequences HotSpot emits (x86-64: C2 MachPrologNode/MachEpilogNode, C1
 * build_frame/remove_frame, native wrappers), instead of the decoder
 * guessing from bytes per sample (which gave false positives, see
 * docs/hotspot.md).
 */
#ifndef JSAGENT_FRAME_STATES_H
#define JSAGENT_FRAME_STATES_H

#include <stddef.h>
#include <stdint.h>

#include "userspace/common/agent_protocol.h"

struct frame_state_range {
	uint32_t start; /* offsets from the code start, [start, end) */
	uint32_t end;
	uint8_t state;  /* enum js_frame_state */
};

struct frame_state_input {
	const uint8_t *code; /* a copy of the code */
	uint32_t size;
	int32_t frame_size_words;      /* CodeBlob::_frame_size, includes ret and rbp */
	int32_t verified_entry_offset; /* -1 unknown */
	int32_t frame_complete_offset; /* -1 unknown */
	int32_t stub_offset;           /* where the stub section begins, -1 unknown */
};

/* Fills out (sorted, non-overlapping) and returns the number of ranges, at
 * most max. */
size_t frame_states_compute(const struct frame_state_input *in, struct frame_state_range *out,
			    size_t max);

#endif
