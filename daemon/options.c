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
#include "cct_slices.h"
#include "sampler_bpf.h"

#define CONFIG_LINE 1024
#define MIB 20 /* shift */
#define KIB 10

enum opt_type {
	T_UINT,   /* an unsigned integer in [lo, hi], stored << shift */
	T_INT,    /* a signed integer in [lo, hi] (lo, hi read as int64) */
	T_STRING, /* a path or name */
	T_FLAG,   /* no argument: sets a bool */
	T_RULE,   /* repeatable glob pattern, appended to a rule_list */
	T_ATTACH, /* auto | off */
	T_EVENTS, /* threads | cpus */
	T_ONOFF,  /* on | off: a bool, default def */
	T_CONFIG, /* --config: read before the rest */
	T_HELP,
};

struct opt_spec {
	const char *name;
	enum opt_type type;
	const char *arg;   /* the argument's name in the usage text */
	int64_t lo, hi;
	unsigned shift;    /* the stored value is the argument << shift */
	int64_t def;       /* numeric default, in argument units */
	const char *sdef;  /* string default (NULL: empty) */
	size_t offset, size;
	bool reloadable;   /* SIGHUP applies it at once (else: restart) */
	const char *help;
};

#define F(field) offsetof(struct options, field), sizeof(((struct options *)0)->field)
#define NONE 0, 0

