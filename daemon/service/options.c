/* SPDX-License-Identifier: GPL-2.0-only */
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

#include "bpf/sampler.h"
#include "userspace/common/kv_file.h"
#include "userspace/profile/cct_slices.h"
#include "daemon/ingest/sampler_bpf.h"

#define MIB 20 /* shift */
#define KIB 10

enum opt_type {
	T_UINT,   /* an unsigned integer in [lo, hi], stored << shift */
	T_INT,    /* a signed integer in [lo, hi] (lo, hi read as int64) */
	T_STRING, /* a path or name */
	T_FLAG,   /* no argument: sets a bool */
	T_RULE,   /* repeatable glob pattern, appended to a rule_list */
	T_CHOICE, /* one word of choices[]: stores its index (a bool or an enum) */
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
	const char *const *choices; /* T_CHOICE: the words, by stored value; NULL-terminated */
	const char *help;
};

static const char *const on_off[] = {[false] = "off", [true] = "on", NULL};
static const char *const attach_modes[] = {[ATTACH_OFF] = "off", [ATTACH_AUTO] = "auto", NULL};
static const char *const event_kinds[] = {[SAMPLE_EVENTS_THREADS] = "threads", [SAMPLE_EVENTS_CPUS] = "cpus", NULL};

#define F(field) .offset = offsetof(struct options, field), .size = sizeof(((struct options *)0)->field)

