/* SPDX-License-Identifier: GPL-2.0-only */
/* The service side of jsampled: settings from a config file and the
 * command line, saved profiles (round trip, damage, limits), process rules,
 * /proc readers and the CCT's memory cap. */
#include <elf.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

#include "userspace/profile/cct.h"
#include "userspace/profile/cct_format.h"
#include "daemon/jvm/hotspot_attach.h"
#include "daemon/jvm/java_launcher.h"
#include "daemon/service/options.h"
#include "daemon/service/process_access.h"
#include "daemon/jvm/process_rules.h"
#include "daemon/jvm/procfs.h"
#include "daemon/service/state_file.h"
#include "userspace/common/big_alloc.h"
#include "check.h"
#include "model_builder.h"

static char tmpdir[] = "/tmp/jsampled-unit-XXXXXX";

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
}

static int parse(struct options *o, char *err, size_t errlen, int argc, ...)
{
	char *argv[16] = {"jsampled"};
	va_list ap;

	va_start(ap, argc);
	for (int i = 1; i < argc; i++)
		argv[i] = va_arg(ap, char *);
	va_end(ap);
	return options_parse(o, argc, argv, err, errlen);
}

static void test_config_file(void)
{
	struct options o;
	char conf[256], err[512];

	snprintf(conf, sizeof(conf), "%s/a.conf", tmpdir);
	write_file(conf, "# comment\n\nfrequency = 499\nretention-s=30\n include-user = alice \n"
			 "include-user = bob\nexclude-exe = \"/opt/*/java\"\nverbose = yes\nkeep-caps = false\n"
			 "attach = off\nmax-cct-mb = 8\n");
	CHECK(parse(&o, err, sizeof(err), 3, "--config", conf) == 0);
	CHECK_EQ(o.frequency_hz, 499);
	CHECK_EQ(o.retention_s, 30);
	CHECK_EQ(o.rules.include_user.n, 2);
	CHECK_STR(o.rules.include_user.v[1], "bob");
	CHECK_STR(o.rules.exclude_exe.v[0], "/opt/*/java");
	CHECK_EQ(o.verbose, 1);
	CHECK(!o.keep_caps);
	CHECK_EQ(o.attach, ATTACH_OFF);
	CHECK_EQ(o.cct_max_bytes, 8u << 20);
	/* The command line wins, wherever --config appears. */
	CHECK(parse(&o, err, sizeof(err), 5, "--frequency", "997", "--config", conf) == 0);
	CHECK_EQ(o.frequency_hz, 997);
	CHECK_EQ(o.retention_s, 30);

	write_file(conf, "frequency = 499\nfrequncy = 2\n");
	CHECK(parse(&o, err, sizeof(err), 3, "--config", conf) == -1);
	CHECK(strstr(err, ":2: unknown key 'frequncy'") != NULL);
	write_file(conf, "frequency = lots\n");
	CHECK(parse(&o, err, sizeof(err), 3, "--config", conf) == -1);
	CHECK(strstr(err, ":1:") != NULL && strstr(err, "frequency") != NULL);
	write_file(conf, "just words\n");
	CHECK(parse(&o, err, sizeof(err), 3, "--config", conf) == -1);
	CHECK(parse(&o, err, sizeof(err), 3, "--config", "/nonexistent/x.conf") == -1);
	CHECK(strstr(err, "cannot read config") != NULL);
	CHECK(parse(&o, err, sizeof(err), 3, "--attach", "sometimes") == -1);
	CHECK(parse(&o, err, sizeof(err), 3, "--frequency", "-5") == -1);
}

/* Every default --help prints is the value jsampled runs with when given no
 * options, and each option the usage text names is one the table knows. */
static void test_defaults_match_help(void)
{
	struct options o;
	char err[512], *text = NULL, *line, *save = NULL;
	size_t len = 0, checked = 0;
	FILE *f = open_memstream(&text, &len);

	CHECK(parse(&o, err, sizeof(err), 1) == 0);
	CHECK_EQ(o.attach, ATTACH_AUTO);
	options_usage(f);
	fclose(f);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[64], printed[128], actual[256];
		const char *d = strstr(line, "(default ");
		size_t n;

		if (sscanf(line, " --%63[a-z-]", name) != 1)
			continue;
		if (!d)
			continue; /* none, or computed at start: "(default: next to ...)" */
		d += 9;
		n = strcspn(d, ";)");
		snprintf(printed, sizeof(printed), "%.*s", (int)n, d);
		CHECK(options_format(&o, name, actual, sizeof(actual)) == 0);
		if (strcmp(printed, actual) != 0)
			fprintf(stderr, "--%s: --help says %s, runs with %s\n", name, printed, actual);
		CHECK_STR(printed, actual);
		checked++;
	}
	/* Every option with a default was seen (not a parse that matched nothing). */
	CHECK(checked >= 30);
	CHECK(options_count() > checked);
	free(text);
}

