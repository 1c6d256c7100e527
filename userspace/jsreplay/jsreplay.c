/*
 * jsreplay: the offline decoder. Replays a recording made with
 * `jsampled --record FILE` through the daemon's own sample path (same
 * functions, same order), so the result is what jsampled computed - or what
 * the current decoder computes from the same inputs, which is how decoder
 * changes are measured and regression-tested (tests/corpus/).
 *
 *   jsreplay FILE [--stats] [--json] [--cct PID] [--format tree|collapsed|json]
 *                 [--failures] [--explain N] [--hold-ms N]
 * --explain N describes the walk of the first N failed samples on stderr.
 *
 *   jsreplay FILE --extract OUT [--per-outcome N]
 * writes a smaller recording with every agent event but only up to N
 * (default 20) samples of each decoding outcome (each top-frame rule, each
 * failure reason, JVM-internal threads): how tests/corpus/ is made.
 *
 *   jsreplay FILE --outcomes
 * prints one line per decoded sample, in decoding order: its thread and
 * time, the outcome (rule or failure reason) and the trace. The corpus
 * tests compare this with the expected lines stored next to each file.
 * Without options it prints the stats of every process in the recording.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../daemon/daemon.h"
#include "../../daemon/cct_format.h"
#include "../../daemon/log.h"
#include "../../daemon/query_server.h"
#include "../../daemon/recording.h"
#include "../../userspace/common/agent_protocol.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: jsreplay FILE [--stats] [--json] [--cct PID] [--format tree|collapsed|json]\n"
		   "                     [--failures] [--explain N] [--hold-ms N]\n");
}

/* --extract: which samples to keep (the first per_outcome of each
 * outcome category, in decoding order) and which methods their traces name
 * (only those keep their METHOD records: names and call sites). */
struct outcomes {
	struct u64_map kept;    /* sample key -> 1 */
	struct u64_map methods; /* method id + 1 -> 1 */
	unsigned count[128 + 1];
	unsigned per_outcome;
};

enum { CAT_NOT_JAVA = 1, CAT_INCOMPLETE = 2, CAT_RULE = 16, CAT_FAIL = 64, CAT_COUNT = 128 };

static uint64_t sample_key(const struct js_sample *s)
{
	return u64_hash(s->time_ns ^ ((uint64_t)s->tid << 40)) | 1;
}

static void note_outcome(void *ctx, const struct js_sample *s, enum decode_status st, int reason,
			 const struct trace *tr)
{
	struct outcomes *o = ctx;
	int cat = st == DECODE_NOT_JAVA ? CAT_NOT_JAVA
		: st == DECODE_FAILED   ? CAT_FAIL + reason
		: st == DECODE_INCOMPLETE ? CAT_INCOMPLETE
					  : CAT_RULE + tr->top_rule;

	if (cat >= CAT_COUNT || o->count[cat] >= o->per_outcome)
		return;
	o->count[cat]++;
	u64_map_put(&o->kept, sample_key(s), 1);
	for (uint32_t i = 0; i < tr->n; i++)
		if (tr->frames[i].type != FRAME_PSEUDO)
			u64_map_put(&o->methods, (uint64_t)tr->frames[i].method_id + 1, 1);
}

/* --outcomes: the decoding of each sample, one line each. */
struct outcome_printer {
	struct process_table *t;
};

static void print_outcome(void *ctx, const struct js_sample *s, enum decode_status st, int reason,
			  const struct trace *tr)
{
	struct outcome_printer *op = ctx;
	static const char *const status[] = {"resolved", "incomplete", "not_java", "retry", "failed"};
	struct process *p = process_lookup(op->t, (pid_t)s->pid);
	char name[512];

	printf("%u %llu %s %s |", s->tid, (unsigned long long)s->time_ns, status[st],
	       st == DECODE_FAILED ? decode_failure_name(reason) : decode_rule_name(tr->top_rule));
	for (uint32_t i = 0; st != DECODE_FAILED && p && i < tr->n; i++) {
		cct_frame_name(&p->jvm.methods, tr->frames[i].method_id, tr->frames[i].type, name, sizeof(name));
		printf("%s%s@%d", i ? ";" : " ", name, tr->frames[i].bci);
	}
	printf("\n");
}

