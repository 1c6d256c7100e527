/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The stacks of a recording's samples, written as what changed. A thread's
 * older frames stay put while it runs above them, so the bottom of a
 * sample's stack copy (up to the same end address) mostly repeats the
 * bytes of the thread's previous sample: 33 % (Jython) to 73 % (fop) of
 * the copied bytes in the bench applications' recordings. A sample whose
 * bottom repeats is written as its top part and the length of the repeated
 * bottom (REC_SAMPLE_SHARED), and those bytes are neither compressed nor
 * decompressed (zstd is most of a recording's CPU; the files shrink little,
 * zstd finds the repetition too: reading xalan's took 17 % less).
 *
 * Writer and reader each keep the last stack of a thread in the same
 * table, changed by the same samples in the same order, so the reader
 * rebuilds exactly what was written. The table is direct-mapped by
 * (pid, tid) and keeps stacks of at most JS_MAX_FRAGMENT_BYTES: a thread
 * whose slot another took, or a longer copy, is written whole. A reader
 * that runs out of memory for a slot the writer had finds the file
 * corrupt at the next entry naming it. The reader keeps a thread's last
 * sample whole and builds the next one in a second buffer beside it (then
 * the two swap): the bytes read from the file go straight into place, and
 * only the shared bottom is copied (a replay of Jython's recording spent
 * a tenth of its time copying each stack three times more).
 */
#ifndef JSAMPLED_RECORDING_STACKS_H
#define JSAMPLED_RECORDING_STACKS_H

#include <stdbool.h>
#include <stdint.h>

#include "bpf/sampler.h"

#define RECORDING_STACK_SLOTS 256u
/* A shorter repeated bottom is not worth an entry of its own kind. */
#define RECORDING_MIN_SHARED 64u

struct recording_stack_slot {
	bool used;
	uint32_t pid, tid;
	uint64_t end;      /* address just past the stack's last byte */
	/* Writer: the stack, its last byte at bytes[cap - 1]. */
	uint32_t len, cap;
	uint8_t *bytes;
	/* Reader: the thread's last sample, whole, and a buffer for its next
	 * (sizes in bytes). */
	struct js_sample *last, *next;
	uint32_t last_cap, next_cap;
};

struct recording_stacks {
	struct recording_stack_slot slot[RECORDING_STACK_SLOTS];
	uint64_t shared_bytes; /* stack bytes not written (writer) or rebuilt (reader) */
};

void recording_stacks_free(struct recording_stacks *t);
/* Writer: how many bytes at the bottom of s's stack (whole: sizeof(*s) +
 * s->stack_len bytes) equal its thread's last stack at the same addresses
 * (a multiple of 8, 0 if fewer than RECORDING_MIN_SHARED); then s is the
 * thread's last stack. */
uint32_t recording_stacks_put(struct recording_stacks *t, const struct js_sample *s);
/* Reader: room for the sample of header h (h->stack_len at most
 * JS_MAX_FRAGMENT_BYTES) whose stack's last shared bytes (0: none) are its
 * thread's last stack's: the header and that bottom are in place, and the
 * caller reads the first h->stack_len - shared bytes into its stack. NULL
 * if the table holds no such bottom (a corrupt file) or without memory. */
struct js_sample *recording_stacks_next(struct recording_stacks *t, const struct js_sample *h, uint32_t shared);
/* Reader: the sample recording_stacks_next gave, read whole, is its
 * thread's last from now on (valid until the thread's next one but one). */
void recording_stacks_keep(struct recording_stacks *t, struct js_sample *s);

#endif