/* The shipped config names only options that exist, and each default it
 * shows as a comment (`#key = value`) is the one jsampled has. */
static void test_shipped_config(void)
{
	struct options defaults, o;
	char err[512], line[512];
	FILE *f = fopen("deploy/jsampled.conf", "r");
	unsigned shown = 0;

	CHECK(f != NULL);
	if (!f)
		return;
	CHECK(parse(&defaults, err, sizeof(err), 1) == 0);
	CHECK(parse(&o, err, sizeof(err), 3, "--config", "deploy/jsampled.conf") == 0);
	while (fgets(line, sizeof(line), f)) {
		char key[64], value[256], actual[256];

		if (sscanf(line, "#%63[a-z-] = %255[^\n]", key, value) != 2)
			continue;
		if (strstr(key, "include-") == key || strstr(key, "exclude-") == key)
			continue; /* examples of rules */
		CHECK(options_format(&defaults, key, actual, sizeof(actual)) == 0);
		if (strcmp(value, actual) != 0)
			fprintf(stderr, "deploy/jsampled.conf shows %s = %s, the default is %s\n", key, value, actual);
		CHECK_STR(value, actual);
		shown++;
	}
	fclose(f);
	CHECK(shown >= 10);
}

/* A process table with one profile: main -> work -> leaf, and [GC]. */
static struct process *one_profile(struct process_table *t, pid_t pid)
{
	struct process_limits lim = {.cct_max_nodes = 1000, .held_max_bytes = 1 << 20, .hold_ns = 1000};
	struct trace_frame a[] = {{1, FRAME_INTERPRETED, 0, 6}, {2, FRAME_COMPILED, 0, 12}, {3, FRAME_INLINED, 0, 2}};
	struct trace_frame g[] = {{PSEUDO_GC, FRAME_PSEUDO, 0, -1}};
	struct process *p;

	process_table_init(t, &lim);
	p = process_create(t, pid, 1234, "TestVM 1");
	tb_apply_class(&p->jvm, 7, "Lapp/Main;", "Main.java");
	tb_apply_method(&p->jvm, 1, 7, 0, 0, 0, "main");
	tb_apply_method(&p->jvm, 2, 7, 0, 0, 0, "work");
	tb_apply_method(&p->jvm, 3, 7, 0, 0, 0, "leaf");
	cct_add_at(&p->cct, a, 3, 5, 1700002810);
	cct_add_at(&p->cct, g, 1, 2, 1700002825);
	p->stats.samples = 7;
	p->stats.resolved = 5;
	p->state = PROCESS_EXITED;
	return p;
}

static char *render(struct process *p)
{
	struct wbuf out;

	wbuf_init(&out);
	cct_render(&p->cct, &p->jvm.methods, CCT_FORMAT_COLLAPSED, &out);
	wbuf_u8(&out, 0);
	return (char *)out.data;
}

/* Whether q renders as p does, and holds the collapsed line part. */
static void check_same_render(struct process *p, struct process *q, const char *part)
{
	char *a = render(p), *b = render(q);

	CHECK_STR(a, b);
	CHECK(strstr(b, part) != NULL);
	free(a);
	free(b);
}

/* Saves t into w (initialised here) and restores it into back (the
 * limits of one_profile) at time 1000000: the process pid there. */
static struct process *saved_and_restored(struct process_table *t, struct process_table *back, struct wbuf *w, pid_t pid)
{
	struct process_limits lim = {.cct_max_nodes = 1000, .held_max_bytes = 1 << 20, .hold_ns = 1000};
	char why[256];

	wbuf_init(w);
	CHECK(state_encode(t, 5000, w) == 0);
	process_table_init(back, &lim);
	CHECK_EQ(state_decode(back, w->data, w->len, 1000000, 100, why, sizeof(why)), 1);
	return process_lookup(back, pid);
}

