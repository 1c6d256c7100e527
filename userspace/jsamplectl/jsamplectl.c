/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * jsamplectl: the command-line client of jsampled's query socket.
 *
 *   jsamplectl [--socket PATH] list [--json]
 *   jsamplectl [--socket PATH] cct PID [--format F] [--since AGE | --from TIME --until TIME]
 *                                  [--view java|mixed|carrier] [--type cpu|offcpu|wall|alloc|lock]
 *                                  [--thread NAME|GLOB] [--threads] [-o FILE]
 *   jsamplectl [--socket PATH] diff --base PID[@FROM..UNTIL] --target PID[@FROM..UNTIL]
 *                                   [--format html|text] [-o FILE]
 *   jsamplectl [--socket PATH] stats [PID] [--json]
 *   jsamplectl [--socket PATH] sampling on|off      (root: pause/resume all sampling)
 *   jsamplectl [--socket PATH] offcpu on|off        (root: off-CPU sampling of a jsampled --offcpu on)
 *   jsamplectl [--socket PATH] alloc|lock on|off    (root: the agents' allocation or lock sampling)
 *   jsamplectl [--socket PATH] profile PID          (profile a non-Java process: root or its owner)
 *   jsamplectl [--socket PATH] serve [--listen 127.0.0.1:PORT]
 *   jsamplectl [--socket PATH] export [--config FILE] [--interval-s N] [--pyroscope-url URL]
 *                                     [--clickhouse-url URL] [--status]
 *   jsamplectl fleet [--config FILE] [--clickhouse-url URL] cct|diff|hosts --service S [--host H] ...
 *
 * Formats: tree, collapsed, json, pprof (gzipped profile.proto), html (a
 * flame-graph page), svg. Times: see time_spec.h. Exit status: 0 on OK, 1
 * when jsampled answered ERROR, 2 on usage errors, 3 when jsampled cannot
 * be reached.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "export.h"
#include "export_config.h"
#include "fleet.h"
#include "fleet_init.h"
#include "fleet_schema.h"
#include "query_client.h"
#include "serve.h"
#include "time_spec.h"
#include "userspace/common/pid_text.h"
#include "userspace/profile/cct_view.h"
#include "userspace/profile/thread_pools.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: jsamplectl [--socket PATH] list [--json]\n"
		"       jsamplectl [--socket PATH] cct PID [--format tree|collapsed|json|pprof|html|svg]\n"
		"                  [--since AGE | --from TIME --until TIME] [--view java|mixed|carrier]\n"
		"                  [--type cpu|offcpu|wall|alloc|lock] [--thread NAME|GLOB] [--threads] [-o FILE]\n"
		"       jsamplectl [--socket PATH] diff --base PID[@FROM..UNTIL] --target PID[@FROM..UNTIL]\n"
		"                  [--format html|text] [--type T] [--thread NAME|GLOB] [-o FILE]\n"
		"       jsamplectl [--socket PATH] stats [PID] [--json]\n"
		"       jsamplectl [--socket PATH] sampling on|off   (root: pause or resume all sampling)\n"
		"       jsamplectl [--socket PATH] offcpu on|off     (root: off-CPU sampling of a jsampled --offcpu on)\n"
		"       jsamplectl [--socket PATH] alloc|lock on|off (root: the agents' allocation or lock sampling)\n"
		"       jsamplectl [--socket PATH] profile PID       (a non-Java process: native and kernel frames)\n"
		"       jsamplectl [--socket PATH] serve [--listen 127.0.0.1:PORT]\n"
		"       jsamplectl [--socket PATH] export [--config FILE] [--interval-s N] [--pyroscope-url URL]\n"
		"                  [--clickhouse-url URL] [--host NAME] [--state-dir DIR] [--lag-s N]\n"
		"                  [--max-intervals N] [--status]\n"
		"                  (settings and secrets: /etc/jsampled/export.conf, see export_config.h)\n"
		"       jsamplectl fleet [--config FILE] [--clickhouse-url URL] cct --service S [--host H] [--type T]\n"
		"                  [--since AGE | --from TIME --until TIME] [--thread NAME|GLOB] [--threads]\n"
		"                  [--format F] [-o FILE]\n"
		"       jsamplectl fleet ... diff --service S [--host H] --base FROM..UNTIL --target FROM..UNTIL\n"
		"                  [--thread NAME|GLOB] [--format html|text] [-o FILE]\n"
		"       jsamplectl fleet ... hosts --service S [--host H] [window]   (each host's samples)\n"
		"       jsamplectl fleet ... init [--cluster NAME]   (create the ClickHouse schema; NAME: on each server)\n"
		"       jsamplectl fleet schema [--cluster NAME]     (print it)\n"
		"TIME: now, an age (90s, 5m, 2h, 1d), seconds since the epoch, or 2026-11-23T18:05[:30][Z]\n");
}

