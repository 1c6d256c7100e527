#include "options.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../bpf/sampler.h"

#define CONFIG_MAX_ARGS 256
#define CONFIG_LINE 1024

static void usage(FILE *f)
{
	fprintf(f,
		"usage: jsampled [options]\n"
		"  --config FILE          read options from FILE first: `key = value` lines naming\n"
		"                         the long options below; the command line wins; reread on SIGHUP\n"
		"  --socket PATH          query socket (default %s)\n"
		"  --socket-group NAME    group allowed to query (socket mode 0660; default jsampled)\n"
		"  --agent-socket PATH    socket agents connect to (default: agent.sock next to --socket)\n"
		"  --agent-path PATH      agent library loaded into JVMs (default %s,\n"
		"                         else libjsagent.so next to the jsampled binary)\n"
		"  --attach auto|off      find running and starting JVMs and load the agent (default auto)\n"
		"  --include-user U, --exclude-user U        profile only / never these users (name or uid)\n"
		"  --include-exe GLOB, --exclude-exe GLOB    ... these executables (path glob)\n"
		"  --include-cgroup GLOB, --exclude-cgroup GLOB  ... these cgroups (v2 path glob)\n"
		"                         repeatable; a JVM run with -Djsampled.disable=true is skipped\n"
		"  --rescan-s N           full /proc scan for JVMs every N s (default 60; exec events\n"
		"                         find new JVMs in between)\n"
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
		"  --max-cct-mb N         CCT memory cap per process in MiB (default 64)\n"
		"  --max-processes N      processes tracked at once, exited ones included (default 256)\n"
		"  --state-dir DIR        save profiles here periodically and at stop, restore at start\n"
		"  --save-interval-s N    how often profiles are saved (default 60)\n"
		"  --keep-caps            keep every capability after start (default: drop the ones\n"
		"                         only needed to load BPF and open perf events)\n"
		"  --record FILE          record every input of the sample path (for jsreplay)\n"
		"  --nice N               CPU priority, -20..19 (default -10): the profiler must not\n"
		"                         starve behind the JVMs it observes, or samples pile up\n"
		"  --verbose              debug logging\n"
		"  --help\n",
		JSAMPLED_DEFAULT_SOCKET, JSAMPLED_DEFAULT_AGENT, JS_MAX_FRAGMENT_BYTES,
		JS_DEFAULT_FRAGMENT_BYTES, JS_MAX_FRAGMENT_BYTES);
}

/* Where parse errors go: a caller's buffer (SIGHUP: logged) or stderr. */
static char *err_buf;
static size_t err_len;

__attribute__((format(printf, 1, 2))) static int fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (err_buf) {
		vsnprintf(err_buf, err_len, fmt, ap);
	} else {
		fputs("jsampled: ", stderr);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	}
	va_end(ap);
	return -1;
}

static int parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out, const char *what)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (!*s || *end || errno || v < lo || v > hi || *s == '-')
		return fail("--%s must be an integer in %llu..%llu, got '%s'", what, (unsigned long long)lo,
			    (unsigned long long)hi, s);
	*out = v;
	return 0;
}

static int copy_str(char *dst, size_t cap, const char *s, const char *what)
{
	if (strlen(s) >= cap)
		return fail("--%s is too long (at most %zu bytes): %s", what, cap - 1, s);
	snprintf(dst, cap, "%s", s);
	return 0;
}

static int add_rule(struct rule_list *l, const char *s, const char *what)
{
	if (l->n >= RULE_MAX)
		return fail("at most %d --%s rules", RULE_MAX, what);
	if (!*s)
		return fail("--%s needs a pattern", what);
	if (copy_str(l->v[l->n], RULE_LEN, s, what))
		return -1;
	l->n++;
	return 0;
}

