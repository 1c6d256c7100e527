/* SPDX-License-Identifier: GPL-2.0-only */
/* The exporter's parts that need no network or daemon: service names and
 * labels from a process's cmdline and cgroup, the bounded send queue and
 * its back-off, the config file's handling of secrets, a profile's
 * ClickHouse rows and the framing of jsampled's "profiles" answer. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "userspace/jsamplectl/clickhouse_rows.h"
#include "userspace/jsamplectl/export_config.h"
#include "userspace/jsamplectl/fleet_schema.h"
#include "userspace/jsamplectl/export_queue.h"
#include "userspace/jsamplectl/process_identity.h"
#include "userspace/jsamplectl/profiles_answer.h"
#include "userspace/jsamplectl/serve_routes.h"
#include "userspace/jsamplectl/pprof_read.h"
#include "userspace/jsamplectl/pyroscope_names.h"
#include "userspace/jsamplectl/url_safety.h"
#include "check.h"

#define CMD(s) s, sizeof(s)

static void test_identity(void)
{
	struct process_identity id;
	struct service_rule rules[2] = {
		{.name = "checkout", .field = RULE_MAIN, .glob = "com.example.checkout.*"},
		{.name = "batch", .field = RULE_UNIT, .glob = "batch-*"},
	};

	/* the JVM property wins over everything */
	process_identity_from(&id, CMD("java\0-Xmx1g\0-Djsampled.service=orders\0-cp\0a.jar\0com.example.checkout.Main"),
			      "0::/system.slice/shop.service\n", "java", rules, 2);
	CHECK_STR(id.service, "orders");
	CHECK_STR(id.main, "com.example.checkout.Main");
	CHECK_STR(id.unit, "shop");
	/* then the rules (-cp's value is not the main class) */
	process_identity_from(&id, CMD("/usr/bin/java\0-cp\0x.jar\0com.example.checkout.Main\0arg"),
			      "0::/system.slice/shop.service\n", "java", rules, 2);
	CHECK_STR(id.service, "checkout");
	CHECK_STR(id.exe, "/usr/bin/java");
	/* then the unit */
	process_identity_from(&id, CMD("java\0Other"), "0::/system.slice/shop.service\n", "java", rules, 2);
	CHECK_STR(id.service, "shop");
	/* a cgroup name with a series name's syntax in it is only a label value */
	process_identity_from(&id, CMD("java\0Other"), "0::/system.slice/a,b}{x=y\"z.service\n", "java", NULL, 0);
	CHECK_STR(id.unit, "a_b__x_y_z");
	CHECK(strpbrk(id.service, ",{}=\"") == NULL);
	/* a user manager's own unit is not the service */
	process_identity_from(&id, CMD("java\0-jar\0/opt/app/billing-2.1.jar"),
			      "0::/user.slice/user-1000.slice/user@1000.service/app.slice/x.scope\n", "java", rules, 2);
	CHECK_STR(id.unit, "");
	CHECK_STR(id.service, "billing-2.1");
	/* a container, and a Kubernetes pod */
	process_identity_from(&id, CMD("java\0Main"),
			      "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1f2e3d4c_5b6a_7980_a1b2_c3d4e5f60718.slice/"
			      "cri-containerd-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope\n",
			      "java", NULL, 0);
	CHECK_STR(id.container, "0123456789ab");
	CHECK_STR(id.pod, "1f2e3d4c-5b6a-7980-a1b2-c3d4e5f60718");
	CHECK_STR(id.service, "container-0123456789ab");
	/* nothing to go by: the command name; odd characters replaced */
	process_identity_from(&id, "", 0, "", "my app{x}", NULL, 0);
	CHECK_STR(id.service, "my_app_x_");
}

static struct export_item item(int64_t from, size_t len, uint64_t samples)
{
	struct export_item it = {.from_s = from, .until_s = from + 15, .pid = 1, .len = len, .samples = samples};

	it.body = calloc(1, len);
	return it;
}

