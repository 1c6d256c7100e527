/* SPDX-License-Identifier: GPL-2.0-only */
/* libFuzzer target: the stack-fragment decoder, on samples the fuzzer makes
 * (a struct js_sample and its stack bytes) against the real JVM models of
 * a recorded run (tests/corpus/<JSAMPLED_FUZZ_RECORDING>, default
 * collections-jdk17): every agent batch of the recording is applied once,
 * then each input is decoded as its process's sample would be, and then
 * taken by the process as a sample (stack images, waiting traces,
 * gap-filling windows, the CCT). Seeds are the recording's own samples. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/decode/decoder.h"
#include "daemon/process/process.h"
#include "daemon/record/recording.h"
#include "daemon/decode/unwind.h"

static struct process_table table;
static struct trace tr;
static struct decode_scratch scratch;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct process_limits lim = {.cct_max_nodes = 1000, .held_max_bytes = 1 << 20, .hold_ns = 1};
	const char *path = getenv("JSAMPLED_FUZZ_RECORDING");
	struct recording *r;
	const uint8_t *payload;
	uint32_t len;
	uint8_t type;
	pid_t pid;
	uint64_t t;

	(void)argc;
	(void)argv;
	if (!path)
		path = "tests/corpus/collections-jdk17.jsrec";
	process_table_init(&table, &lim);
	r = recording_open(path);
	if (!r) {
		fprintf(stderr, "fuzz_decoder: cannot read %s (run from the repository root)\n", path);
		exit(1);
	}
	while (recording_next(r, &type, &pid, &t, &payload, &len) == 1) {
		struct process *p = process_lookup(&table, pid);
		struct batch_info info;
		if (type == REC_PROCESS && !p)
			process_create(&table, pid, 0, "");
		else if (type == REC_BATCH && p)
			jvm_model_apply_batch(&p->jvm, payload, len, &info, 0);
	}
	recording_close(r);
	if (!table.all.n) {
		fprintf(stderr, "fuzz_decoder: no process in %s\n", path);
		exit(1);
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct js_sample *s;
	struct process *p = table.all.v[0];
	int reason;
	enum decode_status st;

	if (size < sizeof(*s) || size > sizeof(*s) + JS_MAX_FRAGMENT_BYTES)
		return 0;
	s = malloc(size);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s->stack_len = (uint32_t)(size - sizeof(*s)); /* the bytes that are there */
	struct decode_ctx ctx = {.layout = &p->jvm.layout, .code = &p->jvm.code, .methods = &p->jvm.methods,
				 .scratch = &scratch, .final = (s->flags & 1) != 0};
	st = decode_sample(&ctx, s, &tr, &reason);
	if (st > DECODE_FAILED || tr.n > TRACE_MAX_FRAMES || tr.work > 2 * DECODE_WORK_BUDGET ||
	    (st == DECODE_FAILED && (reason <= 0 || reason >= DECODE_FAILURE_COUNT)))
		abort();
	/* The whole sample path too: stack images, traces waiting on them,
	 * gap-filling windows (the flags are the fuzzer's), the tree. */
	process_take_sample(&table, p, s, s->time_ns);
	if (p->bottoms.bytes > p->bottoms.max_bytes)
		abort();
	free(s);
	return 0;
}
