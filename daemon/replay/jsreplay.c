/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * jsreplay: the offline decoder. Replays a recording made with
 * `jsampled --record FILE` through the daemon's own sample path (the
 * decoding core, libjsdecode: same functions, same order), so the result is
 * what jsampled computed - or what the current decoder computes from the
 * same inputs, which is how decoder changes are measured and tested
 * (tests/corpus/, tests/fixtures/).
 *
 *   jsreplay FILE [--stats] [--json] [--cct PID] [--format tree|collapsed|json]
 *                 [--failures] [--explain N] [--hold-ms N] [--max-held-mb N] [--max-cct-mb N]
 *                 [--native on|off] [--cost] [--view java|mixed|carrier] [--no-walk-reuse] [--cold N]
 * Without options it prints the stats of every process in the recording.
 * Recordings of jsampled --native-stacks on hold each process's mappings
 * (REC_MAPS): native frames are unwound again from the recorded copies with
 * this machine's files (--native off: not). --cost prints the replay's CPU
 * time per sample on stderr, and how much of it is reading (decompressing)
 * the file, measured by a first pass that only reads it. --cold N evicts
 * the CPU caches every N samples, as the JVM does between live drains.
 * --no-walk-reuse walks every sample to the bottom of its stack instead of
 * joining its thread's previous walk (walk_reuse.h): the result must be
 * the same (tests/corpus/check-corpus.sh compares).
 * --explain N describes the walk of the first N failed samples (and of
 * decoded ones the call-site check rejects) on stderr; --explain-all of
 * every sample.
 *
 *   jsreplay FILE --outcomes
 * prints one line per decoded sample, in decoding order: its thread and
 * time, the outcome (rule or failure reason) and the trace (the corpus
 * format, names as known when the sample was decoded).
 *
 *   jsreplay FILE --traces
 * prints each sample's outcome and trace, top frame first, by the names
 * the agent had reported by the end (the fixture format).
 *
 *   jsreplay FILE --extract OUT [--per-outcome N] [--only OUTCOME] [--sample TID:TIME]
 *                               [--minimal]
 * writes a smaller recording that decodes its samples as FILE did
 * (replay_extract.h): how tests/corpus/ and tests/fixtures/ are made.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>

#include "userspace/profile/kernel_symbols.h"
#include "userspace/profile/cct_format.h"
#include "daemon/decode/decoder.h"
#include "daemon/support/log.h"
#include "daemon/service/options.h"
#include "daemon/process/process.h"
#include "daemon/record/recording.h"
#include "daemon/decode/stack_fragment.h"
#include "daemon/process/stats_format.h"
#include "userspace/common/vec.h"
#include "native_replay.h"
#include "replay_extract.h"
#include "replay_outcomes.h"
#include "userspace/common/pid_text.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: jsreplay FILE [--stats] [--json] [--cct PID] [--format tree|collapsed|json]\n"
		   "                     [--failures] [--explain N] [--explain-all] [--hold-ms N] [--max-held-mb N]\n"
		   "                     [--max-cct-mb N] [--truncate-fragment N] [--native on|off] [--cost]\n"
		   "                     [--view java|mixed|carrier] [--no-walk-reuse] [--cold N]\n"
		   "       jsreplay FILE --outcomes | --traces\n"
		   "       jsreplay FILE --extract OUT [--per-outcome N] [--only OUTCOME] [--sample TID:TIME]\n"
		   "                                   [--minimal]\n");
}

/* What the replay does with each final outcome, besides what jsampled does
 * (process.c): the sample path's on_decoded hook. */
struct replay {
	struct extract_plan *extract; /* --extract */
	bool print;                   /* --outcomes */
	struct trace_log *traces;     /* --traces */
	uint32_t explain_left;        /* --explain N */
	bool explain_all;             /* --explain-all: decoded samples too */
	struct decode_scratch scratch;
	struct trace again;
};