static void test_queue(void)
{
	struct export_queue q;
	struct export_item it;

	export_queue_init(&q, 1000);
	it = item(0, 400, 10);
	export_queue_push(&q, &it);
	it = item(15, 400, 20);
	export_queue_push(&q, &it);
	CHECK_EQ(export_queue_len(&q), 2);
	/* over the bound: the oldest goes, counted with its samples */
	it = item(30, 400, 30);
	export_queue_push(&q, &it);
	CHECK_EQ(export_queue_len(&q), 2);
	CHECK_EQ(q.c.dropped, 1);
	CHECK_EQ(q.c.dropped_samples, 10);
	CHECK_EQ(export_queue_oldest_from(&q), 15);
	/* one alone over the bound is dropped itself */
	it = item(45, 2000, 5);
	export_queue_push(&q, &it);
	CHECK_EQ(q.c.dropped, 2);
	CHECK_EQ(export_queue_len(&q), 2);
	/* failures back off 1 s, 2 s, ... up to the cap; success resets */
	export_queue_failed(&q, 100, 0);
	CHECK_EQ(q.next_try_ms, 1100);
	export_queue_failed(&q, 1100, 0);
	CHECK_EQ(q.next_try_ms, 3100);
	for (int i = 0; i < 10; i++)
		export_queue_failed(&q, 0, 0);
	CHECK_EQ(q.backoff_ms, EXPORT_MAX_BACKOFF_MS);
	CHECK_EQ(export_queue_len(&q), 2);
	export_queue_peek(&q)->attempts = 3;
	export_queue_done(&q);
	CHECK_EQ(q.c.sent, 1);
	CHECK_EQ(q.c.retried, 1);
	CHECK_EQ(q.backoff_ms, 0);
	CHECK_EQ(export_queue_oldest_from(&q), 30);
	/* a permanent refusal drops it */
	export_queue_failed(&q, 0, 1);
	CHECK_EQ(export_queue_len(&q), 0);
	CHECK_EQ(q.c.dropped, 3);
	CHECK(export_queue_oldest_from(&q) == INT64_MAX);
	export_queue_free(&q);
}

/* The shipped deploy/export.conf names only settings that exist, with
 * values they take, and the defaults it shows are the exporter's. Its
 * commented settings are uncommented ("..." placeholders become "x") and
 * read as a file. */
static void test_shipped_export_config(void)
{
	struct export_config c, d;
	char path[] = "/tmp/jsampled-export-shipped.XXXXXX", err[256], line[512];
	FILE *in = fopen("deploy/export.conf", "r");
	int fd = mkstemp(path);
	FILE *out = fd >= 0 ? fdopen(fd, "w") : NULL;
	unsigned settings = 0;

	CHECK(in != NULL && out != NULL);
	if (!in || !out)
		goto cleanup;
	while (fgets(line, sizeof(line), in)) {
		char key[64], *eq = strchr(line, '='), *dots;

		if (strncmp(line, "# ", 2) != 0 || !eq || sscanf(line + 2, "%63[a-z_] =", key) != 1 ||
		    strspn(line + 2, "abcdefghijklmnopqrstuvwxyz_") != strlen(key))
			continue; /* prose */
		if ((dots = strstr(eq, "...")))
			memcpy(dots, "x  ", 3);
		fputs(line + 2, out);
		settings++;
	}
	fclose(out);
	out = NULL;
	printf("  deploy/export.conf shows %u settings\n", settings);
	CHECK(settings >= 15);
	export_config_defaults(&c);
	export_config_defaults(&d);
	CHECK_EQ(export_config_load(&c, path, 1, err, sizeof(err)), 0);
	if (err[0])
		printf("  %s\n", err);
	CHECK_EQ(c.interval_s, d.interval_s);
	CHECK_EQ(c.lag_s, d.lag_s);
	CHECK_EQ(c.queue_bytes, d.queue_bytes);
	CHECK_EQ(c.timeout_s, d.timeout_s);
	CHECK_STR(c.view, d.view);
	CHECK_STR(c.clickhouse_database, d.clickhouse_database);
	CHECK(c.n_rules >= 1);
cleanup:
	if (in)
		fclose(in);
	if (out)
		fclose(out);
	if (fd >= 0)
		unlink(path);
}