/* Every option of jsampled. Defaults written here only. */
static const struct opt_spec specs[] = {
	{.name = "config", .type = T_CONFIG, .arg = "FILE", F(config_path),
	 .help = "read `key = value` lines naming these options first (the command line wins); reread on SIGHUP"},
	{.name = "socket", .type = T_STRING, .arg = "PATH", .sdef = JSAMPLED_DEFAULT_SOCKET, F(socket_path),
	 .help = "query socket (or the one systemd passes)"},
	{.name = "socket-group", .type = T_STRING, .arg = "NAME", .sdef = "jsampled", F(socket_group),
	 .help = "group allowed to query (socket mode 0660; 0600 if the group is missing)"},
	{.name = "readers-group", .type = T_STRING, .arg = "NAME", .sdef = "jsampled-readers", F(readers_group),
	 .help = "group whose members (by their primary group) may read every process's profile, e.g. the exporter"},
	{.name = "agent-socket", .type = T_STRING, .arg = "PATH", F(agent_socket_path),
	 .help = "socket agents connect to (default: agent.sock next to --socket)"},
	{.name = "agent-path", .type = T_STRING, .arg = "PATH", F(agent_path), .reloadable = true,
	 .help = "agent library loaded into JVMs (default: " JSAMPLED_DEFAULT_AGENT " if it exists, else next to jsampled)"},
	{.name = "attach", .type = T_CHOICE, .choices = attach_modes, .arg = "auto|off", .def = ATTACH_AUTO, F(attach), .reloadable = true,
	 .help = "find running and starting JVMs and load the agent into them"},
	{.name = "startup-sampling", .type = T_CHOICE, .choices = on_off, .arg = "on|off", .def = true, F(startup_sampling), .reloadable = true,
	 .help = "sample a Java launcher from its exec on, holding its samples until its agent is attached"},
	{.name = "include-user", .type = T_RULE, .arg = "USER", F(rules.include_user), .reloadable = true,
	 .help = "profile only these users (name or uid; repeatable)"},
	{.name = "exclude-user", .type = T_RULE, .arg = "USER", F(rules.exclude_user), .reloadable = true,
	 .help = "never these users"},
	{.name = "include-exe", .type = T_RULE, .arg = "GLOB", F(rules.include_exe), .reloadable = true,
	 .help = "only these executables (path glob)"},
	{.name = "exclude-exe", .type = T_RULE, .arg = "GLOB", F(rules.exclude_exe), .reloadable = true,
	 .help = "never these executables"},
	{.name = "include-cgroup", .type = T_RULE, .arg = "GLOB", F(rules.include_cgroup), .reloadable = true,
	 .help = "only these cgroups (v2 path glob)"},
	{.name = "exclude-cgroup", .type = T_RULE, .arg = "GLOB", F(rules.exclude_cgroup), .reloadable = true,
	 .help = "never these cgroups"},
	{.name = "rescan-s", .type = T_UINT, .arg = "N", .lo = 1, .hi = 86400, .def = 60, F(rescan_s), .reloadable = true,
	 .help = "full /proc scan for JVMs every N s (exec events find new JVMs in between)"},
	{.name = "frequency", .type = T_UINT, .arg = "HZ", .lo = SAMPLER_MIN_HZ, .hi = SAMPLER_MAX_HZ, .def = 99, F(frequency_hz), .reloadable = true,
	 .help = "samples per second of a thread's CPU time"},
	{.name = "sample-events", .type = T_CHOICE, .choices = event_kinds, .arg = "threads|cpus", .def = SAMPLE_EVENTS_THREADS, F(sample_events),
	 .help = "timers on the profiled processes' threads only, or on every CPU (interrupting every task on the host)"},
	{.name = "fragment-bytes", .type = T_UINT, .arg = "N", .lo = 256, .hi = JS_MAX_FRAGMENT_BYTES, .def = JS_DEFAULT_FRAGMENT_BYTES, F(fragment_bytes),
	 .help = "user stack bytes copied per sample (only the live part is copied)"},
	{.name = "max-fragment-bytes", .type = T_UINT, .arg = "N", .lo = 256, .hi = JS_MAX_FRAGMENT_BYTES, .def = JS_MAX_FRAGMENT_BYTES, F(max_fragment_bytes), .reloadable = true,
	 .help = "threads with deeper stacks get copies up to N bytes"},
	{.name = "fill-bytes", .type = T_UINT, .arg = "N", .lo = 0, .hi = JS_MAX_FILL_WINDOWS * JS_FILL_WINDOW_BYTES, .def = JS_DEFAULT_FILL_BYTES, F(fill_bytes),
	 .help = "a deep thread's copy that would leave a gap below its earlier copies gets the rest of its stack too, if at most N bytes (0: never)"},
	{.name = "kernel-stacks", .type = T_CHOICE, .choices = on_off, .arg = "on|off", .def = true, F(kernel_stacks),
	 .help = "record the kernel stack of samples that interrupted the kernel (shown by --view mixed queries)"},
	{.name = "native-stacks", .type = T_CHOICE, .choices = on_off, .arg = "on|off", .def = true, F(native_stacks),
	 .help = "copy and unwind native (C/C++) frames too: JNI libraries, libjvm, JVM-internal threads (--view mixed)"},
	{.name = "offcpu", .type = T_CHOICE, .choices = on_off, .arg = "on|off", .def = false, F(offcpu),
	 .help = "sample threads off CPU too, weighted by the time they wait (profile types offcpu and wall)"},
	{.name = "alloc", .type = T_CHOICE, .choices = on_off, .arg = "on|off", .def = false, F(alloc), .reloadable = true,
	 .help = "have each JVM's agent sample allocations with their stacks (profile type alloc)"},
	{.name = "alloc-interval-kb", .type = T_UINT, .arg = "N", .lo = 1, .hi = 1u << 20, .shift = KIB, .def = 512, F(alloc_interval), .reloadable = true,
	 .help = "mean allocated KiB between two sampled allocations"},
	{.name = "lock", .type = T_CHOICE, .choices = on_off, .arg = "on|off", .def = false, F(lock), .reloadable = true,
	 .help = "have each JVM's agent sample waits for contended monitors and java.util.concurrent locks (profile type lock)"},
	{.name = "lock-interval-us", .type = T_UINT, .arg = "N", .lo = 1, .hi = 60000000, .def = 1000, F(lock_interval_us), .reloadable = true,
	 .help = "mean microseconds of lock waiting between two sampled waits"},
	{.name = "native-helper", .type = T_STRING, .arg = "PATH", F(native_helper_path),
	 .help = "the sandboxed native unwinder (default: jsampled-unwind next to jsampled, else " JSAMPLED_DEFAULT_NATIVE_HELPER ")"},
	{.name = "native-helper-user", .type = T_STRING, .arg = "USER", F(native_helper_user),
	 .help = "the unprivileged user it and query renders run as (default: jsampled-unwind if it exists, else nobody)"},
	{.name = "native-helper-mb", .type = T_UINT, .arg = "N", .lo = 64, .hi = 65536, .shift = MIB, .def = 512, F(native_helper_bytes),
	 .help = "its heap at most (files it maps come beside it)"},
	{.name = "native-deadline-ms", .type = T_UINT, .arg = "N", .lo = 100, .hi = 600000, .def = 2000, F(native_deadline_ms),
	 .help = "an answer later than this, with half of it spent in the helper's CPU (or 15 times as late), gets it killed and restarted"},
	{.name = "native-queue-mb", .type = T_UINT, .arg = "N", .lo = 1, .hi = 4096, .shift = MIB, .def = 16, F(native_queue_bytes),
	 .help = "samples waiting for it at most; past it they get no native frames (counted)"},
	{.name = "ringbuf-mb", .type = T_UINT, .arg = "N", .lo = 1, .hi = 4096, .shift = MIB, F(ringbuf_bytes),
	 .help = "ring buffer size in MiB, a power of two (default: a second of 16 KiB samples at --frequency on every CPU, twice that with --offcpu, 8..64)"},
	{.name = "drain-ms", .type = T_UINT, .arg = "N", .lo = 1, .hi = 1000, .def = 500, F(drain_ms),
	 .help = "ring buffer drain period (10 ms while a JVM starts; queries drain first)"},
	{.name = "wakeup-kb", .type = T_UINT, .arg = "N", .lo = 4, .hi = 4u << 20, .shift = KIB, F(wakeup_bytes),
	 .help = "pending bytes that wake jsampled before its drain timer (default: a quarter of the ring)"},
	{.name = "retention-s", .type = T_UINT, .arg = "N", .lo = 0, .hi = 365ll * 86400, .def = 600, F(retention_s), .reloadable = true,
	 .help = "keep an exited process's profile this long"},
	{.name = "hold-ms", .type = T_UINT, .arg = "N", .lo = 0, .hi = 600000, .def = 2000, F(hold_ms), .reloadable = true,
	 .help = "how long a sample may wait for its code map"},
	{.name = "max-cct-nodes", .type = T_UINT, .arg = "N", .lo = 16, .hi = 1u << 30, .def = 4000000, F(cct_max_nodes), .reloadable = true,
	 .help = "CCT size cap per process; the rest goes to [other], counted"},
	{.name = "max-cct-mb", .type = T_UINT, .arg = "N", .lo = 1, .hi = 65536, .shift = MIB, .def = 64, F(cct_max_bytes), .reloadable = true,
	 .help = "CCT memory cap per process (as allocated: 24-66 bytes a node)"},
	{.name = "window-resolution-s", .type = T_UINT, .arg = "N", .lo = 1, .hi = 60, .def = SLICE_FINEST_S, F(window_resolution_s),
	 .help = "the finest time slice of profiles (a divisor of 60): windows are this exact for 10 minutes, " "then by the minute for an hour, by the hour for a day"},
	{.name = "max-window-mb", .type = T_UINT, .arg = "N", .lo = 1, .hi = 65536, .shift = MIB, .def = 16, F(window_max_bytes), .reloadable = true,
	 .help = "time slices per process; past it the oldest coarsen, then go"},
	{.name = "max-processes", .type = T_UINT, .arg = "N", .lo = 1, .hi = 1u << 20, .def = 256, F(max_processes), .reloadable = true,
	 .help = "processes tracked at once, exited ones included"},
	{.name = "max-model-mb", .type = T_UINT, .arg = "N", .lo = 1, .hi = 65536, .shift = MIB, .def = 40, F(max_model_bytes), .reloadable = true,
	 .help = "agent data (code map, methods, threads) one process may have jsampled hold"},
	{.name = "max-held-mb", .type = T_UINT, .arg = "N", .lo = 1, .hi = 65536, .shift = MIB, .def = 64, F(held_max_bytes), .reloadable = true,
	 .help = "samples of one process waiting for its agent's data"},
	{.name = "max-processes-per-user", .type = T_UINT, .arg = "N", .lo = 1, .hi = 1u << 20, .def = 64, F(max_processes_per_user), .reloadable = true,
	 .help = "processes of one non-root user tracked at once"},
	{.name = "max-user-mb", .type = T_UINT, .arg = "N", .lo = 1, .hi = 1u << 20, .shift = MIB, .def = 512, F(max_user_bytes), .reloadable = true,
	 .help = "what the processes of one non-root user make jsampled hold: agent data, held samples, trees, names"},
	{.name = "max-total-mb", .type = T_UINT, .arg = "N", .lo = 16, .hi = 1u << 20, .shift = MIB, .def = 1024, F(max_total_bytes), .reloadable = true,
	 .help = "the same for all processes (under the unit's MemoryMax=2G with the ring and the native helper)"},
	{.name = "max-queries-per-user", .type = T_UINT, .arg = "N", .lo = 1, .hi = 1u << 16, .def = 16, F(max_queries_per_user), .reloadable = true,
	 .help = "open query connections of one non-root user"},
	{.name = "max-agent-connections-per-user", .type = T_UINT, .arg = "N", .lo = 1, .hi = 1u << 16, .def = 16, F(max_agent_conns_per_user), .reloadable = true,
	 .help = "agent connections of one non-root user that have not said HELLO yet"},
	{.name = "max-agent-namespaces", .type = T_UINT, .arg = "N", .lo = 1, .hi = 4096, .def = 64, F(max_agent_namespaces), .reloadable = true,
	 .help = "mount namespaces (containers) with an agent socket of jsampled's at once"},
	{.name = "state-dir", .type = T_STRING, .arg = "DIR", F(state_dir),
	 .help = "save profiles here periodically and at stop, restore at start"},
	{.name = "save-interval-s", .type = T_UINT, .arg = "N", .lo = 1, .hi = 86400, .def = 60, F(save_interval_s), .reloadable = true,
	 .help = "how often profiles are saved"},
	{.name = "keep-caps", .type = T_FLAG, F(keep_caps),
	 .help = "keep every capability after start (default: drop those only needed to start)"},
	{.name = "record", .type = T_STRING, .arg = "FILE", F(record_path),
	 .help = "record every input of the sample path (for jsreplay)"},
	{.name = "nice", .type = T_INT, .arg = "N", .lo = -20, .hi = 19, .def = -10, F(nice), .reloadable = true,
	 .help = "CPU priority: the profiler must not starve behind the JVMs it observes"},
	{.name = "verbose", .type = T_FLAG, F(verbose), .reloadable = true,
	 .help = "debug logging"},
	{.name = "help", .type = T_HELP,
	 .help = "this text"},
};
#define NSPECS (sizeof(specs) / sizeof(specs[0]))