/* --explain: the walk of a failed or impossible sample, step by step. */
static void explain(struct replay *rp, struct process *p, const struct js_sample *s, int reason)
{
	struct decode_ctx ctx = {.layout = &p->jvm.layout, .code = &p->jvm.code, .methods = &p->jvm.methods,
				 .scratch = &rp->scratch, .final = true, .explain = stderr, .chunks = &p->chunks,
				 .enter_special = &p->enter_special};
	int r;

	fprintf(stderr, "sample tid %u time %llu [%.16s] flags %#x state %u anchor sp %#llx fp %#llx pc %#llx, stack %#llx..%#llx "
			"(end %#llx): %s\n",
		s->tid, (unsigned long long)s->time_ns, s->comm, s->flags, s->thread_state, (unsigned long long)s->anchor_sp,
		(unsigned long long)s->anchor_fp, (unsigned long long)s->anchor_pc, (unsigned long long)s->stack_addr,
		(unsigned long long)(s->stack_addr + s->stack_len), (unsigned long long)s->stack_end,
		reason ? decode_failure_name(reason) : "decoded");
	decode_sample(&ctx, s, &rp->again, &r);
}

static void on_decoded(void *ctx, struct process *p, const struct js_sample *s, enum decode_status st, int reason,
		       const struct trace *tr)
{
	struct replay *rp = ctx;

	if (rp->extract)
		extract_note(rp->extract, s, st, reason, tr);
	if (rp->print)
		outcome_print_line(stdout, p, s, st, reason, tr);
	if (rp->traces && trace_log_add(rp->traces, p, s, st, reason, tr) != 0) {
		fprintf(stderr, "jsreplay: out of memory\n");
		exit(1);
	}
	if (rp->explain_left &&
	    (rp->explain_all || st == DECODE_FAILED || tr->cut_impossible)) {
		rp->explain_left--;
		explain(rp, p, s, st == DECODE_FAILED ? reason : 0);
	}
}

/* --truncate-fragment N: every sample's copy cut to its top N bytes, as if
 * jsampled had copied no more (ground truth for stack_bottoms.c: the same
 * recording replayed whole decodes the deep stacks the slow way). */
static uint32_t truncate_bytes;

static const struct js_sample *truncated(const struct js_sample *s)
{
	static struct js_sample *buf;
	static size_t cap;

	if (!truncate_bytes || s->stack_len <= truncate_bytes || (s->flags & JS_SAMPLE_FILL))
		return s;
	if (cap < sizeof(*s) + truncate_bytes) {
		free(buf);
		cap = sizeof(*s) + truncate_bytes;
		if (!(buf = malloc(cap))) {
			fprintf(stderr, "jsreplay: out of memory\n");
			exit(1);
		}
	}
	memcpy(buf, s, sizeof(*s) + truncate_bytes);
	buf->stack_len = truncate_bytes;
	buf->flags = (buf->flags & ~(uint32_t)JS_SAMPLE_COPY_TRIMMED) | JS_SAMPLE_STACK_CAPPED;
	return buf;
}

/* One recorded event, given to the sample path as jsampled gave it. */
static int replay_event(struct process_table *table, uint8_t type, pid_t pid, uint64_t now, const uint8_t *payload,
			uint32_t len, uint64_t max_model_bytes)
{
	struct process *p = process_lookup(table, pid);

	/* Samples waiting for their process's first mappings: those come
	 * right after the event that decoded them, or not at all. */
	if (type != REC_MAPS && type != REC_VDSO)
		native_replay_settle();
	if (type == REC_PROCESS) {
		struct rbuf rb;
		char vm[96];
		uid_t uid;

		rbuf_init(&rb, payload, len);
		uid = rbuf_u32(&rb);
		rbuf_str_copy(&rb, vm, sizeof(vm));
		if (p)
			process_agent_gone(table, p, false, now);
		if (!(p = process_create(table, pid, uid, vm)))
			return -1;
		p->native_only = strcmp(vm, "native") == 0; /* native_processes.h */
		/* Seen when the recording says (now is the event's own stamp,
		 * jsampled's clock then), not when the replay runs: agent and
		 * early times are compared with it. */
		p->seen_ns = p->early_since_ns = now;
		return 0;
	}
	if (!p)
		return -1;
	switch (type) {
	case REC_BATCH: {
		struct batch_info info;
		return process_apply_batch(table, p, payload, len, &info, max_model_bytes, now);
	}
	case REC_SAMPLE:
		if (len < sizeof(struct js_sample) ||
		    len != sizeof(struct js_sample) + ((const struct js_sample *)payload)->stack_len)
			return -1;
		process_take_sample(table, p, truncated((const struct js_sample *)payload), now);
		return 0;
	case REC_RETRY:
		process_retry_held(table, p, now);
		return 0;
	case REC_AGENT:
		process_agent_came(table, p, now);
		return 0;
	case REC_EXIT:
		process_agent_gone(table, p, len && payload[0], now);
		return 0;
	case REC_MAPS:
		/* Without the native hook (--native off) the mappings are unused. */
		if (table->hooks.add_native_frames)
			(void)native_replay_maps(p, (const char *)payload, len);
		return 0;
	case REC_VDSO:
		if (table->hooks.add_native_frames)
			(void)native_replay_vdso(p, payload, len);
		return 0;
	default:
		return -1;
	}
}