/* SQL with comments and layout taken out: "--" to the end of a line
 * dropped, each run of space one space, none inside parentheses. */
static void normalize_sql(const char *in, size_t len, struct wbuf *out)
{
	int space = 0;

	for (size_t i = 0; i < len; i++) {
		char c = in[i];

		if (c == '-' && i + 1 < len && in[i + 1] == '-') {
			while (i < len && in[i] != '\n')
				i++;
			c = ' ';
		}
		if (c == ' ' || c == '\n' || c == '\t') {
			space = 1;
			continue;
		}
		if (space && out->len && c != ')' && c != ';' && c != ',' && ((char *)out->data)[out->len - 1] != '(' &&
		    ((char *)out->data)[out->len - 1] != ';')
			wbuf_put(out, " ", 1);
		space = 0;
		wbuf_put(out, &c, 1);
	}
}

/* The shipped cluster schema (deploy/clickhouse/schema.sql, with its
 * comments) is, statement for statement, what `fleet init --cluster
 * jsampled` creates; and a server's table list says what is missing. */
static void test_fleet_schema(void)
{
	struct wbuf gen, shipped, a, b;
	char buf[1 << 16], missing[128];
	FILE *f = fopen("deploy/clickhouse/schema.sql", "r");
	size_t n = f ? fread(buf, 1, sizeof(buf), f) : 0;

	CHECK(f != NULL && n > 0 && n < sizeof(buf));
	if (f)
		fclose(f);
	wbuf_init(&gen);
	wbuf_init(&shipped);
	wbuf_init(&a);
	wbuf_init(&b);
	CHECK_EQ(fleet_schema_sql("jsampled", "jsampled", &gen), 0);
	normalize_sql((const char *)gen.data, gen.len, &a);
	normalize_sql(buf, n, &b);
	wbuf_put(&a, "", 1);
	wbuf_put(&b, "", 1);
	if (strcmp((char *)a.data, (char *)b.data) != 0)
		printf("  generated: %s\n  shipped:   %s\n", (char *)a.data, (char *)b.data);
	CHECK_STR((char *)a.data, (char *)b.data);
	/* names go into SQL text: identifiers only */
	CHECK_EQ(fleet_schema_sql("jsampled; DROP", NULL, &gen), -1);
	CHECK_EQ(fleet_schema_sql("jsampled", "c'x", &gen), -1);
	CHECK_EQ(fleet_schema_sql("1db", NULL, &gen), -1);
	CHECK_EQ(fleet_schema_missing("samples\nstacks\n", 15, missing, sizeof(missing)), 0);
	CHECK_EQ(fleet_schema_missing("samples_local\nstacks\n", 21, missing, sizeof(missing)), 1);
	CHECK_STR(missing, "samples");
	CHECK_EQ(fleet_schema_missing("", 0, missing, sizeof(missing)), 2);
	CHECK_STR(missing, "stacks, samples");
	wbuf_free(&gen);
	wbuf_free(&shipped);
	wbuf_free(&a);
	wbuf_free(&b);
}