static const struct option longs[] = {
	{"config", required_argument, 0, 'C'},
	{"socket", required_argument, 0, 's'},
	{"socket-group", required_argument, 0, 'G'},
	{"agent-socket", required_argument, 0, 'a'},
	{"agent-path", required_argument, 0, 'A'},
	{"attach", required_argument, 0, 'T'},
	{"include-user", required_argument, 0, 1},
	{"exclude-user", required_argument, 0, 2},
	{"include-exe", required_argument, 0, 3},
	{"exclude-exe", required_argument, 0, 4},
	{"include-cgroup", required_argument, 0, 5},
	{"exclude-cgroup", required_argument, 0, 6},
	{"rescan-s", required_argument, 0, 'S'},
	{"frequency", required_argument, 0, 'f'},
	{"fragment-bytes", required_argument, 0, 'b'},
	{"max-fragment-bytes", required_argument, 0, 'B'},
	{"ringbuf-mb", required_argument, 0, 'r'},
	{"drain-ms", required_argument, 0, 'd'},
	{"wakeup-kb", required_argument, 0, 'w'},
	{"retention-s", required_argument, 0, 't'},
	{"hold-ms", required_argument, 0, 'H'},
	{"max-cct-nodes", required_argument, 0, 'n'},
	{"max-cct-mb", required_argument, 0, 'm'},
	{"max-processes", required_argument, 0, 'P'},
	{"state-dir", required_argument, 0, 'D'},
	{"save-interval-s", required_argument, 0, 'I'},
	{"keep-caps", no_argument, 0, 'K'},
	{"record", required_argument, 0, 'R'},
	{"nice", required_argument, 0, 'N'},
	{"verbose", no_argument, 0, 'v'},
	{"help", no_argument, 0, 'h'},
	{0, 0, 0, 0},
};

static void set_defaults(struct options *o)
{
	memset(o, 0, sizeof(*o));
	snprintf(o->socket_path, sizeof(o->socket_path), "%s", JSAMPLED_DEFAULT_SOCKET);
	snprintf(o->socket_group, sizeof(o->socket_group), "jsampled");
	o->attach = ATTACH_AUTO;
	o->rescan_s = 60;
	o->frequency_hz = 99;
	o->fragment_bytes = JS_DEFAULT_FRAGMENT_BYTES;
	o->max_fragment_bytes = JS_MAX_FRAGMENT_BYTES;
	o->ringbuf_bytes = 64u << 20;
	o->drain_ms = 10;
	o->retention_s = 600;
	o->hold_ms = 2000;
	o->cct_max_nodes = 1000000;
	o->cct_max_bytes = 64u << 20;
	o->max_processes = 256;
	o->save_interval_s = 60;
	o->held_max_bytes = 64u << 20;
	o->nice = -10;
}

/* The numeric options: accepted range, unit (the value is stored shifted
 * left by `shift`: MiB and KiB to bytes) and the field that holds it. */
struct numeric_option {
	int c;
	uint64_t lo, hi;
	unsigned shift;
	size_t offset, size;
};
#define NUMERIC(c, lo, hi, shift, field) \
	{c, lo, hi, shift, offsetof(struct options, field), sizeof(((struct options *)0)->field)}
static const struct numeric_option numerics[] = {
	NUMERIC('S', 1, 86400, 0, rescan_s),
	NUMERIC('f', 1, 100000, 0, frequency_hz),
	NUMERIC('b', 256, JS_MAX_FRAGMENT_BYTES, 0, fragment_bytes),
	NUMERIC('B', 256, JS_MAX_FRAGMENT_BYTES, 0, max_fragment_bytes),
	NUMERIC('r', 1, 4096, 20, ringbuf_bytes),
	NUMERIC('d', 1, 1000, 0, drain_ms),
	NUMERIC('w', 4, 4u << 20, 10, wakeup_bytes),
	NUMERIC('t', 0, 365ull * 86400, 0, retention_s),
	NUMERIC('H', 0, 600000, 0, hold_ms),
	NUMERIC('n', 16, 1u << 30, 0, cct_max_nodes),
	NUMERIC('m', 1, 65536, 20, cct_max_bytes),
	NUMERIC('P', 1, 1u << 20, 0, max_processes),
	NUMERIC('I', 1, 86400, 0, save_interval_s),
};