/* The subcommands that take each option (--socket and --help: all). */
static const struct option_scope {
	int opt;
	const char *name;
	const char *commands; /* space-separated, with a space at each end */
} scopes[] = {
	{.opt = 'f', .name = "format", .commands = " cct diff fleet "},
	{.opt = 'j', .name = "json", .commands = " list stats "},
	{.opt = 'S', .name = "since", .commands = " cct fleet "},
	{.opt = 'F', .name = "from", .commands = " cct fleet "},
	{.opt = 'U', .name = "until", .commands = " cct fleet "},
	{.opt = 'b', .name = "base", .commands = " diff fleet "},
	{.opt = 't', .name = "target", .commands = " diff fleet "},
	{.opt = 'o', .name = "output", .commands = " list cct diff stats sampling profile fleet "},
	{.opt = 'l', .name = "listen", .commands = " serve "},
	{.opt = 'C', .name = "config", .commands = " export fleet "},
	{.opt = 'I', .name = "interval-s", .commands = " export "},
	{.opt = 'P', .name = "pyroscope-url", .commands = " export "},
	{.opt = 'H', .name = "host", .commands = " export fleet "},
	{.opt = 'D', .name = "state-dir", .commands = " export "},
	{.opt = 'L', .name = "lag-s", .commands = " export "},
	{.opt = 'M', .name = "max-intervals", .commands = " export "},
	{.opt = 'T', .name = "status", .commands = " export "},
	{.opt = 'K', .name = "clickhouse-url", .commands = " export fleet "},
	{.opt = 'V', .name = "service", .commands = " fleet "},
	{.opt = 'Q', .name = "cluster", .commands = " fleet "},
	{.opt = 'W', .name = "view", .commands = " cct "},
	{.opt = 'Y', .name = "type", .commands = " cct diff fleet "},
	{.opt = 'N', .name = "thread", .commands = " cct diff fleet "},
	{.opt = 'G', .name = "threads", .commands = " cct fleet "},
};

/* 0 if every option given (seen[opt]) is one the subcommand takes; else
 * says which is not and returns 2. */
static int check_scopes(const char *command, const bool *seen)
{
	char word[40];

	snprintf(word, sizeof(word), " %s ", command);
	for (size_t i = 0; i < sizeof(scopes) / sizeof(scopes[0]); i++)
		if (seen[scopes[i].opt] && !strstr(scopes[i].commands, word)) {
			fprintf(stderr, "jsamplectl: %s takes no --%s\n", command, scopes[i].name);
			return 2;
		}
	return 0;
}

/* A diff side: "PID" or "PID@FROM..UNTIL" -> the query's form. */
static int diff_side(const char *arg, time_t now, char *out, size_t outlen)
{
	char pid[24], window[64];
	const char *at = strchr(arg, '@');
	size_t len = at ? (size_t)(at - arg) : strlen(arg);

	if (len >= sizeof(pid))
		return -1;
	memcpy(pid, arg, len);
	pid[len] = 0;
	if (!pid_from_text(pid))
		return -1;
	if (!at) {
		snprintf(out, outlen, "%s", pid);
		return 0;
	}
	if (window_spec_parse(at + 1, now, window, sizeof(window)) != 0)
		return -1;
	snprintf(out, outlen, "%s@%s", pid, window);
	return 0;
}

/* `fleet schema` and `fleet init`: the store's schema, printed or made. */
static int fleet_schema_main(const struct export_config *ec, const char *command, const char *cluster)
{
	struct clickhouse_server server = {.url = ec->clickhouse_url, .user = ec->clickhouse_user,
					   .password = ec->clickhouse_password, .timeout_s = 60};
	struct wbuf sql;
	int rc = 0;

	if (strcmp(command, "init") == 0) {
		if (!ec->clickhouse_url[0]) {
			fprintf(stderr, "jsamplectl fleet init: needs --clickhouse-url (or clickhouse_url in --config)\n");
			return 2;
		}
		return fleet_init(&server, ec->clickhouse_database, cluster, stdout);
	}
	wbuf_init(&sql);
	if (fleet_schema_sql(ec->clickhouse_database, cluster, &sql) != 0 || sql.oom) {
		fprintf(stderr, "jsamplectl fleet schema: database and cluster names are letters, digits and _\n");
		rc = 2;
	} else {
		fwrite(sql.data, 1, sql.len, stdout);
	}
	wbuf_free(&sql);
	return rc;
}