static void test_config(void)
{
	struct export_config c;
	char path[] = "/tmp/jsampled-export-conf.XXXXXX", err[256];
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");

	fputs("# comment\npyroscope_url = http://127.0.0.1:4040\npyroscope_token = s3cr#t\ninterval_s = 30   # seconds\n"
	      "service = batch unit batch-*\n",
	      f);
	fclose(f);
	export_config_defaults(&c);
	chmod(path, 0644);
	CHECK(export_config_load(&c, path, 1, err, sizeof(err)) != 0); /* a secret others may read */
	CHECK(strstr(err, "others may read") != NULL);
	chmod(path, 0600);
	export_config_defaults(&c);
	CHECK_EQ(export_config_load(&c, path, 1, err, sizeof(err)), 0);
	CHECK_STR(c.pyroscope_token, "s3cr#t"); /* a '#' in a value is no comment */
	CHECK_EQ(c.interval_s, 30);
	CHECK_EQ(c.n_rules, 1);
	CHECK_EQ(c.rules[0].field, RULE_UNIT);
	/* secrets never from the command line; bad values refused */
	CHECK(export_config_set(&c, "pyroscope_password", "x", 1, err, sizeof(err)) != 0);
	CHECK(export_config_set(&c, "interval_s", "0", 1, err, sizeof(err)) != 0);
	CHECK(export_config_set(&c, "nonsense", "1", 0, err, sizeof(err)) != 0);
	CHECK(export_config_set(&c, "service", "x color *", 0, err, sizeof(err)) != 0);
	/* Profile types: cpu by default, a list of the three names. */
	CHECK_EQ(c.types, EXPORT_TYPE_CPU);
	CHECK(export_config_set(&c, "types", "cpu,wall", 0, err, sizeof(err)) == 0);
	CHECK_EQ(c.types, EXPORT_TYPE_CPU | EXPORT_TYPE_WALL);
	CHECK(export_config_set(&c, "types", "offcpu", 0, err, sizeof(err)) == 0);
	CHECK_EQ(c.types, EXPORT_TYPE_OFFCPU);
	CHECK(export_config_set(&c, "types", "cpu,walls", 0, err, sizeof(err)) != 0);
	CHECK(export_config_set(&c, "types", "", 0, err, sizeof(err)) != 0);
	/* Thread pools: off by default, on or off. */
	CHECK_EQ(c.threads, 0);
	CHECK(export_config_set(&c, "threads", "on", 1, err, sizeof(err)) == 0);
	CHECK_EQ(c.threads, 1);
	CHECK(export_config_set(&c, "threads", "off", 1, err, sizeof(err)) == 0);
	CHECK_EQ(c.threads, 0);
	CHECK(export_config_set(&c, "threads", "yes", 0, err, sizeof(err)) != 0);
	CHECK_EQ(c.threads, 0);
	unlink(path);
	/* a missing default file is fine, a missing named one is not */
	CHECK_EQ(export_config_load(&c, path, 0, err, sizeof(err)), 0);
	CHECK(export_config_load(&c, path, 1, err, sizeof(err)) != 0);
}

/* Status and logs never show a URL's credentials; credentials over
 * http:// to another host are warned about. */
static void test_url_safety(void)
{
	char out[256];

	CHECK_STR(url_redacted("http://alice:s3cret@ch.example:8123/db?x=1", out, sizeof(out)),
		  "http://ch.example:8123/db?x=1");
	CHECK_STR(url_redacted("https://pyroscope.example:4040", out, sizeof(out)), "https://pyroscope.example:4040/");
	CHECK(strstr(url_redacted("http://u:p@[::1]:1/", out, sizeof(out)), "p@") == NULL);
	CHECK(url_credentials_in_clear("http://ch.example:8123", true));
	CHECK(url_credentials_in_clear("http://alice:x@ch.example:8123", false));
	CHECK(!url_credentials_in_clear("http://ch.example:8123", false));
	CHECK(!url_credentials_in_clear("https://ch.example:8123", true));
	CHECK(!url_credentials_in_clear("http://127.0.0.1:8123", true));
	CHECK(!url_credentials_in_clear("http://localhost:4040", true));
}

/* What `serve` asks jsampled for each URL: only pids of digits and
 * windows that parse become request lines. */