static int apply_numeric(struct options *o, const struct numeric_option *n, const char *name, const char *arg)
{
	uint64_t v = 0;
	char *field = (char *)o + n->offset;

	if (parse_u64(arg, n->lo, n->hi, &v, name))
		return -1;
	if (n->c == 'r' && (v & (v - 1)))
		return fail("--ringbuf-mb must be a power of two");
	v <<= n->shift;
	if (n->size == sizeof(uint32_t)) {
		uint32_t x = (uint32_t)v;
		memcpy(field, &x, sizeof(x));
	} else {
		memcpy(field, &v, sizeof(v));
	}
	return 0;
}
/* Every field above is 32 or 64 bits wide (apply_numeric stores those two). */
_Static_assert(sizeof(unsigned) == 4 && sizeof(size_t) == 8, "numeric option widths");

/* One option; name is the long option's name, for messages. */
static int apply(struct options *o, int c, const char *name, const char *arg, int *have_agent_socket)
{
	for (size_t i = 0; i < sizeof(numerics) / sizeof(numerics[0]); i++)
		if (numerics[i].c == c)
			return apply_numeric(o, &numerics[i], name, arg);
	switch (c) {
	case 'C':
		return 0; /* read before everything else */
	case 's':
		return copy_str(o->socket_path, sizeof(o->socket_path), arg, name);
	case 'a':
		*have_agent_socket = 1;
		return copy_str(o->agent_socket_path, sizeof(o->agent_socket_path), arg, name);
	case 'G':
		return copy_str(o->socket_group, sizeof(o->socket_group), arg, name);
	case 'A':
		return copy_str(o->agent_path, sizeof(o->agent_path), arg, name);
	case 'D':
		return copy_str(o->state_dir, sizeof(o->state_dir), arg, name);
	case 'R':
		return copy_str(o->record_path, sizeof(o->record_path), arg, name);
	case 'T':
		if (strcmp(arg, "auto") == 0)
			o->attach = ATTACH_AUTO;
		else if (strcmp(arg, "off") == 0)
			o->attach = ATTACH_OFF;
		else
			return fail("--attach must be auto or off, got '%s'", arg);
		return 0;
	case 1:
		return add_rule(&o->rules.include_user, arg, name);
	case 2:
		return add_rule(&o->rules.exclude_user, arg, name);
	case 3:
		return add_rule(&o->rules.include_exe, arg, name);
	case 4:
		return add_rule(&o->rules.exclude_exe, arg, name);
	case 5:
		return add_rule(&o->rules.include_cgroup, arg, name);
	case 6:
		return add_rule(&o->rules.exclude_cgroup, arg, name);
	case 'K':
		o->keep_caps = true;
		return 0;
	case 'v':
		o->verbose = 1;
		return 0;
	case 'N': {
		char *end;
		long n = strtol(arg, &end, 10);
		if (!*arg || *end || n < -20 || n > 19)
			return fail("--nice must be in -20..19");
		o->nice = (int)n;
		return 0;
	}
	default:
		return fail("unknown option");
	}
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

static bool truthy(const char *v)
{
	return !strcmp(v, "true") || !strcmp(v, "yes") || !strcmp(v, "1") || !strcmp(v, "on");
}

/* Reads `key = value` lines (# comments, blank lines) and applies each. */
static int read_config(struct options *o, const char *path, int *have_agent_socket)
{
	char line[CONFIG_LINE];
	FILE *f = fopen(path, "re");
	unsigned lineno = 0;
	int r = 0;

	if (!f)
		return fail("cannot read config %s: %s", path, strerror(errno));
	while (r == 0 && fgets(line, sizeof(line), f)) {
		char *s, *eq, *key, *val;
		const struct option *opt;

		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			r = fail("%s:%u: line too long", path, lineno);
			break;
		}
		s = trim(line);
		if (!*s || *s == '#')
			continue;
		eq = strchr(s, '=');
		if (!eq) {
			r = fail("%s:%u: expected key = value", path, lineno);
			break;
		}
		*eq = 0;
		key = trim(s);
		val = trim(eq + 1);
		if (strlen(val) >= 2 && (val[0] == '"' || val[0] == '\'') && val[strlen(val) - 1] == val[0]) {
			val[strlen(val) - 1] = 0;
			val++;
		}
		for (opt = longs; opt->name; opt++)
			if (!strcmp(opt->name, key))
				break;
		if (!opt->name || opt->val == 'C' || opt->val == 'h') {
			r = fail("%s:%u: unknown key '%s'", path, lineno, key);
			break;
		}
		if (opt->has_arg == no_argument) {
			if (truthy(val))
				r = apply(o, opt->val, key, "", have_agent_socket);
			continue;
		}
		if (apply(o, opt->val, key, val, have_agent_socket) != 0) {
			/* Point at the line: the message names only the key. */
			if (err_buf) {
				char tmp[256];
				snprintf(tmp, sizeof(tmp), "%s", err_buf);
				snprintf(err_buf, err_len, "%s:%u: %s", path, lineno, tmp);
			} else {
				fprintf(stderr, "jsampled: (in %s, line %u)\n", path, lineno);
			}
			r = -1;
		}
	}
	fclose(f);
	return r;
}