/* `fleet cct|diff|hosts`: the query from the options. */
static int fleet_main(const struct export_config *ec, const char *command, const char *service, const char *host,
		      const char *since, const char *from, const char *until, const char *base, const char *target,
		      const char *format, const char *type, const char *thread, bool by_thread, const char *output,
		      time_t now)
{
	struct fleet_query q = {.server = {.url = ec->clickhouse_url, .user = ec->clickhouse_user,
					   .password = ec->clickhouse_password, .timeout_s = 60},
				.database = ec->clickhouse_database, .service = service, .host = host,
				.profile_type = type, .thread = thread, .by_thread = by_thread};
	char window[80];
	FILE *out = stdout;
	int rc;

	if (strcmp(command, "cct") == 0)
		q.command = FLEET_CCT;
	else if (strcmp(command, "diff") == 0)
		q.command = FLEET_DIFF;
	else if (strcmp(command, "hosts") == 0)
		q.command = FLEET_HOSTS;
	else {
		usage(stderr);
		return 2;
	}
	if (!ec->clickhouse_url[0] || !service) {
		fprintf(stderr, "jsamplectl fleet: needs --clickhouse-url (or clickhouse_url in --config) and --service\n");
		return 2;
	}
	/* hosts counts samples, not paths: no pool to pick or show */
	if ((thread && q.command == FLEET_HOSTS) || (by_thread && q.command != FLEET_CCT)) {
		fprintf(stderr, "jsamplectl fleet: --thread is for cct and diff, --threads for cct\n");
		return 2;
	}
	if (q.command == FLEET_DIFF) {
		long long bf, bu, tf, tu;
		char bw[80], tw[80];

		if (!base || !target || window_spec_parse(base, now, bw, sizeof(bw)) != 0 ||
		    window_spec_parse(target, now, tw, sizeof(tw)) != 0 || sscanf(bw, "%lld..%lld", &bf, &bu) != 2 ||
		    sscanf(tw, "%lld..%lld", &tf, &tu) != 2) {
			fprintf(stderr, "jsamplectl fleet: diff needs --base FROM..UNTIL and --target FROM..UNTIL\n");
			return 2;
		}
		q.base_from = bf, q.base_until = bu, q.from = tf, q.until = tu;
	} else {
		char spec[160];
		long long f = 0, u = 0;

		if (since && (from || until)) {
			fprintf(stderr, "jsamplectl: --since or --from/--until, not both\n");
			return 2;
		}
		/* Default: the last hour. */
		snprintf(spec, sizeof(spec), "%s..%s", since ? since : from ? from : "1h", until ? until : "now");
		if (window_spec_parse(spec, now, window, sizeof(window)) != 0 ||
		    sscanf(window, "%lld..%lld", &f, &u) != 2) {
			fprintf(stderr, "jsamplectl fleet: cannot read the time window %s\n", spec);
			return 2;
		}
		q.from = f, q.until = u;
	}
	q.format = format ? format : q.command == FLEET_DIFF ? "html" : "tree";
	if (output && !(out = fopen(output, "wb"))) {
		perror(output);
		return 2;
	}
	curl_global_init(CURL_GLOBAL_DEFAULT);
	rc = fleet_run(&q, out);
	curl_global_cleanup();
	if (out != stdout && fclose(out) != 0) {
		perror(output);
		return 3;
	}
	return rc;
}

