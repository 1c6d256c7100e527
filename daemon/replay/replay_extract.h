/* SPDX-License-Identifier: GPL-2.0-only */
/* jsreplay --extract: a smaller recording that decodes its samples exactly
 * as the original did. It keeps the first N samples of each outcome (or of
 * one chosen outcome) and, of the agent's data, what they need: by default
 * every record but the names of methods no kept trace shows (the corpus);
 * with --minimal only the code blobs, methods and classes the kept samples
 * can reach - a blob or Method* that some word of a kept sample points
 * at, the methods of kept blobs and traces, their classes (the fixtures). */
#ifndef JSREPLAY_EXTRACT_H
#define JSREPLAY_EXTRACT_H

#include <stdbool.h>

#include "userspace/common/u64_map.h"
#include "daemon/decode/decoder.h"

struct extract_plan {
	unsigned per_outcome;
	/* Keep samples whose "<status> <outcome>" ("resolved scan",
	 * "incomplete interpreted", "not_java", "failed not_a_call_site")
	 * starts with this (NULL: all). */
	const char *only;
	uint32_t only_tid;     /* and, if set, only the sample of this thread... */
	uint64_t only_time_ns; /* ...taken at this time */
	bool minimal;
	unsigned count[128 + 1]; /* kept so far, by outcome category */
	struct u64_map kept;     /* sample key -> 1 */
	struct u64_map methods;  /* method id + 1 -> 1: named by kept traces */
	struct u64_map words;    /* --minimal: every word of kept samples -> 1 */
};

void extract_init(struct extract_plan *x, unsigned per_outcome, const char *only, bool minimal);
/* "TID:TIME" -> only that sample; -1 if malformed. */
int extract_only_sample(struct extract_plan *x, const char *spec);
void extract_free(struct extract_plan *x);
/* A sample's final outcome (in decoding order): kept or not. */
void extract_note(struct extract_plan *x, const struct js_sample *s, enum decode_status st, int reason,
		  const struct trace *tr);
/* Writes the extract of recording in to out; 0 or 1 (reported). */
int extract_write(struct extract_plan *x, const char *in, const char *out);

#endif