static void default_agent_path(struct options *o)
{
	char exe[4096];
	ssize_t n;

	if (access(JSAMPLED_DEFAULT_AGENT, R_OK) == 0) {
		snprintf(o->agent_path, sizeof(o->agent_path), "%s", JSAMPLED_DEFAULT_AGENT);
		return;
	}
	/* Installed under another prefix (<prefix>/sbin/jsampled and
	 * <prefix>/lib/jsampled/), or a build tree (build/jsampled next to
	 * build/libjsagent.so). */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = 0;
		snprintf(o->agent_path, sizeof(o->agent_path), "%.*s/../lib/jsampled/libjsagent.so",
			 (int)(sizeof(o->agent_path) - 32), dirname(exe));
		if (access(o->agent_path, R_OK) != 0)
			snprintf(o->agent_path, sizeof(o->agent_path), "%.*s/libjsagent.so",
				 (int)(sizeof(o->agent_path) - 16), exe);
	}
}

int options_parse(struct options *o, int argc, char **argv, char *err, size_t errlen)
{
	int c, idx, have_agent_socket = 0;

	err_buf = err;
	err_len = errlen;
	if (err && errlen)
		err[0] = 0;
	set_defaults(o);

	/* The config file first, so that the command line overrides it. */
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", longs, &idx)) != -1)
		if (c == 'C' && copy_str(o->config_path, sizeof(o->config_path), optarg, "config"))
			return -1;
	if (o->config_path[0] && read_config(o, o->config_path, &have_agent_socket) != 0)
		return -1;

	opterr = err ? 0 : 1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", longs, &idx)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return 1;
		}
		if (c == '?' || c == ':') {
			if (!err)
				usage(stderr);
			return fail("bad command line option");
		}
		if (apply(o, c, longs[idx].name, optarg ? optarg : "", &have_agent_socket) != 0)
			return -1;
	}
	if (optind < argc)
		return fail("unexpected argument '%s'", argv[optind]);
	if (!have_agent_socket) {
		char dir[108];
		snprintf(dir, sizeof(dir), "%s", o->socket_path);
		if (strlen(dirname(dir)) + sizeof("/agent.sock") > sizeof(o->agent_socket_path))
			return fail("socket directory too long");
		snprintf(dir, sizeof(dir), "%s", o->socket_path);
		snprintf(o->agent_socket_path, sizeof(o->agent_socket_path), "%s/agent.sock", dirname(dir));
	}
	if (!o->agent_path[0])
		default_agent_path(o);
	if (o->max_fragment_bytes < o->fragment_bytes)
		o->max_fragment_bytes = o->fragment_bytes;
	if (!o->wakeup_bytes)
		o->wakeup_bytes = o->ringbuf_bytes / 16;
	return 0;
}