/* Replays the whole recording into table; 0, or -1 if it ends early. */
static uint64_t replayed_samples;

/* --cold N: live, jsampled drains a batch at a time, and in between the
 * JVM runs on the same CPUs and evicts jsampled's lines from L1 and L2:
 * each drain starts cold. A replay runs alone and keeps them, so it hides
 * the cost of what a change touches. Sweeping a buffer larger than L2
 * every N samples (a drain's worth) brings that back; the sweep's own CPU
 * is not counted. */
#define COLD_SWEEP_BYTES (16u << 20)
#define COLD_RING_BYTES (64u << 20)
static uint32_t cold_every;
static double cold_decode_cpu; /* the batches' replays alone */

static double thread_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void cold_sweep(void)
{
	static volatile uint8_t *sweep;

	if (!sweep && !(sweep = malloc(COLD_SWEEP_BYTES)))
		return;
	for (size_t i = 0; i < COLD_SWEEP_BYTES; i += 64)
		sweep[i]++;
}

/* --cold N also replays in drains: live, a drain finds its samples in the
 * ring where BPF wrote them since the last one, long out of jsampled's
 * caches. The records of N samples are copied aside as they are read, the
 * caches swept, then the batch replayed: each sample's words come from
 * memory as they would from the ring (and from pages as far apart). Only
 * the batches' replays are counted as decoding. */
struct batched_event {
	uint8_t type;
	pid_t pid;
	uint64_t now;
	uint32_t len;
	size_t at; /* in the batch's bytes */
};

static struct {
	VEC(struct batched_event) ev;
	uint8_t *bytes;
	size_t used, bytes_cap;
	uint32_t samples;
} batch;

static int batch_add(uint8_t type, pid_t pid, uint64_t now, const uint8_t *payload, uint32_t len)
{
	struct batched_event e = {.type = type, .pid = pid, .now = now, .len = len};

	/* Written on around a ring of the daemon's default size, as BPF
	 * writes its ring: a batch is not where the last one was. */
	if (batch.used + len + 64 > COLD_RING_BYTES && batch.ev.n == 0)
		batch.used = 0;
	if (batch.used + len + 64 > batch.bytes_cap) {
		size_t cap = (batch.used + len + 64) * 2;
		uint8_t *grown = realloc(batch.bytes, cap);

		if (!grown)
			return -1;
		batch.bytes = grown;
		batch.bytes_cap = cap;
	}
	e.at = batch.used;
	if (vec_push(&batch.ev, e) != 0)
		return -1;
	memcpy(batch.bytes + batch.used, payload, len);
	batch.used += (len + 63) & ~(size_t)63; /* records start on their own lines, as in the ring */
	batch.samples += type == REC_SAMPLE;
	return 0;
}

/* Replays the batch after a sweep; the events that could not be replayed. */
static uint64_t batch_replay(struct process_table *table, uint64_t max_model_bytes)
{
	uint64_t bad = 0;
	double t0;

	cold_sweep();
	t0 = thread_cpu();
	for (size_t i = 0; i < batch.ev.n; i++) {
		const struct batched_event *e = &batch.ev.v[i];

		/* As the drain does with each record (ringbuf_drain.c). */
		if (e->type == REC_SAMPLE && e->len >= sizeof(struct js_sample) &&
		    ((const struct js_sample *)(batch.bytes + e->at))->stack_len <= e->len - sizeof(struct js_sample))
			frag_prefetch((const struct js_sample *)(batch.bytes + e->at));
		if (replay_event(table, e->type, e->pid, e->now, batch.bytes + e->at, e->len, max_model_bytes) != 0)
			bad++;
	}
	cold_decode_cpu += thread_cpu() - t0;
	batch.ev.n = 0;
	batch.samples = 0;
	return bad;
}

