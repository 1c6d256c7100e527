#include "options.h"

#include <getopt.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../bpf/sampler.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: jsampled [options]\n"
		"  --socket PATH          query socket (default %s)\n"
		"  --agent-socket PATH    socket agents connect to (default: agent.sock next to --socket)\n"
		"  --frequency HZ         samples per second per CPU (default 99)\n"
		"  --fragment-bytes N     user stack bytes copied per sample, at most %u (default %u)\n"
		"  --max-fragment-bytes N threads with deeper stacks get copies up to N bytes\n"
		"                         (default %u; equal to --fragment-bytes: never grow)\n"
		"  --ringbuf-mb N         ring buffer size in MiB, a power of two (default 64)\n"
		"  --drain-ms N           ring buffer drain period (default 10)\n"
		"  --wakeup-kb N          pending bytes that wake jsampled before its drain timer\n"
		"                         (default: a sixteenth of the ring buffer)\n"
		"  --retention-s N        keep an exited process's profile this long (default 600)\n"
		"  --hold-ms N            how long a sample may wait for its code map (default 2000)\n"
		"  --max-cct-nodes N      CCT size cap per process (default 1000000)\n"
		"  --record FILE          record every input of the sample path (for jsreplay)\n"
		"  --nice N               CPU priority, -20..19 (default -10): the profiler must not\n"
		"                         starve behind the JVMs it observes, or samples pile up\n"
		"  --verbose              debug logging\n"
		"  --help\n",
		JSAMPLED_DEFAULT_SOCKET, JS_MAX_FRAGMENT_BYTES, JS_DEFAULT_FRAGMENT_BYTES, JS_MAX_FRAGMENT_BYTES);
}

static int parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out, const char *what)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);

	if (!*s || *end || v < lo || v > hi) {
		fprintf(stderr, "jsampled: %s must be an integer in %llu..%llu, got '%s'\n", what,
			(unsigned long long)lo, (unsigned long long)hi, s);
		return -1;
	}
	*out = v;
	return 0;
}

int options_parse(struct options *o, int argc, char **argv)
{
	static const struct option longs[] = {
		{"socket", required_argument, 0, 's'},
		{"agent-socket", required_argument, 0, 'a'},
		{"frequency", required_argument, 0, 'f'},
		{"fragment-bytes", required_argument, 0, 'b'},
		{"max-fragment-bytes", required_argument, 0, 'B'},
		{"ringbuf-mb", required_argument, 0, 'r'},
		{"drain-ms", required_argument, 0, 'd'},
		{"wakeup-kb", required_argument, 0, 'w'},
		{"retention-s", required_argument, 0, 't'},
		{"hold-ms", required_argument, 0, 'H'},
		{"max-cct-nodes", required_argument, 0, 'n'},
		{"record", required_argument, 0, 'R'},
		{"nice", required_argument, 0, 'N'},
		{"verbose", no_argument, 0, 'v'},
		{"help", no_argument, 0, 'h'},
		{0, 0, 0, 0},
	};
	uint64_t v;
	int c, have_agent_socket = 0;

	memset(o, 0, sizeof(*o));
	snprintf(o->socket_path, sizeof(o->socket_path), "%s", JSAMPLED_DEFAULT_SOCKET);
	o->frequency_hz = 99;
	o->fragment_bytes = JS_DEFAULT_FRAGMENT_BYTES;
	o->max_fragment_bytes = JS_MAX_FRAGMENT_BYTES;
	o->ringbuf_bytes = 64u << 20;
	o->drain_ms = 10;
	o->retention_s = 600;
	o->hold_ms = 2000;
	o->cct_max_nodes = 1000000;
	o->held_max_bytes = 64u << 20;
	o->nice = -10;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
		switch (c) {
		case 's':
		case 'a':
			if (strlen(optarg) >= sizeof(o->socket_path)) {
				fprintf(stderr, "jsampled: socket path too long: %s\n", optarg);
				return -1;
			}
			snprintf(c == 's' ? o->socket_path : o->agent_socket_path, sizeof(o->socket_path),
				 "%s", optarg);
			have_agent_socket |= c == 'a';
			break;
		case 'f':
			if (parse_u64(optarg, 1, 100000, &v, "--frequency"))
				return -1;
			o->frequency_hz = (unsigned)v;
			break;
		case 'b':
			if (parse_u64(optarg, 256, JS_MAX_FRAGMENT_BYTES, &v, "--fragment-bytes"))
				return -1;
			o->fragment_bytes = (unsigned)v;
			break;
		case 'B':
			if (parse_u64(optarg, 256, JS_MAX_FRAGMENT_BYTES, &v, "--max-fragment-bytes"))
				return -1;
			o->max_fragment_bytes = (unsigned)v;
			break;
		case 'r':
			if (parse_u64(optarg, 1, 4096, &v, "--ringbuf-mb"))
				return -1;
			if (v & (v - 1)) {
				fprintf(stderr, "jsampled: --ringbuf-mb must be a power of two\n");
				return -1;
			}
			o->ringbuf_bytes = (size_t)v << 20;
			break;
		case 'd':
			if (parse_u64(optarg, 1, 1000, &v, "--drain-ms"))
				return -1;
			o->drain_ms = (unsigned)v;
			break;
		case 'w':
			if (parse_u64(optarg, 4, 4u << 20, &v, "--wakeup-kb"))
				return -1;
			o->wakeup_bytes = (size_t)v << 10;
			break;
		case 't':
			if (parse_u64(optarg, 0, 365ull * 86400, &v, "--retention-s"))
				return -1;
			o->retention_s = v;
			break;
		case 'H':
			if (parse_u64(optarg, 0, 600000, &v, "--hold-ms"))
				return -1;
			o->hold_ms = v;
			break;
		case 'n':
			if (parse_u64(optarg, 16, 1u << 30, &v, "--max-cct-nodes"))
				return -1;
			o->cct_max_nodes = (uint32_t)v;
			break;
		case 'v':
			o->verbose = 1;
			break;
		case 'N': {
			char *end;
			long n = strtol(optarg, &end, 10);
			if (*end || n < -20 || n > 19) {
				fprintf(stderr, "jsampled: --nice must be in -20..19\n");
				return -1;
			}
			o->nice = (int)n;
			break;
		}
		case 'R':
			if (strlen(optarg) >= sizeof(o->record_path)) {
				fprintf(stderr, "jsampled: --record path too long\n");
				return -1;
			}
			snprintf(o->record_path, sizeof(o->record_path), "%s", optarg);
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "jsampled: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return -1;
	}
	if (!have_agent_socket) {
		char dir[108];
		snprintf(dir, sizeof(dir), "%s", o->socket_path);
		if (strlen(dirname(dir)) + sizeof("/agent.sock") > sizeof(o->agent_socket_path)) {
			fprintf(stderr, "jsampled: socket directory too long\n");
			return -1;
		}
		snprintf(dir, sizeof(dir), "%s", o->socket_path);
		snprintf(o->agent_socket_path, sizeof(o->agent_socket_path), "%s/agent.sock",
			 dirname(dir));
	}
	if (o->max_fragment_bytes < o->fragment_bytes)
		o->max_fragment_bytes = o->fragment_bytes;
	if (!o->wakeup_bytes)
		o->wakeup_bytes = o->ringbuf_bytes / 16;
	return 0;
}
