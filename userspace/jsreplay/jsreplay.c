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
 * Without options it prints the stats of every process in the recording.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../daemon/daemon.h"
#include "../../daemon/log.h"
#include "../../daemon/query_server.h"
#include "../../daemon/recording.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: jsreplay FILE [--stats] [--json] [--cct PID] [--format tree|collapsed|json]\n"
		   "                     [--failures] [--explain N] [--hold-ms N]\n");
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
		{"help", no_argument, 0, 'h'},      {0, 0, 0, 0},
	};
	struct process_limits limits = {.cct_max_nodes = 1000000, .held_max_bytes = 64u << 20,
					.hold_ns = 2000ull * 1000000};
	struct daemon d;
	struct recording *rec;
	const char *cct_pid = NULL, *format = "tree";
	int stats = 0, json = 0, c, r;
	uint32_t explain = 0;
	uint64_t events = 0, bad = 0;

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
	if (!cct_pid)
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
			if (process_apply_batch(&d.processes, p, payload, len, &info) != 0)
				bad++;
			break;
		}
		case REC_SAMPLE:
			if (len < sizeof(struct js_sample) ||
			    len != sizeof(struct js_sample) + ((const struct js_sample *)payload)->stack_len)
				bad++;
			else
				process_take_sample(&d.processes, p, (const struct js_sample *)payload);
			break;
		case REC_RETRY:
			process_retry_held(&d.processes, p);
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