/* Every option of jsampled. Defaults written here only. */
static const struct opt_spec specs[] = {
	{"config", T_CONFIG, "FILE", 0, 0, 0, 0, NULL, F(config_path), false,
	 "read `key = value` lines naming these options first (the command line wins); reread on SIGHUP"},
	{"socket", T_STRING, "PATH", 0, 0, 0, 0, JSAMPLED_DEFAULT_SOCKET, F(socket_path), false,
	 "query socket (or the one systemd passes)"},
	{"socket-group", T_STRING, "NAME", 0, 0, 0, 0, "jsampled", F(socket_group), false,
	 "group allowed to query (socket mode 0660; 0600 if the group is missing)"},
	{"readers-group", T_STRING, "NAME", 0, 0, 0, 0, "jsampled-readers", F(readers_group), false,
	 "group whose members (by their primary group) may read every process's profile, e.g. the exporter"},
	{"agent-socket", T_STRING, "PATH", 0, 0, 0, 0, NULL, F(agent_socket_path), false,
	 "socket agents connect to (default: agent.sock next to --socket)"},
	{"agent-path", T_STRING, "PATH", 0, 0, 0, 0, NULL, F(agent_path), true,
	 "agent library loaded into JVMs (default " JSAMPLED_DEFAULT_AGENT ", else next to jsampled)"},
	{"attach", T_ATTACH, "auto|off", 0, 0, ATTACH_AUTO, 0, NULL, F(attach), true,
	 "find running and starting JVMs and load the agent into them"},
	{"startup-sampling", T_ONOFF, "on|off", 0, 0, 0, 1, NULL, F(startup_sampling), true,
	 "sample a Java launcher from its exec on, holding its samples until its agent is attached"},
	{"include-user", T_RULE, "USER", 0, 0, 0, 0, NULL, F(rules.include_user), true,
	 "profile only these users (name or uid; repeatable)"},
	{"exclude-user", T_RULE, "USER", 0, 0, 0, 0, NULL, F(rules.exclude_user), true, "never these users"},
	{"include-exe", T_RULE, "GLOB", 0, 0, 0, 0, NULL, F(rules.include_exe), true, "only these executables (path glob)"},
	{"exclude-exe", T_RULE, "GLOB", 0, 0, 0, 0, NULL, F(rules.exclude_exe), true, "never these executables"},
	{"include-cgroup", T_RULE, "GLOB", 0, 0, 0, 0, NULL, F(rules.include_cgroup), true,
	 "only these cgroups (v2 path glob)"},
	{"exclude-cgroup", T_RULE, "GLOB", 0, 0, 0, 0, NULL, F(rules.exclude_cgroup), true, "never these cgroups"},
	{"rescan-s", T_UINT, "N", 1, 86400, 0, 60, NULL, F(rescan_s), true,
	 "full /proc scan for JVMs every N s (exec events find new JVMs in between)"},
	{"frequency", T_UINT, "HZ", SAMPLER_MIN_HZ, SAMPLER_MAX_HZ, 0, 99, NULL, F(frequency_hz), true,
	 "samples per second of a thread's CPU time"},
	{"sample-events", T_EVENTS, "threads|cpus", 0, 0, SAMPLE_EVENTS_THREADS, 0, NULL, F(sample_events), false,
	 "timers on the profiled processes' threads only, or on every CPU (interrupting every task on the host)"},
	{"fragment-bytes", T_UINT, "N", 256, JS_MAX_FRAGMENT_BYTES, 0, JS_DEFAULT_FRAGMENT_BYTES, NULL,
	 F(fragment_bytes), false, "user stack bytes copied per sample (only the live part is copied)"},
	{"max-fragment-bytes", T_UINT, "N", 256, JS_MAX_FRAGMENT_BYTES, 0, JS_MAX_FRAGMENT_BYTES, NULL,
	 F(max_fragment_bytes), true, "threads with deeper stacks get copies up to N bytes"},
	{"fill-bytes", T_UINT, "N", 0, JS_MAX_FILL_WINDOWS * JS_FILL_WINDOW_BYTES, 0, JS_DEFAULT_FILL_BYTES, NULL,
	 F(fill_bytes), false, "a deep thread's copy that would leave a gap below its earlier copies gets the rest of its stack too, if at most N bytes (0: never)"},
	{"kernel-stacks", T_ONOFF, "on|off", 0, 0, 0, 1, NULL, F(kernel_stacks), false,
	 "record the kernel stack of samples that interrupted the kernel (shown by --view mixed queries)"},
	{"native-stacks", T_ONOFF, "on|off", 0, 0, 0, 1, NULL, F(native_stacks), false,
	 "copy and unwind native (C/C++) frames too: JNI libraries, libjvm, JVM-internal threads (--view mixed)"},
	{"native-helper", T_STRING, "PATH", 0, 0, 0, 0, NULL, F(native_helper_path), false,
	 "the sandboxed native unwinder (default: jsampled-unwind next to jsampled, else " JSAMPLED_DEFAULT_NATIVE_HELPER ")"},
	{"native-helper-user", T_STRING, "USER", 0, 0, 0, 0, NULL, F(native_helper_user), false,
	 "the unprivileged user it and query renders run as (default jsampled-unwind if it exists, else nobody)"},
	{"native-helper-mb", T_UINT, "N", 64, 65536, MIB, 512, NULL, F(native_helper_bytes), false,
	 "its heap at most (files it maps come beside it)"},
	{"native-deadline-ms", T_UINT, "N", 100, 600000, 0, 2000, NULL, F(native_deadline_ms), false,
	 "an answer later than this, with half of it spent in the helper's CPU (or 15 times as late), gets it killed and restarted"},
	{"native-queue-mb", T_UINT, "N", 1, 4096, MIB, 16, NULL, F(native_queue_bytes), false,
	 "samples waiting for it at most; past it they get no native frames (counted)"},
	{"ringbuf-mb", T_UINT, "N", 1, 4096, MIB, 64, NULL, F(ringbuf_bytes), false,
	 "ring buffer size in MiB, a power of two"},
	{"drain-ms", T_UINT, "N", 1, 1000, 0, 500, NULL, F(drain_ms), false,
	 "ring buffer drain period (10 ms while a JVM starts; queries drain first)"},
	{"wakeup-kb", T_UINT, "N", 4, 4u << 20, KIB, 0, NULL, F(wakeup_bytes), false,
	 "pending bytes that wake jsampled before its drain timer (default: a quarter of the ring)"},
	{"retention-s", T_UINT, "N", 0, 365ll * 86400, 0, 600, NULL, F(retention_s), true,
	 "keep an exited process's profile this long"},
	{"hold-ms", T_UINT, "N", 0, 600000, 0, 2000, NULL, F(hold_ms), true,
	 "how long a sample may wait for its code map"},
	{"max-cct-nodes", T_UINT, "N", 16, 1u << 30, 0, 4000000, NULL, F(cct_max_nodes), true,
	 "CCT size cap per process; the rest goes to [other], counted"},
	{"max-cct-mb", T_UINT, "N", 1, 65536, MIB, 64, NULL, F(cct_max_bytes), true,
	 "CCT memory cap per process (as allocated: 24-66 bytes a node)"},
	{"window-resolution-s", T_UINT, "N", 1, 60, 0, SLICE_FINEST_S, NULL, F(window_resolution_s), false,
	 "the finest time slice of profiles (a divisor of 60): windows are this exact for 10 minutes, "
	 "then by the minute for an hour, by the hour for a day"},
	{"max-window-mb", T_UINT, "N", 1, 65536, MIB, 16, NULL, F(window_max_bytes), true,
	 "time slices per process; past it the oldest coarsen, then go"},
	{"max-processes", T_UINT, "N", 1, 1u << 20, 0, 256, NULL, F(max_processes), true,
	 "processes tracked at once, exited ones included"},
	{"max-model-mb", T_UINT, "N", 1, 65536, MIB, 40, NULL, F(max_model_bytes), true,
	 "agent data (code map, methods, threads) one process may have jsampled hold"},
	{"max-held-mb", T_UINT, "N", 1, 65536, MIB, 64, NULL, F(held_max_bytes), true,
	 "samples of one process waiting for its agent's data"},
	{"max-processes-per-user", T_UINT, "N", 1, 1u << 20, 0, 64, NULL, F(max_processes_per_user), true,
	 "processes of one non-root user tracked at once"},
	{"max-user-mb", T_UINT, "N", 1, 1u << 20, MIB, 512, NULL, F(max_user_bytes), true,
	 "what the processes of one non-root user make jsampled hold: agent data, held samples, trees, names"},
	{"max-total-mb", T_UINT, "N", 16, 1u << 20, MIB, 1024, NULL, F(max_total_bytes), true,
	 "the same for all processes (under the unit's MemoryMax=2G with the ring and the native helper)"},
	{"max-queries-per-user", T_UINT, "N", 1, 1u << 16, 0, 16, NULL, F(max_queries_per_user), true,
	 "open query connections of one non-root user"},
	{"max-agent-connections-per-user", T_UINT, "N", 1, 1u << 16, 0, 16, NULL, F(max_agent_conns_per_user), true,
	 "agent connections of one non-root user that have not said HELLO yet"},
	{"max-agent-namespaces", T_UINT, "N", 1, 4096, 0, 64, NULL, F(max_agent_namespaces), true,
	 "mount namespaces (containers) with an agent socket of jsampled's at once"},
	{"state-dir", T_STRING, "DIR", 0, 0, 0, 0, NULL, F(state_dir), false,
	 "save profiles here periodically and at stop, restore at start"},
	{"save-interval-s", T_UINT, "N", 1, 86400, 0, 60, NULL, F(save_interval_s), true, "how often profiles are saved"},
	{"keep-caps", T_FLAG, NULL, 0, 0, 0, 0, NULL, F(keep_caps), false,
	 "keep every capability after start (default: drop those only needed to start)"},
	{"record", T_STRING, "FILE", 0, 0, 0, 0, NULL, F(record_path), false,
	 "record every input of the sample path (for jsreplay)"},
	{"nice", T_INT, "N", -20, 19, 0, -10, NULL, F(nice), true,
	 "CPU priority: the profiler must not starve behind the JVMs it observes"},
	{"verbose", T_FLAG, NULL, 0, 0, 0, 0, NULL, F(verbose), true, "debug logging"},
	{"help", T_HELP, NULL, 0, 0, 0, 0, NULL, NONE, false, "this text"},
};
#define NSPECS (sizeof(specs) / sizeof(specs[0]))