static int replay_file(const char *path, struct process_table *table, uint64_t max_model_bytes)
{
	struct recording *rec = recording_open(path);
	uint64_t events = 0, bad = 0, now = 0, at;
	int r;

	if (!rec) {
		fprintf(stderr, "jsreplay: cannot read %s: %s\n", path, strerror(errno));
		return -1;
	}
	for (;;) {
		uint8_t type;
		pid_t pid;
		uint64_t t;
		const uint8_t *payload;
		uint32_t len;

		r = recording_next(rec, &type, &pid, &t, &payload, &len);
		if (r <= 0)
			break;
		events++;
		/* The replay's clock: the newest sample time seen (the BPF clock
		 * of the recorded run; event stamps of extracted recordings are
		 * the extraction's). The daemon's clock was at most a drain
		 * period ahead of it. */
		if (type == REC_SAMPLE && len >= sizeof(struct js_sample) &&
		    ((const struct js_sample *)payload)->time_ns > now)
			now = ((const struct js_sample *)payload)->time_ns;
		replayed_samples += type == REC_SAMPLE;
		at = type == REC_PROCESS ? t : now;
		if (!cold_every) {
			if (replay_event(table, type, pid, at, payload, len, max_model_bytes) != 0)
				bad++;
			continue;
		}
		if (batch_add(type, pid, at, payload, len) != 0) {
			bad += batch_replay(table, max_model_bytes) + 1;
			continue;
		}
		if (batch.samples >= cold_every)
			bad += batch_replay(table, max_model_bytes);
	}
	if (batch.ev.n)
		bad += batch_replay(table, max_model_bytes);
	native_replay_settle();
	vec_free(&batch.ev);
	free(batch.bytes);
	recording_close(rec);
	if (r < 0)
		fprintf(stderr, "jsreplay: the recording is truncated or corrupt after %llu events\n",
			(unsigned long long)events);
	if (bad)
		fprintf(stderr, "jsreplay: %llu events could not be replayed\n", (unsigned long long)bad);
	/* Whatever is still held is settled as if the agents had gone. */
	for (size_t i = 0; i < table->all.n; i++)
		process_agent_gone(table, table->all.v[i], false, UINT64_MAX / 2);
	return r < 0 ? -1 : 0;
}