static void test_serve_routes(void)
{
	struct serve_route r;

	serve_route(&(struct serve_query){.url = "/p/123", .now = 1764000000}, &r);
	CHECK_EQ(r.kind, SERVE_FLAME_PAGE);
	CHECK_STR(r.request, "cct 123 page");
	serve_route(&(struct serve_query){.url = "/p/123\ncct 1 json", .now = 1764000000}, &r);
	CHECK_EQ(r.kind, SERVE_NOT_FOUND);
	serve_route(&(struct serve_query){.url = "/download/42.svg", .since = "5m", .now = 1764000000}, &r);
	CHECK_EQ(r.kind, SERVE_PROXY);
	CHECK_STR(r.request, "cct 42 svg 1763999700..");
	CHECK_STR(r.filename, "jsampled-42.svg");
	serve_route(&(struct serve_query){.url = "/download/42.exe", .now = 1764000000}, &r);
	CHECK_EQ(r.kind, SERVE_NOT_FOUND);
	serve_route(&(struct serve_query){.url = "/api/diff", .base = "1", .target = "2@10m..5m", .now = 1764000000}, &r);
	CHECK_EQ(r.kind, SERVE_PROXY);
	CHECK_STR(r.request, "diff 1 2@1763999400..1763999700 text");
	serve_route(&(struct serve_query){.url = "/diff", .base = "1; rm", .target = "2", .now = 1764000000}, &r);
	CHECK_EQ(r.kind, SERVE_BAD_REQUEST);
	serve_route(&(struct serve_query){.url = "/p/1", .since = "99999999999999999d", .now = 1764000000}, &r);
	CHECK_EQ(r.kind, SERVE_BAD_REQUEST);
	/* The profile type: its own names only, cpu as no word. */
	serve_route(&(struct serve_query){.url = "/api/page/7", .since = "5m", .type = "wall", .now = 1764000000}, &r);
	CHECK_STR(r.request, "cct 7 page 1763999700.. wall");
	serve_route(&(struct serve_query){.url = "/download/7.pb.gz", .type = "offcpu", .now = 1764000000}, &r);
	CHECK_STR(r.request, "cct 7 pprof offcpu");
	serve_route(&(struct serve_query){.url = "/p/7", .type = "cpu", .now = 1764000000}, &r);
	CHECK_STR(r.request, "cct 7 page");
	serve_route(&(struct serve_query){.url = "/p/7", .type = "wall\nstats", .now = 1764000000}, &r);
	CHECK_EQ(r.kind, SERVE_BAD_REQUEST);
	/* Thread selectors: one word of the line, whatever they hold. */
	serve_route(&(struct serve_query){.url = "/api/page/7", .type = "wall", .thread = "C2 Compiler*", .now = 1764000000},
		    &r);
	CHECK_STR(r.request, "cct 7 page wall thread=C2%20Compiler*");
	serve_route(&(struct serve_query){.url = "/download/7.collapsed", .thread = "a\nstats%", .now = 1764000000}, &r);
	CHECK_STR(r.request, "cct 7 collapsed thread=a%0Astats%25");
	char long_name[200];
	memset(long_name, 'x', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = 0;
	serve_route(&(struct serve_query){.url = "/p/7", .thread = long_name, .now = 1764000000}, &r);
	CHECK_EQ(r.kind, SERVE_BAD_REQUEST);
}

/* A pprof as jsampled writes it: Thread.run (interpreted) calls a compiled
 * frame of B.c with A.inl inlined into it; and [GC] alone (JVM kind). */
/* An alloc profile reaches Pyroscope under the names it gives Java's
 * (alloc_in_new_tlab_*, period space/bytes), a lock one with a mutex
 * period; other types go as they are. */
static void test_pyroscope_java_names(void)
{
	const char *types[] = {"alloc", "lock", "cpu"};
	const char *want[][3] = {{"alloc_in_new_tlab_objects", "alloc_in_new_tlab_bytes", "space"},
				 {"contentions", "delay", "mutex"}};

	for (int k = 0; k < 3; k++) {
		char *strings[] = {"", "alloc_objects", "count", "alloc_space", "bytes", "space"};
		Perftools__Profiles__ValueType vt[3], *st[2] = {&vt[0], &vt[1]};
		Perftools__Profiles__Profile p = PERFTOOLS__PROFILES__PROFILE__INIT, *back;
		char **table = malloc(sizeof(strings));
		struct wbuf out;

		for (int i = 0; i < 3; i++)
			perftools__profiles__value_type__init(&vt[i]);
		vt[0].type = 1, vt[0].unit = 2, vt[1].type = 3, vt[1].unit = 4, vt[2].type = 5, vt[2].unit = 4;
		for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++)
			table[i] = strdup(strings[i]);
		p.string_table = table;
		p.n_string_table = sizeof(strings) / sizeof(strings[0]);
		p.sample_type = st;
		p.n_sample_type = 2;
		p.period_type = &vt[2];
		wbuf_init(&out);
		int r = pyroscope_java_profile(&p, types[k], &out);
		CHECK_EQ(r, k == 2 ? 1 : 0);
		if (k < 2 && r == 0) {
			back = pprof_read(out.data, out.len);
			CHECK(back != NULL);
			if (back) {
				CHECK_STR(back->string_table[back->sample_type[0]->type], want[k][0]);
				CHECK_STR(back->string_table[back->sample_type[1]->type], want[k][1]);
				CHECK_STR(back->string_table[back->period_type->type], want[k][2]);
				CHECK_EQ(back->default_sample_type, back->sample_type[1]->type);
				perftools__profiles__profile__free_unpacked(back, NULL);
			}
		}
		wbuf_free(&out);
		for (size_t i = 0; i < p.n_string_table; i++)
			free(p.string_table[i]);
		free(p.string_table);
	}
}