static void test_state_round_trip(void)
{
	struct process_table t, back;
	struct process_limits lim = {.cct_max_nodes = 1000, .held_max_bytes = 1 << 20, .hold_ns = 1000};
	struct wbuf w;
	struct process *p, *q;
	char why[256];
	/* A pid that surely is not running: restored as exited. */
	pid_t pid = 4000000;

	p = one_profile(&t, pid);
	p->exited_ns = 1000;
	q = saved_and_restored(&t, &back, &w, pid);
	CHECK(q != NULL);
	if (q) {
		CHECK(q->restored);
		CHECK_EQ(q->state, PROCESS_EXITED);
		CHECK_EQ(q->uid, 1234);
		CHECK_EQ(q->stats.samples, 7);
		CHECK_EQ(q->cct.samples, 7);
		CHECK_EQ(q->cct.nodes.n, p->cct.nodes.n);
		CHECK_EQ(1000000 - q->exited_ns, 4000); /* how long ago it exited is kept */
		check_same_render(p, q, "app.Main.main_[0];app.Main.work_[j];app.Main.leaf_[i] 5");
		/* Positions and time slices come back too. */
		CHECK_EQ(q->cct.nodes.v[3].bci, 2);
		CHECK_EQ(q->cct.slices.v.n, 2);
		struct slice_window win = {.from_s = 1700002820, .until_s = 1700002830};
		struct profile_source src = {.cct = &q->cct, .methods = &q->jvm.methods, .window = &win};
		struct wbuf out;
		wbuf_init(&out);
		CHECK(cct_render_stream(&src, CCT_FORMAT_COLLAPSED, &out, -1) == 0);
		wbuf_u8(&out, 0);
		CHECK_STR((char *)out.data, "[GC] 2\n");
		wbuf_free(&out);
	}

	/* Any flipped byte is caught by the checksum; nothing is applied. */
	for (size_t i = 0; i < w.len; i += 7) {
		struct process_table t2;
		process_table_init(&t2, &lim);
		w.data[i] ^= 0x5a;
		CHECK(state_decode(&t2, w.data, w.len, 1000000, 100, why, sizeof(why)) == -1);
		CHECK_EQ(t2.all.n, 0);
		w.data[i] ^= 0x5a;
		process_table_free(&t2);
	}
	/* Truncations too. */
	for (size_t n = 0; n < w.len; n += 5) {
		struct process_table t2;
		process_table_init(&t2, &lim);
		CHECK(state_decode(&t2, w.data, n, 1000000, 100, why, sizeof(why)) == -1);
		CHECK_EQ(t2.all.n, 0);
		process_table_free(&t2);
	}
	wbuf_free(&w);
	process_table_free(&t);
	process_table_free(&back);
}

/* A process's allocation and lock trees come back too (version 5), with
 * their class frames' names, methods only they mention, and counters. */
static void test_state_event_trees(void)
{
	struct process_table t, back;
	struct process *p, *q;
	struct wbuf w;
	struct event_caps caps = {.max_nodes = 100, .max_bytes = 1u << 20};
	pid_t pid = 4000002;

	p = one_profile(&t, pid);
	p->exited_ns = 1000;
	tb_apply_method(&p->jvm, 9, 7, 0, 0, 0, "allocates");
	struct cct *bytes = event_profiles_tree(&p->events, EVENT_ALLOC_BYTES, &caps);
	struct cct *objects = event_profiles_tree(&p->events, EVENT_ALLOC_OBJECTS, &caps);
	CHECK(bytes && objects);
	if (!bytes || !objects)
		return;
	struct trace_frame f[] = {{.method_id = 1, .type = FRAME_JAVA, .bci = 3},
				  {.method_id = 9, .type = FRAME_JAVA, .bci = 7},
				  {.method_id = kernel_symbols_intern_for(&p->names, "byte[]"), .type = FRAME_CLASS, .bci = -1}};
	cct_add_at(bytes, f, 3, 4096, 1700002810);
	cct_add_at(objects, f, 3, 2, 1700002810);
	p->events.alloc_interval = 524288;
	p->events.alloc_events = 2;
	q = saved_and_restored(&t, &back, &w, pid);
	CHECK(q != NULL);
	if (q) {
		struct wbuf out;
		CHECK(q->events.tree[EVENT_ALLOC_BYTES] != NULL && q->events.tree[EVENT_ALLOC_OBJECTS] != NULL);
		CHECK(q->events.tree[EVENT_LOCK_DELAY] == NULL);
		CHECK_EQ(q->events.alloc_interval, 524288);
		CHECK_EQ(q->events.alloc_events, 2);
		wbuf_init(&out);
		if (q->events.tree[EVENT_ALLOC_BYTES])
			cct_render(q->events.tree[EVENT_ALLOC_BYTES], &q->jvm.methods, CCT_FORMAT_COLLAPSED, &out);
		wbuf_u8(&out, 0);
		CHECK_STR((char *)out.data, "app.Main.main;app.Main.allocates;byte[] 4096\n");
		wbuf_free(&out);
	}
	wbuf_free(&w);
	process_table_free(&t);
	process_table_free(&back);
}