void options_usage(FILE *f)
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
		} else if (s->type == T_CHOICE) {
			snprintf(def, sizeof(def), " (default %s)", s->choices[s->def]);
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
	if (size == sizeof(bool)) {
		bool x = v != 0;
		memcpy(p, &x, sizeof(x));
	} else if (size == sizeof(uint32_t)) {
		uint32_t x = (uint32_t)v;
		memcpy(p, &x, sizeof(x));
	} else {
		uint64_t x = (uint64_t)v;
		memcpy(p, &x, sizeof(x));
	}
}
/* Every numeric or choice field is a bool, or 32 or 64 bits wide (the widths
 * store_int writes). */
_Static_assert(sizeof(bool) == 1 && sizeof(unsigned) == 4 && sizeof(int) == 4 && sizeof(size_t) == 8 &&
		       sizeof(enum attach_mode) == 4 && sizeof(enum sample_events) == 4,
	       "option field widths");

static int64_t load_int(const void *p, size_t size)
{
	if (size == sizeof(bool)) {
		bool x;
		memcpy(&x, p, sizeof(x));
		return x;
	} else if (size == sizeof(uint32_t)) {
		uint32_t x;
		memcpy(&x, p, sizeof(x));
		return x;
	} else {
		uint64_t x;
		memcpy(&x, p, sizeof(x));
		return (int64_t)x;
	}
}

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