int main(int argc, char **argv)
{
	static const struct option longs[] = {
		{"socket", required_argument, 0, 's'}, {"format", required_argument, 0, 'f'},
		{"json", no_argument, 0, 'j'},         {"since", required_argument, 0, 'S'},
		{"from", required_argument, 0, 'F'},   {"until", required_argument, 0, 'U'},
		{"base", required_argument, 0, 'b'},   {"target", required_argument, 0, 't'},
		{"output", required_argument, 0, 'o'}, {"listen", required_argument, 0, 'l'},
		{"config", required_argument, 0, 'C'}, {"interval-s", required_argument, 0, 'I'},
		{"pyroscope-url", required_argument, 0, 'P'}, {"host", required_argument, 0, 'H'},
		{"state-dir", required_argument, 0, 'D'}, {"lag-s", required_argument, 0, 'L'},
		{"max-intervals", required_argument, 0, 'M'}, {"status", no_argument, 0, 'T'},
		{"clickhouse-url", required_argument, 0, 'K'}, {"service", required_argument, 0, 'V'},
		{"view", required_argument, 0, 'W'},   {"cluster", required_argument, 0, 'Q'},
		{"type", required_argument, 0, 'Y'},   {"thread", required_argument, 0, 'N'},
		{"threads", no_argument, 0, 'G'},
		{"help", no_argument, 0, 'h'},         {0, 0, 0, 0},
	};
	/* export: command-line settings, applied over the config file's */
	static const struct {
		int opt;
		const char *key;
	} export_keys[] = {{'I', "interval_s"}, {'P', "pyroscope_url"}, {'H', "host"},
			   {'D', "state_dir"},  {'L', "lag_s"},         {'M', "max_intervals"},
			   {'K', "clickhouse_url"}};
	const char *export_args[8] = {0};
	const char *config_path = NULL, *service = NULL, *view = NULL, *cluster = NULL, *type = NULL;
	char threads[THREAD_SELECTOR_WORD_MAX] = "";
	const char *thread = NULL; /* --thread as given (fleet) */
	bool by_thread = false;
	int export_status = 0;
	const char *socket_path = getenv("JSAMPLED_SOCKET");
	const char *format = NULL, *since = NULL, *from = NULL, *until = NULL, *base = NULL, *target = NULL;
	const char *output = NULL, *listen = "127.0.0.1:8421";
	char request[512], err[512];
	time_t now = time(NULL);
	int json = 0, c, rc;
	bool seen[256] = {false};
	FILE *out = stdout;

	if (!socket_path || !*socket_path)
		socket_path = DEFAULT_SOCKET;
	while ((c = getopt_long(argc, argv, "o:", longs, NULL)) != -1) {
		if (c > 0 && c < 256)
			seen[c] = true;
		switch (c) {
		case 's':
			socket_path = optarg;
			break;
		case 'f':
			format = optarg;
			break;
		case 'j':
			json = 1;
			break;
		case 'S':
			since = optarg;
			break;
		case 'F':
			from = optarg;
			break;
		case 'U':
			until = optarg;
			break;
		case 'b':
			base = optarg;
			break;
		case 't':
			target = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case 'l':
			listen = optarg;
			break;
		case 'C':
			config_path = optarg;
			break;
		case 'T':
			export_status = 1;
			break;
		case 'V':
			service = optarg;
			break;
		case 'Q':
			cluster = optarg;
			break;
		case 'W':
			if (cct_view_parse(optarg) < 0) {
				fprintf(stderr, "jsamplectl: --view must be java, mixed, carrier or mixed,carrier\n");
				return 2;
			}
			view = optarg;
			break;
		case 'Y':
			if (cct_profile_type_parse(optarg) < 0) {
				fprintf(stderr, "jsamplectl: --type must be cpu, offcpu or wall\n");
				return 2;
			}
			type = optarg;
			break;
		case 'N':
			thread = optarg;
			if (thread_selector_word(optarg, threads, sizeof(threads)) != 0) {
				fprintf(stderr, "jsamplectl: --thread must be a thread name or glob of 1 to 127 bytes\n");
				return 2;
			}
			break;
		case 'G':
			by_thread = true;
			break;
		case 'I':
		case 'P':
		case 'H':
		case 'D':
		case 'L':
		case 'M':
		case 'K':
			for (size_t i = 0; i < sizeof(export_keys) / sizeof(export_keys[0]); i++)
				if (export_keys[i].opt == c)
					export_args[i] = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	argc -= optind;
	argv += optind;
	if (argc >= 1 && check_scopes(argv[0], seen) != 0)
		return 2;
	if (argc == 1 && strcmp(argv[0], "list") == 0) {
		snprintf(request, sizeof(request), "list%s", json ? " json" : "");
	} else if (argc == 2 && strcmp(argv[0], "cct") == 0 && pid_from_text(argv[1])) {
		char window[80] = "";

		if (since && (from || until)) {
			fprintf(stderr, "jsamplectl: --since or --from/--until, not both\n");
			return 2;
		}
		if (since || from || until) {
			char spec[160];
			snprintf(spec, sizeof(spec), "%s..%s", since ? since : from ? from : "", until ? until : "");
			if (window_spec_parse(spec, now, window, sizeof(window)) != 0) {
				fprintf(stderr, "jsamplectl: cannot read the time window %s\n", spec);
				return 2;
			}
		}
		snprintf(request, sizeof(request), "cct %s %s%s%s%s%s%s%s%s%s", argv[1], format ? format : "tree",
			 window[0] ? " " : "", window, view ? " " : "", view ? view : "", type ? " " : "",
			 type ? type : "", by_thread ? " threads" : "", threads);
	} else if (argc == 1 && strcmp(argv[0], "diff") == 0) {
		char b[120], t[120];

		if (!base || !target || diff_side(base, now, b, sizeof(b)) != 0 ||
		    diff_side(target, now, t, sizeof(t)) != 0) {
			fprintf(stderr, "jsamplectl: diff needs --base and --target, each PID or PID@FROM..UNTIL\n");
			return 2;
		}
		snprintf(request, sizeof(request), "diff %s %s %s%s%s%s", b, t, format ? format : "html", type ? " " : "",
			 type ? type : "", threads);
	} else if (argc >= 1 && argc <= 2 && strcmp(argv[0], "stats") == 0 && (argc == 1 || pid_from_text(argv[1]))) {
		snprintf(request, sizeof(request), "stats%s%s%s", argc == 2 ? " " : "", argc == 2 ? argv[1] : "",
			 json ? " json" : "");
	} else if (argc == 2 && strcmp(argv[0], "sampling") == 0 &&
		   (strcmp(argv[1], "on") == 0 || strcmp(argv[1], "off") == 0)) {
		snprintf(request, sizeof(request), "sampling %s", argv[1]);
	} else if (argc == 2 && (strcmp(argv[0], "offcpu") == 0 || strcmp(argv[0], "alloc") == 0 ||
				 strcmp(argv[0], "lock") == 0) &&
		   (strcmp(argv[1], "on") == 0 || strcmp(argv[1], "off") == 0)) {
		snprintf(request, sizeof(request), "%s %s", argv[0], argv[1]);
	} else if (argc == 2 && strcmp(argv[0], "profile") == 0 && pid_from_text(argv[1])) {
		snprintf(request, sizeof(request), "profile %s", argv[1]);
	} else if (argc == 1 && strcmp(argv[0], "serve") == 0) {
		return serve_run(socket_path, listen);
	} else if (argc == 1 && strcmp(argv[0], "export") == 0) {
		struct export_config ec;

		export_config_defaults(&ec);
		snprintf(ec.socket_path, sizeof(ec.socket_path), "%s", socket_path);
		if (export_config_load(&ec, config_path ? config_path : EXPORT_DEFAULT_CONFIG, config_path != NULL,
				       err, sizeof(err)) != 0) {
			fprintf(stderr, "jsamplectl export: %s\n", err);
			return 2;
		}
		for (size_t i = 0; i < sizeof(export_keys) / sizeof(export_keys[0]); i++) {
			if (export_args[i] &&
			    export_config_set(&ec, export_keys[i].key, export_args[i], 1, err, sizeof(err)) != 0) {
				fprintf(stderr, "jsamplectl export: %s\n", err);
				return 2;
			}
		}
		return export_status ? export_print_status(&ec) : export_run(&ec);
	} else if (argc == 2 && strcmp(argv[0], "fleet") == 0) {
		struct export_config ec;
		const char *host = NULL;

		export_config_defaults(&ec);
		if (config_path && export_config_load(&ec, config_path, 1, err, sizeof(err)) != 0) {
			fprintf(stderr, "jsamplectl fleet: %s\n", err);
			return 2;
		}
		for (size_t i = 0; i < sizeof(export_keys) / sizeof(export_keys[0]); i++)
			if (export_keys[i].opt == 'K' && export_args[i])
				snprintf(ec.clickhouse_url, sizeof(ec.clickhouse_url), "%s", export_args[i]);
			else if (export_keys[i].opt == 'H')
				host = export_args[i];
		if (strcmp(argv[1], "init") == 0 || strcmp(argv[1], "schema") == 0) {
			if (service || host || since || from || until || base || target || format || output) {
				fprintf(stderr, "jsamplectl fleet %s: takes --clickhouse-url, --config and --cluster only\n",
					argv[1]);
				return 2;
			}
			return fleet_schema_main(&ec, argv[1], cluster);
		}
		if (cluster) {
			fprintf(stderr, "jsamplectl fleet %s takes no --cluster\n", argv[1]);
			return 2;
		}
		return fleet_main(&ec, argv[1], service, host, since, from, until, base, target, format, type, thread,
				  by_thread, output, now);
	} else {
		usage(stderr);
		return 2;
	}
	if (output && !(out = fopen(output, "wb"))) {
		perror(output);
		return 2;
	}
	rc = query_to_file(socket_path, request, out, err, sizeof(err));
	if (rc != QUERY_OK)
		fprintf(stderr, "jsamplectl: %s\n", err);
	if (out != stdout && fclose(out) != 0) {
		perror(output);
		return 3;
	}
	return rc;
}