/* A pruned tree comes back as it was saved: the methods a prune kept
 * under [other] nodes stay there (they are not folded as nodes past the
 * cap would be), and its overflow count with them. */
static void test_state_keeps_pruned_methods(void)
{
	struct process_table t, back;
	struct wbuf w;
	struct process *p, *q;
	pid_t pid = 4000001;

	p = one_profile(&t, pid);
	p->exited_ns = 1000;
	for (int32_t i = 0; i < 3000; i++) {
		struct trace_frame cold[] = {{1, FRAME_INTERPRETED, 0, 6}, {2, FRAME_COMPILED, 0, 100 + i}, {3, FRAME_INLINED, 0, 2}};
		CHECK(cct_add_sample(&p->cct, cold, 3, 1700002812, 9) == 0);
	}
	CHECK(p->cct.prunes > 0);
	CHECK(p->cct.overflow_samples > 0);
	q = saved_and_restored(&t, &back, &w, pid);
	CHECK(q != NULL);
	if (q) {
		CHECK_EQ(q->cct.nodes.n, p->cct.nodes.n);
		CHECK_EQ(q->cct.overflow_samples, p->cct.overflow_samples);
		check_same_render(p, q, "app.Main.main_[0];[other];app.Main.leaf_[i] ");
	}
	wbuf_free(&w);
	process_table_free(&t);
	process_table_free(&back);
}

static void test_state_files(void)
{
	struct process_table t, back;
	struct process_limits lim = {.cct_max_nodes = 1000, .held_max_bytes = 1 << 20, .hold_ns = 1000};
	char why[256], path[300];

	one_profile(&t, 4000001);
	process_table_init(&back, &lim);
	CHECK_EQ(state_restore(&back, tmpdir, 1, 100, why, sizeof(why)), 0); /* no file yet */
	CHECK(state_save(&t, tmpdir, 10, why, sizeof(why)) == 0);
	CHECK_EQ(state_restore(&back, tmpdir, 20, 100, why, sizeof(why)), 1);
	snprintf(path, sizeof(path), "%s/%s", tmpdir, STATE_FILE_NAME);
	write_file(path, "JSMPSTAT but not really");
	CHECK(state_restore(&back, tmpdir, 30, 100, why, sizeof(why)) == -1);
	snprintf(path, sizeof(path), "%s/%s.bad", tmpdir, STATE_FILE_NAME);
	CHECK(access(path, F_OK) == 0);
	CHECK(state_save(&t, "/nonexistent-dir", 10, why, sizeof(why)) == -1);
	CHECK(strstr(why, "/nonexistent-dir") != NULL);
	process_table_free(&t);
	process_table_free(&back);
}

/* The byte cap counts what the tree allocated: it fills its memory (a
 * node and its hint take 28 bytes, and a child that is not the node right
 * after its parent a map slot too) and never passes it. */
static void test_cct_byte_cap(void)
{
	const size_t cap = 64 << 10;
	struct cct c;

	CHECK(cct_init(&c, 1u << 30) == 0);
	cct_set_caps(&c, 1u << 30, cap);
	for (uint32_t i = 1; i < 10000; i++) {
		struct trace_frame f[] = {{i, FRAME_COMPILED, 0, -1}, {i + 1, FRAME_INLINED, 0, -1}};
		CHECK(cct_add(&c, f, 2, 1) == 0);
	}
	{
		/* Past the cap only [other] nodes, one per parent: here under
		 * the root, and under the last node made if the cap fell between
		 * a pair's two frames. */
		uint32_t others = 0;

		for (size_t k = 0; k < c.nodes.n; k++)
			others += c.nodes.v[k].type == FRAME_PSEUDO && c.nodes.v[k].method_id == PSEUDO_OVERFLOW;
		CHECK(others >= 1 && others <= 2);
		/* Pairs of nodes, the first of each in the map: 36 bytes a
		 * node on average, up to the map's growth. */
		CHECK(c.nodes.n - others > cap / 72);
		fprintf(stderr, "a 64 KiB tree of pairs holds %zu nodes\n", c.nodes.n);
	}
	CHECK(cct_bytes(&c) <= cap);
	CHECK(c.overflow_samples > 0);
	CHECK_EQ(c.samples, 9999);
	cct_free(&c);
}

/* A cap past the size where the tree's arrays become huge-page mappings:
 * the mappings, whole 2 MiB pages each, fit in it, not only the bytes
 * asked for (which fell up to 2 MiB short per array before). */