/* Room for a second of samples at the sampling rate on every CPU, each
 * the default copy: a drain comes every --drain-ms (500) or at a quarter
 * full, so a late one has time; 8 MiB at least, 64 at most (what a host of
 * 64 CPUs, or 2 at 10 kHz, fills in that second). Not 64 MiB everywhere:
 * the ring is mapped into jsampled twice (a record that wraps reads
 * straight), all of it resident. */
static size_t default_ringbuf_bytes(const struct options *o)
{
	long cpus = sysconf(_SC_NPROCESSORS_CONF);
	uint64_t want = (uint64_t)(cpus > 0 ? cpus : 1) * o->frequency_hz * JS_DEFAULT_FRAGMENT_BYTES * (o->offcpu ? 2 : 1);
	size_t bytes = (size_t)8 << 20;

	while (bytes < want && bytes < ((size_t)64 << 20))
		bytes *= 2;
	return bytes;
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
	case T_CHOICE:
		for (v = 0; s->choices[v]; v++)
			if (strcmp(arg, s->choices[v]) == 0) {
				store_int(p, s->size, v);
				return 0;
			}
		return fail("--%s must be %s, got '%s'", s->name, s->arg, arg);
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
		else if (s->type == T_CHOICE)
			store_int(field(o, s), s->size, s->def);
	}
}

