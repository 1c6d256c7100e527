/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Turns one stack sample into a Java call trace, using only the sample and
 * what the process's agent reported (code map, methods, VM layout): the
 * asynchronous decoding of the ICPE'14 paper, without a modified JVM.
 *
 * decode_sample is a pure function of its inputs, so recorded samples and
 * code maps replay deterministically.
 */
#ifndef JSAMPLED_DECODER_H
#define JSAMPLED_DECODER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "bpf/sampler.h"
#include "codemap.h"
#include "frozen_chunks.h"
#include "decode_reasons.h"
#include "userspace/profile/method_table.h"
#include "userspace/profile/trace.h"
#include "vm_layout.h"
#include "walk_reuse.h"

/* Working memory of one decoding, owned by the caller (a process table
 * has one): nothing in the decoder is static, so decodings may run side by
 * side on separate scratch. */
struct decode_scratch {
	struct trace trial;                         /* the walk on from a candidate caller (unwind_scan.c) */
	struct trace_frame first[TRACE_MAX_FRAMES]; /* the first shifted frame that validated (unwind_compiled.c) */
	struct trace bottom;                        /* the walk on over a stack image (stack_bottoms.c) */
	struct walk_log log;                        /* the main walk's steps (walk_reuse.h) */
};

/* Continuation.enterSpecial, where a continuation is entered: where its
 * bottom frame returns (ContinuationEntry::_return_pc, not in every JDK's
 * vmStructs; a frozen chunk's bottom frame has no return address) and
 * its method, below which a virtual thread's frames are its carrier's.
 * 0 until a walk passed there. */
struct enter_special {
	uint64_t return_pc;
	uint32_t method_id;
};

struct decode_ctx {
	const struct vm_layout *layout;
	struct codemap *code; /* lookups may sort it lazily */
	const struct method_table *methods;
	struct decode_scratch *scratch;
	/* No newer agent data will arrive (the agent is gone, or the sample
	 * has been held long enough): missing code is a failure, not a wait. */
	bool final;
	/* When set, every step of the walk is described here (jsreplay --explain). */
	FILE *explain;
	/* The sample's thread's previous walk: joined where it can be, then
	 * updated from a complete walk (NULL: every walk goes to the bottom). */
	struct walk_memo *memo;
	/* The frozen frames of the samples' virtual threads (NULL: none). */
	const struct frozen_chunks *chunks;
	/* Learned from the walks that pass there (NULL: not kept). */
	struct enter_special *enter_special;
};

enum decode_status {
	DECODE_RESOLVED,   /* a complete Java trace */
	DECODE_INCOMPLETE, /* Java frames, but the fragment ended first */
	DECODE_NOT_JAVA,   /* a JVM-internal thread: one pseudo frame */
	DECODE_RETRY,      /* needs agent data not fetched yet */
	DECODE_FAILED,     /* see *reason */
};

enum decode_status decode_sample(const struct decode_ctx *ctx, const struct js_sample *s,
				 struct trace *out, int *reason);

/* Decodes the rest of a stack whose walk stopped at the end of its
 * fragment, from where it stopped (trace.resume) over a longer copy s of
 * the same thread's stack (stack_bottoms.c). DECODE_RESOLVED: out holds
 * the frames from the resume point down to the thread's first Java frame,
 * root first (none, if only an entry frame was left); anything else: the
 * copy did not lead there. Like a main walk, it joins the thread's previous
 * walk (ctx->memo) where the words it read are the same in s; out->joined
 * counts the frames it took from there. */
enum decode_status decode_from_caller(const struct decode_ctx *ctx, const struct js_sample *s,
				      const struct walk_resume *at, struct trace *out);

/* The first frame of frames[0..n) that calls the next one through an
 * invoke instruction of its method and yet does not stand at one, or at one
 * that names another method than the next frame runs (the decoder followed
 * a wrong frame), or -1. A call through the VM (an entry frame between the
 * two), a pseudo frame, an unknown bci or a call whose target is not known
 * statically is not checked.
 * root_first: frames[i] calls frames[i + 1] (else frames[i] calls
 * frames[i - 1], the order a walk finds them in). */
int trace_bad_caller(const struct method_table *m, const struct trace_frame *frames, uint32_t n, bool root_first);

#endif