static void test_cct_byte_cap_counts_mappings(void)
{
	const size_t cap = 7u << 20;
	struct cct c;
	size_t held;

	CHECK(cct_init(&c, 1u << 30) == 0);
	cct_set_caps(&c, 1u << 30, cap);
	for (uint32_t i = 1; i < 400000; i++) {
		struct trace_frame f[] = {{i, FRAME_COMPILED, 0, -1}, {i + 1, FRAME_INLINED, 0, -1}};
		CHECK(cct_add(&c, f, 2, 1) == 0);
	}
	held = big_alloc_footprint(c.nodes.cap * sizeof(*c.nodes.v)) + big_alloc_footprint(c.self.cap * sizeof(*c.self.v)) +
	       big_alloc_footprint(c.children.cap * sizeof(*c.children.slots));
	fprintf(stderr, "a 7 MiB tree: %zu nodes, %zu bytes mapped\n", c.nodes.n, held);
	CHECK(c.overflow_samples > 0); /* it did reach the cap */
	CHECK(held <= cap);
	CHECK(held + (2u << 20) > cap); /* and used it */
	CHECK_EQ(cct_bytes(&c), held + c.slices.bytes);
	cct_free(&c);
}

static void test_rules_and_procfs(void)
{
	struct options o;
	struct proc_status st;
	char why[256], err[256], uid[16];

	CHECK(procfs_status(getpid(), &st) == 0);
	CHECK_EQ(st.euid, geteuid());
	CHECK_EQ(st.nspid, getpid());
	CHECK(procfs_start_time(getpid()) > 0);
	CHECK(procfs_start_time(4000000) == 0);
	CHECK(procfs_maps_has(getpid(), "/libc.so.6") == 1);
	CHECK(procfs_maps_has(getpid(), "/libjvm.so") == 0);
	CHECK(!procfs_java_option(getpid(), "-Djsampled.disable=true"));

	snprintf(uid, sizeof(uid), "%u", (unsigned)geteuid());
	CHECK(parse(&o, err, sizeof(err), 1) == 0);
	CHECK(process_rules_allow(&o.rules, getpid(), geteuid(), why, sizeof(why)));
	CHECK(parse(&o, err, sizeof(err), 3, "--exclude-user", uid) == 0);
	CHECK(!process_rules_allow(&o.rules, getpid(), geteuid(), why, sizeof(why)));
	CHECK(strstr(why, "exclude-user") != NULL);
	CHECK(parse(&o, err, sizeof(err), 3, "--include-user", "nosuchuser-*") == 0);
	CHECK(!process_rules_allow(&o.rules, getpid(), geteuid(), why, sizeof(why)));
	CHECK(parse(&o, err, sizeof(err), 5, "--include-user", "nosuchuser", "--include-user", uid) == 0);
	CHECK(process_rules_allow(&o.rules, getpid(), geteuid(), why, sizeof(why)));
	CHECK(parse(&o, err, sizeof(err), 3, "--exclude-exe", "*/test_service") == 0);
	CHECK(!process_rules_allow(&o.rules, getpid(), geteuid(), why, sizeof(why)));
	CHECK(parse(&o, err, sizeof(err), 3, "--include-cgroup", "/no/such/cgroup/*") == 0);
	CHECK(!process_rules_allow(&o.rules, getpid(), geteuid(), why, sizeof(why)));
}

