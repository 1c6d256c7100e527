/* SPDX-License-Identifier: GPL-2.0-only */
/* `jsamplectl fleet`: profiles across hosts, from the ClickHouse store the
 * exporters write (deploy/clickhouse/schema.sql). ClickHouse does the
 * merging: the query returns one row per distinct stack of the service (and
 * host) in the window, summed over hosts, processes and intervals; the rows
 * become a CCT that jsampled's own renderers print, so a fleet profile
 * looks like a local one.
 *
 *   fleet cct   --service S [--host H] [--since AGE | --from T --until T] [--format F]
 *               [--thread NAME|GLOB] [--threads]   (pools as the exporter sent them)
 *   fleet diff  --service S [--host H] --base FROM..UNTIL --target FROM..UNTIL [--format html|text]
 *   fleet hosts --service S [window]      each host's samples (the parts of the sum)
 */
#ifndef JSAMPLECTL_FLEET_H
#define JSAMPLECTL_FLEET_H

#include <stdbool.h>
#include <stdio.h>

#include "clickhouse_http.h"

enum fleet_command { FLEET_CCT, FLEET_DIFF, FLEET_HOSTS };

struct fleet_query {
	enum fleet_command command;
	struct clickhouse_server server;
	const char *database;
	const char *service;
	const char *host;      /* NULL: every host */
	int64_t from, until;   /* seconds since the epoch, [from, until) */
	int64_t base_from, base_until; /* diff: the base window */
	const char *format;    /* a jsampled format name */
	const char *profile_type; /* "cpu", "offcpu" or "wall" */
	const char *thread;    /* NULL, or the thread pools shown (thread_pools.h) */
	bool by_thread;        /* paths start at their thread pool */
};

/* Runs q, writes the result to out. Exit status for main: 0, 1 when
 * ClickHouse refused or failed, 2 on usage errors. */
int fleet_run(const struct fleet_query *q, FILE *out);

#endif