/* A batch without the METHOD records of methods no kept trace names. */
static void filter_batch(const uint8_t *payload, uint32_t len, const struct outcomes *o, struct wbuf *w)
{
	struct rbuf r;
	size_t count_at;
	uint32_t kept = 0;

	rbuf_init(&r, payload, len);
	wbuf_reset(w);
	wbuf_put(w, rbuf_bytes(&r, 25), 25); /* since, upto, cut, more */
	uint32_t n = rbuf_u32(&r);
	count_at = w->len;
	wbuf_u32(w, 0);
	for (uint32_t i = 0; i < n && !r.err; i++) {
		uint16_t kind = rbuf_u16(&r);
		uint32_t rlen = rbuf_u32(&r);
		const uint8_t *body = rbuf_bytes(&r, rlen);

		if (!body)
			break;
		if (kind == JS_REC_METHOD && rlen >= 4) {
			uint32_t id = (uint32_t)body[0] | (uint32_t)body[1] << 8 | (uint32_t)body[2] << 16 |
				      (uint32_t)body[3] << 24;
			if (!u64_map_get(&o->methods, (uint64_t)id + 1))
				continue;
		}
		wbuf_u16(w, kind);
		wbuf_u32(w, rlen);
		wbuf_put(w, body, rlen);
		kept++;
	}
	wbuf_patch_u32(w, count_at, kept);
}

/* Copies the recording in to out, keeping every event but samples beyond
 * per_outcome of each category. */
static int extract(const char *in, const char *out, struct outcomes *o)
{
	struct recording *r = recording_open(in), *w = recording_create(out, 9);
	uint64_t samples = 0, written = 0;
	struct wbuf filtered;
	int e;

	wbuf_init(&filtered);
	if (!r || !w) {
		fprintf(stderr, "jsreplay: cannot open %s or create %s\n", in, out);
		recording_close(r);
		recording_close(w);
		return 1;
	}
	for (;;) {
		uint8_t type;
		pid_t pid;
		uint64_t t;
		const uint8_t *payload;
		uint32_t len;

		e = recording_next(r, &type, &pid, &t, &payload, &len);
		if (e <= 0)
			break;
		if (type == REC_SAMPLE) {
			samples++;
			if (len < sizeof(struct js_sample) ||
			    !u64_map_get(&o->kept, sample_key((const struct js_sample *)payload)))
				continue;
		}
		if (type == REC_BATCH) {
			filter_batch(payload, len, o, &filtered);
			recording_write_at(w, type, pid, t, filtered.data, filtered.len);
		} else {
			recording_write_at(w, type, pid, t, payload, len);
		}
		written++;
	}
	wbuf_free(&filtered);
	recording_close(r);
	e = e < 0 || recording_error(w);
	recording_close(w);
	fprintf(stderr, "jsreplay: wrote %llu events (%llu samples read) to %s\n", (unsigned long long)written,
		(unsigned long long)samples, out);
	return e;
}

static void answer(struct daemon *d, const char *request)
{
	struct wbuf out;

	wbuf_init(&out);
	query_answer(d, 0, request, &out);
	/* Drop the status line; print the body. */
	if (out.len >= 3 && memcmp(out.data, "OK\n", 3) == 0)
		fwrite(out.data + 3, 1, out.len - 3, stdout);
	else
		fwrite(out.data, 1, out.len, stderr);
	wbuf_free(&out);
}