static void test_attach_outcomes(void)
{
	struct attach_target t;

	/* Not a JVM: we do not catch SIGQUIT, so no signal is ever sent. */
	CHECK_EQ(attach_target_open(getpid(), procfs_start_time(getpid()), &t), ATTACH_OK);
	CHECK_EQ(hotspot_attach_run(&t, "/x.so", "", -1), ATTACH_NOT_READY);
	attach_target_close(&t);
	/* A pid that is not running, and one whose start time says it is
	 * another process now. */
	CHECK_EQ(attach_target_open(4000000, 1, &t), ATTACH_GONE);
	CHECK_EQ(attach_target_open(getpid(), procfs_start_time(getpid()) + 1, &t), ATTACH_GONE);
	CHECK_STR(attach_result_name(ATTACH_NO_LISTENER), "no_attach_listener");
	CHECK_STR(attach_result_name(ATTACH_NOT_THE_JVM), "listener_not_the_jvm");
	CHECK_STR(attach_result_name(99), "unknown");
	CHECK_EQ(hotspot_attach_result(ATTACH_LOAD_FAILED << 8), ATTACH_LOAD_FAILED);
	CHECK_EQ(hotspot_attach_result(SIGKILL), ATTACH_CRASHED);
	/* Replies of older and newer JDKs, and lies. */
	CHECK_EQ(hotspot_parse_reply("0\n0\n", 4), ATTACH_OK);
	CHECK_EQ(hotspot_parse_reply("0\nreturn code: 0\n", 17), ATTACH_OK);
	CHECK_EQ(hotspot_parse_reply("0\nreturn code: -1\n", 18), ATTACH_AGENT_FAILED);
	CHECK_EQ(hotspot_parse_reply("101\nbad\n", 8), ATTACH_LOAD_FAILED);
	/* JDK 21+ before the live phase: status 0, a message, no code. */
	CHECK_EQ(hotspot_parse_reply("0\nDynamic agent loading is only permitted in the live phase\n", 60), ATTACH_NOT_LIVE);
	CHECK_EQ(hotspot_parse_reply("0\nsomething else went wrong\n", 28), ATTACH_AGENT_FAILED);
	CHECK_EQ(hotspot_parse_reply("", 0), ATTACH_PROTOCOL);
	{
		/* JDK 11's answer to a library its glibc cannot load: the words
		 * after the status line, one line, printable. */
		static const char refused[] =
			"-1\n/tmp/.jsampled/libjsagent.so was not loaded.\n"
			"/lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.34' not found\x01\n";
		char text[ATTACH_REPORT_MAX + 1];

		CHECK_EQ(hotspot_parse_reply(refused, sizeof(refused) - 1), ATTACH_LOAD_FAILED);
		CHECK_EQ(hotspot_reply_text(refused, sizeof(refused) - 1, text, sizeof(text)), strlen(text));
		CHECK_STR(text, "/tmp/.jsampled/libjsagent.so was not loaded.; "
				"/lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.34' not found?");
		CHECK_EQ(hotspot_reply_text("0\n", 2, text, sizeof(text)), 0);
		CHECK_EQ(hotspot_reply_text(refused, sizeof(refused) - 1, text, 8), 7);
		CHECK_STR(text, "/tmp/.j");
	}
	CHECK_EQ(hotspot_parse_reply("99999999999999999999999\n", 24), ATTACH_PROTOCOL);
}

/* A saved state of another boot: its pids mean nothing now, so nothing
 * restored is taken for a running process; and restoring obeys the
 * process and tree caps. */
static void test_state_limits(void)
{
	struct process_table t, back;
	struct process_limits small = {.cct_max_nodes = 3, .held_max_bytes = 1 << 20, .hold_ns = 1000};
	struct wbuf w;
	struct process *q;
	char why[256];

	/* Our own pid and start time: restored as still running... */
	one_profile(&t, getpid())->start_time = procfs_start_time(getpid());
	wbuf_init(&w);
	CHECK(state_encode(&t, 5000, &w) == 0);
	process_table_init(&back, &small);
	CHECK_EQ(state_decode(&back, w.data, w.len, 1000000, 100, why, sizeof(why)), 1);
	q = process_lookup(&back, getpid());
	CHECK(q && q->state == PROCESS_AGENT_LOST);
	/* ... with the tree folded into [other] past its cap (3 nodes: root,
	 * main, work; then an [other] under work for leaf and one under the
	 * root for [GC]), no sample lost. */
	CHECK(q && q->cct.nodes.n == 5);
	CHECK(q && q->cct.samples == 7 && q->cct.overflow_samples == 7);
	process_table_free(&back);
	/* ... but not when the saved boot id differs. */
	{
		char boot[40];
		size_t at = 8 + 4 + 8 + 2;
		state_boot_id(boot);
		CHECK(strlen(boot) == 36 && w.len > at + 36 && memcmp(w.data + at, boot, 36) == 0);
		w.data[at] ^= 1;
		uint32_t crc = (uint32_t)crc32(0, w.data, (uInt)(w.len - 4));
		memcpy(w.data + w.len - 4, &crc, 4);
	}
	process_table_init(&back, &small);
	CHECK_EQ(state_decode(&back, w.data, w.len, 1000000, 100, why, sizeof(why)), 1);
	q = process_lookup(&back, getpid());
	CHECK(q && q->state == PROCESS_EXITED);
	process_table_free(&back);
	/* No room: nothing restored beyond --max-processes. */
	process_table_init(&back, &small);
	CHECK_EQ(state_decode(&back, w.data, w.len, 1000000, 0, why, sizeof(why)), 0);
	CHECK_EQ(back.all.n, 0);
	process_table_free(&back);
	wbuf_free(&w);
	process_table_free(&t);
}

/* Start-up sampling's two readings: which programs are Java launchers, and
 * a process's CPU time. */