static const struct opt_spec *spec_named(const char *name)
{
	for (size_t i = 0; i < NSPECS; i++)
		if (strcmp(specs[i].name, name) == 0)
			return &specs[i];
	return NULL;
}

static bool truthy(const char *v)
{
	return !strcmp(v, "true") || !strcmp(v, "yes") || !strcmp(v, "1") || !strcmp(v, "on");
}

/* One setting of the config file (userspace/common/kv_file.h): its
 * message goes to the reader, which names the file and line. */
static int apply_setting(void *ctx, const char *key, const char *val, char *err, size_t errlen)
{
	const struct opt_spec *spec = spec_named(key);
	char *saved_buf = err_buf;
	size_t saved_len = err_len;
	int r;

	if (!spec || spec->type == T_CONFIG || spec->type == T_HELP) {
		snprintf(err, errlen, "unknown key '%s'", key);
		return -1;
	}
	err_buf = err;
	err_len = errlen;
	if (spec->type == T_FLAG)
		r = truthy(val) ? apply(ctx, spec, "") : 0;
	else
		r = apply(ctx, spec, val);
	err_buf = saved_buf;
	err_len = saved_len;
	return r;
}

/* Reads the config file's settings and applies each. */
static int read_config(struct options *o, const char *path)
{
	const struct kv_reader reader = {.apply = apply_setting, .ctx = o};
	char err[768];
	FILE *f = fopen(path, "re");
	int r;

	if (!f)
		return fail("cannot read config %s: %s", path, strerror(errno));
	r = kv_file_read(f, path, &reader, err, sizeof(err));
	fclose(f);
	return r == 0 ? 0 : fail("%s", err);
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
				options_usage(stderr);
			return fail("bad command line option");
		}
		if (s->type == T_HELP) {
			options_usage(stdout);
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
	if (!o->ringbuf_bytes)
		o->ringbuf_bytes = default_ringbuf_bytes(o);
	/* A quarter: each wake-up after a sleep starts cold (the JVMs ran
	 * meanwhile), so fewer, bigger drains cost less a sample; three
	 * quarters stay free for a drain that comes late (docs/performance.md,
	 * "Drains are batched"). */
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

size_t options_count(void)
{
	return NSPECS;
}

const char *options_name(size_t i)
{
	return i < NSPECS ? specs[i].name : NULL;
}

int options_format(const struct options *o, const char *name, char *buf, size_t len)
{
	const struct opt_spec *s = spec_named(name);
	const void *p;
	int64_t v;

	if (!s || !len)
		return -1;
	p = (const char *)o + s->offset;
	switch (s->type) {
	case T_UINT:
	case T_INT:
		v = load_int(p, s->size);
		if (s->type == T_INT && s->size == sizeof(int32_t))
			v = (int32_t)v;
		snprintf(buf, len, "%lld", (long long)(v >> s->shift));
		return 0;
	case T_STRING:
		snprintf(buf, len, "%s", (const char *)p);
		return 0;
	case T_CHOICE:
		v = load_int(p, s->size);
		for (int64_t i = 0; s->choices[i]; i++)
			if (i == v) {
				snprintf(buf, len, "%s", s->choices[i]);
				return 0;
			}
		return -1;
	default:
		return -1;
	}
}
