/* SPDX-License-Identifier: GPL-2.0-only */
/* libFuzzer target: the stack-fragment decoder, on samples the fuzzer makes
 * (a struct js_sample and its stack bytes) against the real JVM models of
 * a recorded run (tests/corpus/<JSAMPLED_FUZZ_RECORDING>, default
 * collections-jdk17): every agent batch of the recording is applied once,
 * then each input is decoded as its process's sample would be, and then
 * taken by the process as a sample (stack images, waiting traces,
 * gap-filling windows, the CCT). Seeds are the recording's own samples.
 *
 * The process keeps its state from one input to the next, so a crash may
 * need every input before it: with JSAMPLED_FUZZ_HISTORY=FILE the target
 * writes each input to FILE as it comes (a u32 length and its bytes); JSAMPLED_FUZZ_REPLAY=FILE runs such
 * a file's inputs in order and exits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include "daemon/decode/decoder.h"
#include "daemon/process/process.h"
#include "daemon/record/recording.h"
#include "daemon/decode/unwind.h"

static struct process_table table;
static struct trace tr;
static struct decode_scratch scratch;

static int history_fd = -1;

/* One write per input, so that the file holds every input up to a crash. */
static void keep_input(const uint8_t *data, size_t size)
{
	uint32_t len = (uint32_t)size;
	struct iovec v[2] = {{.iov_base = &len, .iov_len = sizeof(len)}, {.iov_base = (void *)data, .iov_len = size}};

	if (writev(history_fd, v, 2) != (ssize_t)(sizeof(len) + size)) {
		fprintf(stderr, "fuzz_decoder: cannot keep the input history\n");
		exit(1);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void replay(const char *path)
{
	FILE *f = fopen(path, "r");
	uint32_t len;
	size_t n = 0;

	if (!f) {
		fprintf(stderr, "fuzz_decoder: cannot read %s\n", path);
		exit(1);
	}
	while (fread(&len, sizeof(len), 1, f) == 1) {
		uint8_t *buf = malloc(len ? len : 1);
		if (!buf || fread(buf, 1, len, f) != len) {
			fprintf(stderr, "fuzz_decoder: %s is cut short\n", path);
			exit(1);
		}
		LLVMFuzzerTestOneInput(buf, len);
		free(buf);
		n++;
	}
	fclose(f);
	fprintf(stderr, "fuzz_decoder: replayed %zu inputs\n", n);
	exit(0);
}

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
	if (getenv("JSAMPLED_FUZZ_HISTORY") &&
	    (history_fd = open(getenv("JSAMPLED_FUZZ_HISTORY"), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0) {
		fprintf(stderr, "fuzz_decoder: cannot write %s\n", getenv("JSAMPLED_FUZZ_HISTORY"));
		exit(1);
	}
	if (getenv("JSAMPLED_FUZZ_REPLAY"))
		replay(getenv("JSAMPLED_FUZZ_REPLAY"));
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct js_sample *s;
	struct process *p = table.all.v[0];
	int reason;
	enum decode_status st;

	if (history_fd >= 0)
		keep_input(data, size);
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