static void test_launcher_and_cpu(void)
{
	const char *java = "/usr/lib/jvm/java-17-openjdk-amd64/bin/java";
	char text[256];
	int fd;
	volatile uint64_t spin = 0;
	uint64_t start = procfs_start_time(getpid());

	fd = open(java, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0); /* the JDK is a test prerequisite (make deps) */
	CHECK_EQ(java_launcher_file(fd), 1);
	CHECK_EQ(java_launcher_file(fd), 1); /* cached */
	close(fd);
	CHECK_EQ(java_launcher_check(getpid()), 0); /* this test is no launcher */
	CHECK_EQ(java_launcher_check(4000000), -1);
	snprintf(text, sizeof(text), "%s/not-elf", tmpdir);
	fd = open(text, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	CHECK(fd >= 0 && write(fd, "#!/bin/sh\n", 10) == 10);
	CHECK_EQ(java_launcher_file(fd), -1);
	close(fd);

	for (uint64_t i = 0; i < 200000000ull && procfs_cpu_ns(getpid(), start) < 20000000; i++)
		spin += i;
	CHECK(procfs_cpu_ns(getpid(), start) >= 20000000); /* at least 20 ms, counted by the kernel */
	CHECK_EQ(procfs_cpu_ns(getpid(), start + 1), 0);    /* another instance of the pid */
}

/* A working program whose section headers name the same 16 MiB hole of
 * a sparse file as SHT_DYNAMIC sections, 8 times, ahead of its own: an
 * ELF library that reads each section's data holds 128 MiB for a 4 MiB
 * file on disk. Written from path (a real executable) to out. */
static bool write_dynamic_bomb(const char *path, const char *out)
{
	enum { FAKES = 8, HOLE = 16 << 20 };
	int in = open(path, O_RDONLY | O_CLOEXEC), fd = -1;
	struct stat st;
	Elf64_Ehdr eh;
	Elf64_Shdr sh[FAKES + 256];
	uint64_t hole, table;
	char *bytes = NULL;
	bool ok = false;

	if (in < 0 || fstat(in, &st) != 0 || !(bytes = malloc((size_t)st.st_size)) ||
	    read(in, bytes, (size_t)st.st_size) != st.st_size)
		goto out;
	memcpy(&eh, bytes, sizeof(eh));
	if (eh.e_shnum == 0 || eh.e_shnum > 256 || eh.e_shentsize != sizeof(Elf64_Shdr))
		goto out;
	memset(sh, 0, sizeof(sh));
	for (int i = 0; i < FAKES; i++)
		sh[1 + i] = (Elf64_Shdr){.sh_type = SHT_DYNAMIC, .sh_offset = 0, .sh_size = HOLE, .sh_entsize = 16};
	memcpy(&sh[1 + FAKES], bytes + eh.e_shoff + sizeof(Elf64_Shdr), (eh.e_shnum - 1u) * sizeof(Elf64_Shdr));
	hole = ((uint64_t)st.st_size + 4095) & ~4095ull;
	table = hole + HOLE;
	for (int i = 0; i < FAKES; i++)
		sh[1 + i].sh_offset = hole;
	for (int i = 1 + FAKES; i < FAKES + eh.e_shnum; i++)
		if (sh[i].sh_link)
			sh[i].sh_link += FAKES;
	eh.e_shoff = table;
	eh.e_shnum = (uint16_t)(eh.e_shnum + FAKES);
	eh.e_shstrndx = (uint16_t)(eh.e_shstrndx + FAKES);
	memcpy(bytes, &eh, sizeof(eh));
	fd = open(out, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	ok = fd >= 0 && write(fd, bytes, (size_t)st.st_size) == st.st_size &&
	     pwrite(fd, sh, eh.e_shnum * sizeof(Elf64_Shdr), (off_t)table) == (ssize_t)(eh.e_shnum * sizeof(Elf64_Shdr));
out:
	free(bytes);
	if (in >= 0)
		close(in);
	if (fd >= 0)
		close(fd);
	return ok;
}

/* The launcher check reads a bounded part of any file: a child's peak RSS
 * grows by less than the smallest section the bomb names. */
static void test_launcher_reads_bounded(void)
{
	char bomb[256];
	int status = -1;
	pid_t child;

	snprintf(bomb, sizeof(bomb), "%s/sleep-bomb", tmpdir);
	CHECK(write_dynamic_bomb("/bin/sleep", bomb));
	child = fork();
	if (child == 0) {
		struct rusage before, after;
		int fd = open(bomb, O_RDONLY | O_CLOEXEC), answer;

		getrusage(RUSAGE_SELF, &before);
		answer = java_launcher_file(fd);
		getrusage(RUSAGE_SELF, &after);
		fprintf(stderr, "launcher check of a dynamic-section bomb: answer %d, peak RSS +%ld KiB\n", answer,
			after.ru_maxrss - before.ru_maxrss);
		_exit(answer == 0 && after.ru_maxrss - before.ru_maxrss < 4096 ? 0 : 1);
	}
	CHECK(child > 0 && waitpid(child, &status, 0) == child);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* and the bomb still runs: it is a real program */
	snprintf(bomb + strlen(bomb), sizeof(bomb) - strlen(bomb), " 0");
	CHECK_EQ(system(bomb), 0);
}

/* Who may profile what (process_access.h): ptrace's rules on real
 * processes made non-dumpable or setgid, and on credentials as read. */
static void test_process_access(void)
{
	struct proc_creds me, target, other;
	char why[128];
	int ready[2], go[2];
	pid_t child;

	CHECK_EQ(proc_creds_read(getpid(), &me), 0);
	CHECK(me.dumpable && me.userns != 0 && me.start_time != 0);
	target = me;
	target.uid[1] = me.uid[1] == 0 ? 1000 : me.uid[1]; /* a user's own process, as that user sees it */
	for (int i = 0; i < 4; i++) {
		target.uid[i] = target.uid[1];
		target.gid[i] = me.gid[1];
	}
	target.cap_prm = 0;
	other = target; /* the requester: the same user */
	CHECK(proc_may_read(&other, &target, why, sizeof(why)));
	target.gid[1] = 5; /* setgid */
	CHECK(!proc_may_read(&other, &target, why, sizeof(why)) && strstr(why, "gid"));
	target.gid[1] = target.gid[0];
	target.uid[2] = 0; /* saved uid root: a setuid program that dropped */
	CHECK(!proc_may_read(&other, &target, why, sizeof(why)) && strstr(why, "uid"));
	target.uid[2] = target.uid[0];
	target.dumpable = false;
	CHECK(!proc_may_read(&other, &target, why, sizeof(why)) && strstr(why, "dumpable"));
	target.dumpable = true;
	target.userns++;
	CHECK(!proc_may_read(&other, &target, why, sizeof(why)) && strstr(why, "namespace"));
	target.userns--;
	target.cap_prm = 1ull << 12; /* CAP_NET_ADMIN */
	CHECK(!proc_may_read(&other, &target, why, sizeof(why)) && strstr(why, "capabilities"));
	other.uid[1] = 0; /* root reads anything */
	CHECK(proc_may_read(&other, &target, why, sizeof(why)));

	/* A real process that made itself undumpable: /proc shows it. */
	CHECK(pipe(ready) == 0 && pipe(go) == 0);
	child = fork();
	if (child == 0) {
		char c = 0;

		prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
		if (geteuid() == 0 && (setresgid(1000, 1001, 1000) != 0 || setresuid(1000, 1000, 1000) != 0))
			_exit(3);
		if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(2);
		_exit(0);
	}
	if (child > 0) {
		char c = 0;
		struct proc_creds real;

		CHECK(read(ready[0], &c, 1) == 1);
		CHECK_EQ(proc_creds_read(child, &real), 0);
		CHECK(!real.dumpable);
		CHECK(!proc_owner_may_read(&real));
		if (geteuid() == 0) {
			CHECK_EQ(real.gid[1], 1001); /* setgid as read */
			CHECK(!proc_may_read(&(struct proc_creds){.uid = {1000, 1000, 1000, 1000},
								 .gid = {1000, 1000, 1000, 1000},
								 .userns = real.userns},
					     &real, why, sizeof(why)));
		}
		CHECK(proc_creds_unchanged(child, &real));
		CHECK(write(go[1], &c, 1) == 1);
		waitpid(child, NULL, 0);
		CHECK(!proc_creds_unchanged(child, &real)); /* gone */
	}
	close(ready[0]);
	close(ready[1]);
	close(go[0]);
	close(go[1]);
}

int main(void)
{
	char cmd[64];

	if (!mkdtemp(tmpdir))
		return 2;
	test_config_file();
	test_defaults_match_help();
	test_shipped_config();
	test_state_round_trip();
	test_state_event_trees();
	test_state_keeps_pruned_methods();
	test_state_files();
	test_cct_byte_cap();
	test_cct_byte_cap_counts_mappings();
	test_rules_and_procfs();
	test_launcher_and_cpu();
	test_launcher_reads_bounded();
	test_process_access();
	test_attach_outcomes();
	test_state_limits();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tmpdir);
	return CHECK_DONE();
}