static void usage(FILE *f)
{
	fprintf(f, "usage: jsampled [options]\n");
	for (size_t i = 0; i < NSPECS; i++) {
		const struct opt_spec *s = &specs[i];
		char head[64], def[64] = "";

		snprintf(head, sizeof(head), "--%s%s%s", s->name, s->arg ? " " : "", s->arg ? s->arg : "");
		if (s->type == T_UINT || s->type == T_INT) {
			if (s->def || s->type == T_INT)
				snprintf(def, sizeof(def), " (default %lld; %lld..%lld)", (long long)s->def, (long long)s->lo,
					 (long long)s->hi);
			else
				snprintf(def, sizeof(def), " (%lld..%lld)", (long long)s->lo, (long long)s->hi);
		} else if (s->sdef) {
			snprintf(def, sizeof(def), " (default %.40s)", s->sdef);
		} else if (s->type == T_ATTACH) {
			snprintf(def, sizeof(def), " (default auto)");
		} else if (s->type == T_EVENTS) {
			snprintf(def, sizeof(def), " (default threads)");
		} else if (s->type == T_ONOFF) {
			snprintf(def, sizeof(def), " (default %s)", s->def ? "on" : "off");
		}
		fprintf(f, "  %-34s %s%s%s\n", head, s->help, def,
			s->reloadable || s->type == T_HELP || s->type == T_CONFIG ? "" : " [restart]");
	}
	fprintf(f, "Options marked [restart] take effect at the next start; the others on SIGHUP.\n");
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

static void *field(struct options *o, const struct opt_spec *s)
{
	return (char *)o + s->offset;
}

static void store_int(void *p, size_t size, int64_t v)
{
	if (size == sizeof(uint32_t)) {
		uint32_t x = (uint32_t)v;
		memcpy(p, &x, sizeof(x));
	} else {
		uint64_t x = (uint64_t)v;
		memcpy(p, &x, sizeof(x));
	}
}
/* Every numeric field is 32 or 64 bits wide (store_int writes those two). */
_Static_assert(sizeof(unsigned) == 4 && sizeof(int) == 4 && sizeof(size_t) == 8, "numeric option widths");

static int parse_number(const struct opt_spec *s, const char *arg, int64_t *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(arg, &end, 10);
	if (!*arg || *end || errno || v < s->lo || v > s->hi || (s->type == T_UINT && *arg == '-'))
		return fail("--%s must be an integer in %lld..%lld, got '%s'", s->name, (long long)s->lo,
			    (long long)s->hi, arg);
	*out = v;
	return 0;
}

static int apply(struct options *o, const struct opt_spec *s, const char *arg)
{
	void *p = field(o, s);
	int64_t v = 0;

	switch (s->type) {
	case T_UINT:
	case T_INT:
		if (parse_number(s, arg, &v))
			return -1;
		if (s->offset == offsetof(struct options, ringbuf_bytes) && (v & (v - 1)))
			return fail("--ringbuf-mb must be a power of two");
		if (s->offset == offsetof(struct options, window_resolution_s) && 60 % v)
			return fail("--window-resolution-s must divide 60");
		store_int(p, s->size, v * ((int64_t)1 << s->shift));
		return 0;
	case T_STRING:
	case T_CONFIG:
		if (strlen(arg) >= s->size)
			return fail("--%s is too long (at most %zu bytes): %s", s->name, s->size - 1, arg);
		snprintf(p, s->size, "%s", arg);
		return 0;
	case T_FLAG:
		*(bool *)p = true;
		return 0;
	case T_RULE: {
		struct rule_list *l = p;
		if (l->n >= RULE_MAX)
			return fail("at most %d --%s rules", RULE_MAX, s->name);
		if (!*arg)
			return fail("--%s needs a pattern", s->name);
		if (strlen(arg) >= RULE_LEN)
			return fail("--%s is too long (at most %d bytes): %s", s->name, RULE_LEN - 1, arg);
		snprintf(l->v[l->n++], RULE_LEN, "%s", arg);
		return 0;
	}
	case T_ATTACH:
		if (strcmp(arg, "auto") == 0)
			o->attach = ATTACH_AUTO;
		else if (strcmp(arg, "off") == 0)
			o->attach = ATTACH_OFF;
		else
			return fail("--attach must be auto or off, got '%s'", arg);
		return 0;
	case T_EVENTS:
		if (strcmp(arg, "threads") == 0)
			o->sample_events = SAMPLE_EVENTS_THREADS;
		else if (strcmp(arg, "cpus") == 0)
			o->sample_events = SAMPLE_EVENTS_CPUS;
		else
			return fail("--sample-events must be threads or cpus, got '%s'", arg);
		return 0;
	case T_ONOFF:
		if (strcmp(arg, "on") != 0 && strcmp(arg, "off") != 0)
			return fail("--%s must be on or off, got '%s'", s->name, arg);
		*(bool *)p = strcmp(arg, "on") == 0;
		return 0;
	default:
		return fail("unknown option");
	}
}

static void set_defaults(struct options *o)
{
	memset(o, 0, sizeof(*o));
	for (size_t i = 0; i < NSPECS; i++) {
		const struct opt_spec *s = &specs[i];
		if (s->type == T_UINT || s->type == T_INT)
			store_int(field(o, s), s->size, s->def * ((int64_t)1 << s->shift));
		else if (s->type == T_STRING && s->sdef)
			snprintf(field(o, s), s->size, "%s", s->sdef);
		else if (s->type == T_ATTACH)
			o->attach = (enum attach_mode)s->def;
		else if (s->type == T_EVENTS)
			o->sample_events = (enum sample_events)s->def;
		else if (s->type == T_ONOFF)
			*(bool *)field(o, s) = s->def != 0;
	}
}

static const struct opt_spec *spec_named(const char *name)
{
	for (size_t i = 0; i < NSPECS; i++)
		if (strcmp(specs[i].name, name) == 0)
			return &specs[i];
	return NULL;
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
static int read_config(struct options *o, const char *path)
{
	char line[CONFIG_LINE];
	FILE *f = fopen(path, "re");
	unsigned lineno = 0;
	int r = 0;

	if (!f)
		return fail("cannot read config %s: %s", path, strerror(errno));
	while (r == 0 && fgets(line, sizeof(line), f)) {
		char *s, *eq, *key, *val;
		const struct opt_spec *spec;

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
		spec = spec_named(key);
		if (!spec || spec->type == T_CONFIG || spec->type == T_HELP) {
			r = fail("%s:%u: unknown key '%s'", path, lineno, key);
			break;
		}
		if (spec->type == T_FLAG) {
			if (truthy(val))
				r = apply(o, spec, "");
			continue;
		}
		if (apply(o, spec, val) != 0) {
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

/* The helper beside jsampled: installed (<prefix>/lib/jsampled/), or in a
 * build tree (build/jsampled-unwind next to build/jsampled). */
static void default_helper_path(struct options *o)
{
	char exe[4096];
	ssize_t n;

	snprintf(o->native_helper_path, sizeof(o->native_helper_path), "%s", JSAMPLED_DEFAULT_NATIVE_HELPER);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return;
	exe[n] = 0;
	dirname(exe);
	snprintf(o->native_helper_path, sizeof(o->native_helper_path), "%.*s/jsampled-unwind",
		 (int)(sizeof(o->native_helper_path) - 32), exe);
	if (access(o->native_helper_path, X_OK) == 0)
		return;
	snprintf(o->native_helper_path, sizeof(o->native_helper_path), "%.*s/../lib/jsampled/jsampled-unwind",
		 (int)(sizeof(o->native_helper_path) - 40), exe);
	if (access(o->native_helper_path, X_OK) != 0)
		snprintf(o->native_helper_path, sizeof(o->native_helper_path), "%s", JSAMPLED_DEFAULT_NATIVE_HELPER);
}

/* getopt_long's table, built from specs (index i: specs[i]). */
static void long_options(struct option *longs)
{
	for (size_t i = 0; i < NSPECS; i++) {
		longs[i].name = specs[i].name;
		longs[i].has_arg = specs[i].type == T_FLAG || specs[i].type == T_HELP ? no_argument : required_argument;
		longs[i].flag = NULL;
		longs[i].val = 0x100 + (int)i;
	}
	memset(&longs[NSPECS], 0, sizeof(longs[NSPECS]));
}

int options_parse(struct options *o, int argc, char **argv, char *err, size_t errlen)
{
	struct option longs[NSPECS + 1];
	int c, idx;

	err_buf = err;
	err_len = errlen;
	if (err && errlen)
		err[0] = 0;
	set_defaults(o);
	long_options(longs);

	/* The config file first, so that the command line overrides it. */
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", longs, &idx)) != -1)
		if (c >= 0x100 && specs[c - 0x100].type == T_CONFIG && apply(o, &specs[c - 0x100], optarg))
			return -1;
	if (o->config_path[0] && read_config(o, o->config_path) != 0)
		return -1;

	opterr = err ? 0 : 1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", longs, &idx)) != -1) {
		const struct opt_spec *s = c >= 0x100 ? &specs[c - 0x100] : NULL;
		if (!s) {
			if (!err)
				usage(stderr);
			return fail("bad command line option");
		}
		if (s->type == T_HELP) {
			usage(stdout);
			return 1;
		}
		if (s->type != T_CONFIG && apply(o, s, optarg ? optarg : "") != 0)
			return -1;
	}
	if (optind < argc)
		return fail("unexpected argument '%s'", argv[optind]);
	if (!o->agent_socket_path[0]) {
		char dir[108];
		snprintf(dir, sizeof(dir), "%s", o->socket_path);
		if (strlen(dirname(dir)) + sizeof("/agent.sock") > sizeof(o->agent_socket_path))
			return fail("socket directory too long");
		snprintf(dir, sizeof(dir), "%s", o->socket_path);
		snprintf(o->agent_socket_path, sizeof(o->agent_socket_path), "%s/agent.sock", dirname(dir));
	}
	if (!o->agent_path[0])
		default_agent_path(o);
	if (!o->native_helper_path[0])
		default_helper_path(o);
	if (o->max_fragment_bytes < o->fragment_bytes)
		o->max_fragment_bytes = o->fragment_bytes;
	/* A quarter: each wake-up after a sleep starts cold (the JVMs ran
	 * meanwhile), so fewer, bigger drains cost less a sample; three
	 * quarters stay free for a drain that comes late (docs/cost-history.md,
	 * twentieth session). */
	if (!o->wakeup_bytes)
		o->wakeup_bytes = o->ringbuf_bytes / 4;
	return 0;
}

void options_keep_fixed(struct options *fresh, const struct options *old, void (*restart_needed)(const char *name))
{
	for (size_t i = 0; i < NSPECS; i++) {
		const struct opt_spec *s = &specs[i];
		void *a = field(fresh, s);
		const void *b = (const char *)old + s->offset;

		if (s->reloadable || s->type == T_HELP || s->type == T_CONFIG || !memcmp(a, b, s->size))
			continue;
		if (restart_needed)
			restart_needed(s->name);
		memcpy(a, b, s->size);
	}
}