static void test_clickhouse_rows(void)
{
	static char *strings[] = {"", "java.lang.Thread.run", "p.B.c", "p.A.inl", "[GC]",
				  "[interpreted Java]", "[compiled Java]", "[JVM]", "thread", "pool-*-thread-*", "main"};
	Perftools__Profiles__Function fn[4];
	Perftools__Profiles__Function *fns[4] = {&fn[0], &fn[1], &fn[2], &fn[3]};
	Perftools__Profiles__Mapping map[3];
	Perftools__Profiles__Mapping *maps[3] = {&map[0], &map[1], &map[2]};
	Perftools__Profiles__Line line[4];
	Perftools__Profiles__Line *run_lines[] = {&line[0]}, *c_lines[] = {&line[2], &line[1]}, *gc_lines[] = {&line[3]};
	Perftools__Profiles__Location loc[3];
	Perftools__Profiles__Location *locs[3] = {&loc[0], &loc[1], &loc[2]};
	uint64_t s1_locs[] = {2, 1}, s2_locs[] = {3}; /* leaf first */
	int64_t v1[] = {7, 0}, v2[] = {3, 0}, v3[] = {5, 0};
	Perftools__Profiles__Sample smp[3];
	Perftools__Profiles__Sample *smps[3] = {&smp[0], &smp[1], &smp[2]};
	Perftools__Profiles__Profile p = PERFTOOLS__PROFILES__PROFILE__INIT;
	struct ch_stacks_written written;
	struct ch_batch b;
	const char *labels[] = {"jvm", "17.0.15", "unit", "", "container", "abc123def456", "pod", ""};
	const char *names[] = {"java.lang.Thread.run", "p.B.c", "p.A.inl"};
	const char *kinds[] = {"interpreted", "compiled", "inlined"};
	char want[64];

	for (int i = 0; i < 4; i++) {
		perftools__profiles__function__init(&fn[i]);
		fn[i].id = (uint64_t)i + 1;
		fn[i].name = i + 1;
		perftools__profiles__line__init(&line[i]);
		line[i].function_id = (uint64_t)i + 1;
	}
	for (int i = 0; i < 3; i++) {
		perftools__profiles__mapping__init(&map[i]);
		map[i].id = (uint64_t)i + 1;
		map[i].filename = 5 + i;
		perftools__profiles__location__init(&loc[i]);
		loc[i].id = (uint64_t)i + 1;
		loc[i].mapping_id = (uint64_t)i + 1;
		perftools__profiles__sample__init(&smp[i]);
	}
	loc[0].line = run_lines, loc[0].n_line = 1;
	loc[1].line = c_lines, loc[1].n_line = 2; /* innermost (inlined) first */
	loc[2].line = gc_lines, loc[2].n_line = 1;
	smp[0].location_id = s1_locs, smp[0].n_location_id = 2, smp[0].value = v1, smp[0].n_value = 2;
	/* the same stack again (another bci in jsampled's pprof): summed */
	smp[1].location_id = s1_locs, smp[1].n_location_id = 2, smp[1].value = v2, smp[1].n_value = 2;
	smp[2].location_id = s2_locs, smp[2].n_location_id = 1, smp[2].value = v3, smp[2].n_value = 2;
	p.string_table = strings, p.n_string_table = 11;
	p.function = fns, p.n_function = 4;
	p.mapping = maps, p.n_mapping = 3;
	p.location = locs, p.n_location = 3;
	p.sample = smps, p.n_sample = 3;

	CHECK(ch_stack_hash(names, kinds, 3) != ch_stack_hash(names, kinds, 2));
	CHECK(ch_stack_hash(names, kinds, 3) == ch_stack_hash(names, kinds, 3));
	CHECK_STR(ch_kind_of_mapping("[compiled Java]"), "compiled");
	CHECK_STR(ch_kind_of_mapping("[JVM]"), "jvm");

	ch_stacks_written_init(&written, 100);
	ch_batch_init(&b, "web-1", 86400 * 20000 + 15, 15);
	CHECK(ch_batch_add_profile(&b, &written, &p, "cpu", "orders", 42, labels, 4) == 0);
	CHECK(b.rows == 2);
	CHECK(b.samples_total == 15);
	CHECK(b.new_stacks.n == 2);
	wbuf_put(&b.samples, "", 1);
	wbuf_put(&b.stacks, "", 1);
	/* root first, the inlined method after the frame it is inlined into */
	CHECK(strstr((char *)b.stacks.data, "\"frames\":[\"java.lang.Thread.run\",\"p.B.c\",\"p.A.inl\"],"
					   "\"kinds\":[\"interpreted\",\"compiled\",\"inlined\"]") != NULL);
	CHECK(strstr((char *)b.stacks.data, "\"frames\":[\"[GC]\"],\"kinds\":[\"jvm\"]") != NULL);
	snprintf(want, sizeof(want), "\"stack_hash\":%llu,\"count\":10,",
		 (unsigned long long)ch_stack_hash(names, kinds, 3));
	CHECK(strstr((char *)b.samples.data, want) != NULL);
	CHECK(strstr((char *)b.samples.data, "\"date\":\"2024-10-04\",\"time\":\"2024-10-04 00:00:15\"") != NULL);
	/* empty labels are left out; the batch id names host and interval */
	CHECK(strstr((char *)b.samples.data, "\"label_keys\":[\"jvm\",\"container\"],"
					     "\"label_values\":[\"17.0.15\",\"abc123def456\"]") != NULL);
	CHECK(strstr((char *)b.samples.data, "\"batch_id\":\"web-1/1728000015/15\"") != NULL);

	/* Written stacks are not sent again the same day, but are the next. */
	ch_stacks_written_add(&written, b.new_stacks.v, b.new_stacks.n, (86400 * 20000 + 15) / 86400);
	ch_batch_free(&b);
	ch_batch_init(&b, "web-1", 86400 * 20000 + 30, 15);
	CHECK(ch_batch_add_profile(&b, &written, &p, "cpu", "orders", 42, labels, 4) == 0);
	CHECK(b.new_stacks.n == 0 && b.stacks.len == 0 && b.rows == 2);
	ch_batch_free(&b);
	ch_batch_init(&b, "web-1", 86400 * 20001, 15);
	CHECK(ch_batch_add_profile(&b, &written, &p, "cpu", "orders", 42, labels, 4) == 0);
	CHECK(b.new_stacks.n == 2);
	ch_batch_free(&b);

	/* Thread pools (pprof's thread label): the same stack of two pools
	 * is two stacks, each starting at its pool's "thread" frame. */
	Perftools__Profiles__Label pool[2], *pool_of[2] = {&pool[0], &pool[1]};
	const char *pool_names[] = {"pool-*-thread-*", "java.lang.Thread.run", "p.B.c", "p.A.inl"};
	const char *pool_kinds[] = {"thread", "interpreted", "compiled", "inlined"};

	for (int i = 0; i < 2; i++) {
		perftools__profiles__label__init(&pool[i]);
		pool[i].key = 8;
		pool[i].str = 9 + i;
	}
	smp[0].label = &pool_of[0], smp[0].n_label = 1;
	smp[1].label = &pool_of[1], smp[1].n_label = 1;
	ch_batch_init(&b, "web-1", 86400 * 20002, 15);
	CHECK(ch_batch_add_profile(&b, &written, &p, "cpu", "orders", 42, labels, 4) == 0);
	CHECK(b.rows == 3 && b.samples_total == 15 && b.new_stacks.n == 3);
	wbuf_put(&b.stacks, "", 1);
	wbuf_put(&b.samples, "", 1);
	CHECK(strstr((char *)b.stacks.data, "\"frames\":[\"pool-*-thread-*\",\"java.lang.Thread.run\",\"p.B.c\","
					   "\"p.A.inl\"],\"kinds\":[\"thread\",\"interpreted\",\"compiled\",\"inlined\"]") != NULL);
	CHECK(strstr((char *)b.stacks.data, "\"frames\":[\"main\",\"java.lang.Thread.run\"") != NULL);
	CHECK(strstr((char *)b.stacks.data, "\"frames\":[\"[GC]\"],\"kinds\":[\"jvm\"]") != NULL);
	snprintf(want, sizeof(want), "\"stack_hash\":%llu,\"count\":7,",
		 (unsigned long long)ch_stack_hash(pool_names, pool_kinds, 4));
	CHECK(strstr((char *)b.samples.data, want) != NULL);
	smp[0].n_label = smp[1].n_label = 0;
	ch_batch_free(&b);
	ch_stacks_written_free(&written);
}