int main(int argc, char **argv)
{
	static const struct option longs[] = {
		{"stats", no_argument, 0, 's'},     {"json", no_argument, 0, 'j'},
		{"cct", required_argument, 0, 'c'}, {"format", required_argument, 0, 'f'},
		{"failures", no_argument, 0, 'F'},  {"hold-ms", required_argument, 0, 'H'},
		{"explain", required_argument, 0, 'E'},
		{"extract", required_argument, 0, 'X'},
		{"per-outcome", required_argument, 0, 'P'},
		{"outcomes", no_argument, 0, 'O'},
		{"help", no_argument, 0, 'h'},      {0, 0, 0, 0},
	};
	static char *no_args[] = {"jsreplay", NULL};
	struct process_limits limits;
	struct options defaults;
	struct daemon d;
	struct recording *rec;
	const char *cct_pid = NULL, *format = "tree";
	int stats = 0, json = 0, c, r;
	uint32_t explain = 0;
	const char *extract_to = NULL;
	unsigned per_outcome = 20;
	struct outcomes outcomes;
	struct outcome_printer printer;
	int print_outcomes = 0;
	uint64_t events = 0, bad = 0, now = 0;
	char err[256];

	/* The daemon's own defaults: a replay decides as jsampled would. */
	if (options_parse(&defaults, 1, no_args, err, sizeof(err)) != 0) {
		fprintf(stderr, "jsreplay: %s\n", err);
		return 1;
	}
	limits.cct_max_nodes = defaults.cct_max_nodes;
	limits.held_max_bytes = defaults.held_max_bytes;
	limits.hold_ns = defaults.hold_ms * 1000000ull;
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
		case 'E':
			explain = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 'X':
			extract_to = optarg;
			break;
		case 'P':
			per_outcome = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'O':
			print_outcomes = 1;
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
	if (!cct_pid && !extract_to && !print_outcomes)
		stats = 1;
	rec = recording_open(argv[optind]);
	if (!rec) {
		fprintf(stderr, "jsreplay: cannot read %s: %s\n", argv[optind], strerror(errno));
		return 1;
	}
	memset(&d, 0, sizeof(d));
	process_table_init(&d.processes, &limits);
	d.processes.explain = explain ? stderr : NULL;
	d.processes.explain_left = explain;
	memset(&outcomes, 0, sizeof(outcomes));
	u64_map_init(&outcomes.kept);
	u64_map_init(&outcomes.methods);
	outcomes.per_outcome = per_outcome;
	if (extract_to) {
		d.processes.on_decoded = note_outcome;
		d.processes.on_decoded_ctx = &outcomes;
	} else if (print_outcomes) {
		printer.t = &d.processes;
		d.processes.on_decoded = print_outcome;
		d.processes.on_decoded_ctx = &printer;
	}
	for (;;) {
		uint8_t type;
		pid_t pid;
		uint64_t t;
		const uint8_t *payload;
		uint32_t len;
		struct process *p;

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
		t = now;
		p = process_lookup(&d.processes, pid);
		if (type == REC_PROCESS) {
			struct rbuf rb;
			char vm[96];
			uid_t uid;
			rbuf_init(&rb, payload, len);
			uid = rbuf_u32(&rb);
			rbuf_str_copy(&rb, vm, sizeof(vm));
			if (p)
				process_agent_gone(&d.processes, p, false, t);
			if (!process_create(&d.processes, pid, uid, vm))
				bad++;
			continue;
		}
		if (!p) {
			bad++;
			continue;
		}
		switch (type) {
		case REC_BATCH: {
			struct batch_info info;
			if (process_apply_batch(&d.processes, p, payload, len, &info, defaults.max_model_bytes, t) != 0)
				bad++;
			break;
		}
		case REC_SAMPLE:
			if (len < sizeof(struct js_sample) ||
			    len != sizeof(struct js_sample) + ((const struct js_sample *)payload)->stack_len)
				bad++;
			else
				process_take_sample(&d.processes, p, (const struct js_sample *)payload, t);
			break;
		case REC_RETRY:
			process_retry_held(&d.processes, p, t);
			break;
		case REC_EXIT:
			process_agent_gone(&d.processes, p, len && payload[0], t);
			break;
		default:
			bad++;
		}
	}
	recording_close(rec);
	if (r < 0)
		fprintf(stderr, "jsreplay: the recording is truncated or corrupt after %llu events\n",
			(unsigned long long)events);
	if (bad)
		fprintf(stderr, "jsreplay: %llu events could not be replayed\n", (unsigned long long)bad);
	/* Whatever is still held is settled as if the agents had gone. */
	for (size_t i = 0; i < d.processes.all.n; i++)
		process_agent_gone(&d.processes, d.processes.all.v[i], false, UINT64_MAX / 2);
	if (extract_to) {
		int e = extract(argv[optind], extract_to, &outcomes);
		u64_map_free(&outcomes.kept);
		u64_map_free(&outcomes.methods);
		process_table_free(&d.processes);
		return e;
	}
	u64_map_free(&outcomes.kept);
	u64_map_free(&outcomes.methods);
	if (stats) {
		for (size_t i = 0; i < d.processes.all.n; i++) {
			char req[64];
			snprintf(req, sizeof(req), "stats %d%s", (int)d.processes.all.v[i]->pid, json ? " json" : "");
			answer(&d, req);
		}
	}
	if (cct_pid) {
		char req[64];
		snprintf(req, sizeof(req), "cct %s %s", cct_pid, format);
		answer(&d, req);
	}
	process_table_free(&d.processes);
	return r < 0 ? 1 : 0;
}