/* This process's user + system CPU time. */
static double cpu_seconds(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return 0;
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* --cost: the CPU of reading the recording alone (decompressing and
 * framing its entries), so the decoding's own cost per sample can be told
 * from the file's. */
static double read_only_cpu(const char *path)
{
	struct recording *rec = recording_open(path);
	double t0 = cpu_seconds();
	uint8_t type;
	pid_t pid;
	uint64_t t;
	const uint8_t *payload;
	uint32_t len;

	if (!rec)
		return 0;
	while (recording_next(rec, &type, &pid, &t, &payload, &len) > 0)
		;
	recording_close(rec);
	return cpu_seconds() - t0;
}

/* The replay's CPU per sample, with and without reading the file; the
 * second line is for scripts (tests/bench/bench_cost.py). */
static void print_cost(double total, double read, bool native)
{
	double n = replayed_samples ? (double)replayed_samples : 1.0;
	double decode = total > read ? total - read : 0;

	fprintf(stderr, "jsreplay: %llu samples in %.3f CPU-s: %.2f us per sample (native frames %s); "
			"reading the file %.2f us, decoding %.2f us: %.0f samples/s/core\n",
		(unsigned long long)replayed_samples, total, total * 1e6 / n, native ? "on" : "off", read * 1e6 / n,
		decode * 1e6 / n, decode > 0 ? n / decode : 0.0);
	fprintf(stderr, "jsreplay-cost: samples=%llu total_us=%.3f read_us=%.3f decode_us=%.3f\n",
		(unsigned long long)replayed_samples, total * 1e6 / n, read * 1e6 / n, decode * 1e6 / n);
}

static int print_cct(struct process_table *table, const char *pid, const char *format, unsigned view)
{
	struct process *p = process_lookup(table, pid_from_text(pid));
	int fmt = cct_format_parse(format);
	struct wbuf out;

	if (!p || fmt < 0) {
		fprintf(stderr, "jsreplay: %s\n", !p ? "no such process in the recording" : "unknown format");
		return -1;
	}
	wbuf_init(&out);
	cct_render_stream(&(struct profile_source){.cct = &p->cct, .methods = &p->jvm.methods, .view = view},
			  (enum cct_format)fmt, &out, -1);
	fwrite(out.data, 1, out.len, stdout);
	wbuf_free(&out);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longs[] = {
		{"stats", no_argument, 0, 's'},     {"json", no_argument, 0, 'j'},
		{"cct", required_argument, 0, 'c'}, {"format", required_argument, 0, 'f'},
		{"failures", no_argument, 0, 'F'},  {"hold-ms", required_argument, 0, 'H'},
		{"max-held-mb", required_argument, 0, 'Q'},
		{"max-cct-mb", required_argument, 0, 'B'},
		{"explain", required_argument, 0, 'E'},
		{"explain-all", no_argument, 0, 'A'},
		{"extract", required_argument, 0, 'X'},
		{"per-outcome", required_argument, 0, 'P'},
		{"only", required_argument, 0, 'N'},
		{"minimal", no_argument, 0, 'M'},
		{"sample", required_argument, 0, 'S'},
		{"outcomes", no_argument, 0, 'O'},
		{"traces", no_argument, 0, 'T'},
		{"truncate-fragment", required_argument, 0, 'R'},
		{"native", required_argument, 0, 'n'},
		{"cost", no_argument, 0, 'C'},
		{"view", required_argument, 0, 'V'},
		{"no-walk-reuse", no_argument, 0, 'W'},
		{"cold", required_argument, 0, 'K'},
		{"help", no_argument, 0, 'h'},      {0, 0, 0, 0},
	};
	static char *no_args[] = {"jsreplay", NULL};
	static struct replay rp; /* holds a whole trace: not on the stack */
	struct process_limits limits;
	struct options defaults;
	struct process_table table;
	struct extract_plan plan;
	struct trace_log traces;
	const char *cct_pid = NULL, *format = "tree", *extract_to = NULL, *only = NULL, *sample = NULL;
	int stats = 0, json = 0, print_outcomes = 0, print_traces = 0, minimal = 0, c, rc = 0;
	bool native = true, cost = false, no_reuse = false;
	unsigned view = VIEW_JAVA;
	double cpu0 = 0, read_cpu = 0;
	unsigned per_outcome = 20;
	char err[256];

	/* The daemon's own defaults: a replay decides as jsampled would. */
	if (options_parse(&defaults, 1, no_args, err, sizeof(err)) != 0) {
		fprintf(stderr, "jsreplay: %s\n", err);
		return 1;
	}
	limits.cct_max_nodes = defaults.cct_max_nodes;
	limits.cct_max_bytes = defaults.cct_max_bytes;
	limits.held_max_bytes = defaults.held_max_bytes;
	limits.hold_ns = defaults.hold_ms * 1000000ull;
	limits.drain_ns = defaults.drain_ms * 1000000ull;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
		switch (c) {
		case 's':
			stats = 1;
			break;
		case 'j':
			json = 1;
			break;
		case 'c':
			cct_pid = optarg;
			break;
		case 'f':
			format = optarg;
			break;
		case 'F':
			log_set_level(LOG_DEBUG); /* the decoder logs each failure's stop */
			break;
		case 'H':
			limits.hold_ns = strtoull(optarg, NULL, 10) * 1000000ull;
			break;
		case 'Q': /* the held queue's size, as jsampled's max-held-mb */
			limits.held_max_bytes = (size_t)strtoull(optarg, NULL, 10) << 20;
			break;
		case 'B': /* each tree's bytes, as jsampled's max-cct-mb */
			limits.cct_max_bytes = (size_t)strtoull(optarg, NULL, 10) << 20;
			break;
		case 'E':
			rp.explain_left = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 'A':
			rp.explain_all = true;
			if (!rp.explain_left)
				rp.explain_left = UINT32_MAX;
			break;
		case 'X':
			extract_to = optarg;
			break;
		case 'P':
			per_outcome = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'N':
			only = optarg;
			break;
		case 'M':
			minimal = 1;
			break;
		case 'S':
			sample = optarg;
			break;
		case 'O':
			print_outcomes = 1;
			break;
		case 'T':
			print_traces = 1;
			break;
		case 'R':
			truncate_bytes = (uint32_t)strtoul(optarg, NULL, 10) & ~7u;
			if (truncate_bytes < 64) {
				fprintf(stderr, "jsreplay: --truncate-fragment wants at least 64 bytes\n");
				return 2;
			}
			break;
		case 'n':
			if (strcmp(optarg, "on") != 0 && strcmp(optarg, "off") != 0) {
				fprintf(stderr, "jsreplay: --native wants on or off\n");
				return 2;
			}
			native = strcmp(optarg, "on") == 0;
			break;
		case 'C':
			cost = true;
			break;
		case 'W':
			no_reuse = true;
			break;
		case 'K': {
			char *end;
			unsigned long n = strtoul(optarg, &end, 10);

			if (*optarg == '\0' || *end != '\0' || n == 0 || n > UINT32_MAX) {
				fprintf(stderr, "jsreplay: --cold wants a number of samples (1 or more)\n");
				return 2;
			}
			cold_every = (uint32_t)n;
			break;
		}
		case 'V':
			if (cct_view_parse(optarg) < 0) {
				fprintf(stderr, "jsreplay: --view wants java, mixed, carrier or mixed,carrier\n");
				return 2;
			}
			view = (unsigned)cct_view_parse(optarg);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind + 1 != argc) {
		usage(stderr);
		return 2;
	}
	if (!cct_pid && !extract_to && !print_outcomes && !print_traces)
		stats = 1;
	process_table_init(&table, &limits);
	table.no_walk_reuse = no_reuse;
	/* Kernel frames of a recording are named by this machine's kernel
	 * (best on the machine that recorded it); --outcomes has none. */
	if (cct_pid)
		kernel_symbols_load(NULL);
	extract_init(&plan, per_outcome, only, minimal);
	if (sample && extract_only_sample(&plan, sample) != 0) {
		fprintf(stderr, "jsreplay: --sample wants TID:TIME\n");
		process_table_free(&table);
		return 2;
	}
	trace_log_init(&traces);
	rp.extract = extract_to ? &plan : NULL;
	rp.print = print_outcomes && !extract_to;
	rp.traces = print_traces && !extract_to ? &traces : NULL;
	table.hooks.on_decoded = on_decoded;
	table.hooks.ctx = &rp;
	if (native)
		table.hooks.add_native_frames = native_replay_frames;
	native_replay_use(&table);
	if (cost)
		read_cpu = read_only_cpu(argv[optind]);
	cpu0 = cpu_seconds();
	if (replay_file(argv[optind], &table, defaults.max_model_bytes) != 0)
		rc = 1;
	if (cost)
		print_cost(cold_every ? read_cpu + cold_decode_cpu : cpu_seconds() - cpu0, read_cpu, native);
	if (extract_to) {
		rc = extract_write(&plan, argv[optind], extract_to);
		goto cleanup;
	}
	if (rp.traces)
		trace_log_print(stdout, &traces, &table);
	for (size_t i = 0; stats && i < table.all.n; i++) {
		struct wbuf out;
		wbuf_init(&out);
		stats_format_process(table.all.v[i], &out, json);
		fwrite(out.data, 1, out.len, stdout);
		wbuf_free(&out);
	}
	if (cct_pid && print_cct(&table, cct_pid, format, view) != 0)
		rc = 1;
cleanup:
	trace_log_free(&traces);
	extract_free(&plan);
	process_table_free(&table);
	kernel_symbols_free();
	return rc;
}