/* Frames read back as sent; anything cut short, overlong or odd is
 * malformed, never read past the answer. */
static void test_profiles_answer(void)
{
	static const char good[] = "42 3\nabc7 0\n1073741823 2\n\n\nend\n";
	struct profile_frame f;
	size_t off = 0;

	CHECK_EQ(profiles_next(good, sizeof(good) - 1, &off, &f), PROFILES_FRAME);
	CHECK(f.pid == 42 && f.len == 3 && memcmp(f.pprof, "abc", 3) == 0);
	CHECK_EQ(profiles_next(good, sizeof(good) - 1, &off, &f), PROFILES_FRAME);
	CHECK(f.pid == 7 && f.len == 0);
	CHECK_EQ(profiles_next(good, sizeof(good) - 1, &off, &f), PROFILES_FRAME);
	CHECK(f.pid == 1073741823 && f.len == 2 && memcmp(f.pprof, "\n\n", 2) == 0);
	CHECK_EQ(profiles_next(good, sizeof(good) - 1, &off, &f), PROFILES_END);
	CHECK_EQ(off, sizeof(good) - 1);

	static const char *const bad[] = {
		"",                 /* no end: cut short */
		"42 3\nab",         /* body cut short */
		"42 3\nabc",        /* no end after it */
		"42 3\nabcend",     /* no newline after end */
		"42 99999999999999999999\nx", /* length overflows */
		"0 1\nxend\n",      /* pid 0 */
		"1073741824 0\nend\n", /* pid out of range */
		"-1 0\nend\n",      " 1 0\nend\n", "1  0\nend\n", "1 0 \nend\n",
		"1 0\nend\nmore",   /* bytes after the end */
		"end",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		size_t len = strlen(bad[i]);
		int r;

		off = 0;
		while ((r = profiles_next(bad[i], len, &off, &f)) == PROFILES_FRAME)
			CHECK(f.pprof + f.len <= (const uint8_t *)bad[i] + len && off <= len);
		CHECK_EQ(r, PROFILES_MALFORMED);
	}
}

int main(void)
{
	RUN(test_profiles_answer);
	RUN(test_identity);
	RUN(test_queue);
	RUN(test_clickhouse_rows);
	RUN(test_pyroscope_java_names);
	RUN(test_config);
	RUN(test_fleet_schema);
	RUN(test_shipped_export_config);
	RUN(test_url_safety);
	RUN(test_serve_routes);
	return CHECK_DONE();
}
