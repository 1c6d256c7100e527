/* SPDX-License-Identifier: GPL-2.0-only */
#include "fleet_init.h"

#include <stdlib.h>
#include <string.h>

#include "fleet_schema.h"

void fleet_init_advice(const char *shown_url, char *out, size_t len)
{
	snprintf(out, len, "create it with `jsamplectl fleet init --clickhouse-url %s` (add --cluster NAME on "
			   "each server of a cluster)", shown_url);
}

/* Whether database.table has the column: 1, 0, or -1 (err). */
static int has_column(const struct clickhouse_server *s, const char *database, const char *table, const char *column,
		      char *err, size_t errlen)
{
	struct wbuf answer;
	char sql[300];
	int rc;

	snprintf(sql, sizeof(sql),
		 "SELECT count() FROM system.columns WHERE database = '%s' AND table = '%s' AND name = '%s' FORMAT "
		 "TabSeparated",
		 database, table, column);
	wbuf_init(&answer);
	rc = clickhouse_run(s, sql, &answer, err, errlen);
	if (rc == 0)
		rc = answer.len > 0 && answer.data[0] != '0';
	else
		rc = -1;
	wbuf_free(&answer);
	return rc;
}

/* The columns later schemas added, each with the table it went into:
 * fleet init adds them to a store made before. */
static const struct added_column {
	const char *table, *column, *type;
} added_columns[] = {
	{.table = "samples", .column = "profile_type", .type = "String"},
};

int fleet_schema_check(const struct clickhouse_server *server, const char *database, char *why, size_t len)
{
	/* A query alone: no body to be gzipped (an empty one is no gzip stream). */
	struct clickhouse_server plain = *server;
	const struct clickhouse_server *s = &plain;
	struct wbuf sql, answer;
	char err[512], missing[128], advice[600];
	int n;

	plain.gzip_body = 0;

	if (!fleet_schema_identifier(database)) {
		snprintf(why, len, "database name '%s' is not a plain identifier", database);
		return -1;
	}
	wbuf_init(&sql);
	wbuf_init(&answer);
	wbuf_printf(&sql, "SELECT name FROM system.tables WHERE database = '%s' FORMAT TabSeparated", database);
	if (sql.oom || clickhouse_run(s, (const char *)sql.data, &answer, err, sizeof(err)) != 0) {
		snprintf(why, len, "cannot list the tables: %s", sql.oom ? "out of memory" : err);
		wbuf_free(&sql);
		wbuf_free(&answer);
		return -1;
	}
	n = fleet_schema_missing(answer.data ? (const char *)answer.data : "", answer.len, missing, sizeof(missing));
	wbuf_free(&sql);
	wbuf_free(&answer);
	fleet_init_advice(s->url, advice, sizeof(advice));
	if (n == 0) {
		for (size_t i = 0; i < sizeof(added_columns) / sizeof(added_columns[0]); i++) {
			const struct added_column *c = &added_columns[i];
			int has = has_column(s, database, c->table, c->column, err, sizeof(err));

			if (has < 0) {
				snprintf(why, len, "cannot list the columns: %s", err);
				return -1;
			}
			if (!has) {
				snprintf(why, len, "ClickHouse's %s.%s has no column %s (an older schema): %s", database,
					 c->table, c->column, advice);
				return 0;
			}
		}
		return 1;
	}
	snprintf(why, len, "ClickHouse has no table%s %s in database %s: %s", n > 1 ? "s" : "", missing, database,
		 advice);
	return 0;
}

/* The cluster's servers as ClickHouse knows them, or -1 (err) if it has
 * no such cluster. */
static int cluster_hosts(const struct clickhouse_server *s, const char *cluster, struct wbuf *hosts, char *err,
			 size_t errlen)
{
	char sql[256];

	snprintf(sql, sizeof(sql),
		 "SELECT concat(host_name, ':', toString(port)) FROM system.clusters WHERE cluster = '%s' FORMAT "
		 "TabSeparated",
		 cluster);
	if (clickhouse_run(s, sql, hosts, err, errlen) != 0)
		return -1;
	if (hosts->len == 0) {
		snprintf(err, errlen,
			 "%s has no cluster '%s' in its <remote_servers>: define it on every server (see "
			 "deploy/clickhouse/README.md), or leave out --cluster for a single server",
			 s->url, cluster);
		return -1;
	}
	return 0;
}

int fleet_init(const struct clickhouse_server *server, const char *database, const char *cluster, FILE *out)
{
	struct clickhouse_server plain = *server;
	const struct clickhouse_server *s = &plain;
	struct wbuf sql, hosts, ignored;
	char err[768];
	int rc = 1, ok;

	plain.gzip_body = 0;

	wbuf_init(&sql);
	wbuf_init(&hosts);
	wbuf_init(&ignored);
	if (fleet_schema_sql(database, cluster, &sql) != 0 || sql.oom) {
		fprintf(stderr, "jsamplectl fleet init: database and cluster names are letters, digits and _\n");
		rc = 2;
		goto cleanup;
	}
	if (cluster && cluster_hosts(s, cluster, &hosts, err, sizeof(err)) != 0) {
		fprintf(stderr, "jsamplectl fleet init: %s\n", err);
		goto cleanup;
	}
	wbuf_put(&sql, "", 1); /* NUL: the statements are cut in place */
	for (char *stmt = (char *)sql.data, *nl; stmt && *stmt; stmt = nl ? nl + 1 : NULL) {
		if ((nl = strchr(stmt, '\n')))
			*nl = 0;
		if (stmt[0] && stmt[strlen(stmt) - 1] == ';')
			stmt[strlen(stmt) - 1] = 0; /* the HTTP interface takes one statement, without it */
		ignored.len = 0;
		if (clickhouse_run(s, stmt, &ignored, err, sizeof(err)) != 0) {
			fprintf(stderr, "jsamplectl fleet init: %s\n  (statement: %.200s)\n", err, stmt);
			goto cleanup;
		}
	}
	/* A store of an older schema: the columns added since. */
	for (size_t i = 0; i < sizeof(added_columns) / sizeof(added_columns[0]); i++) {
		const struct added_column *c = &added_columns[i];

		for (int local = cluster ? 1 : 0; local >= 0; local--) {
			char table[64], stmt[300];
			int has;

			snprintf(table, sizeof(table), "%s%s", c->table, local ? "_local" : "");
			has = has_column(s, database, table, c->column, err, sizeof(err));
			if (has < 0) {
				fprintf(stderr, "jsamplectl fleet init: cannot list the columns of %s: %s\n", table, err);
				goto cleanup;
			}
			if (has)
				continue;
			snprintf(stmt, sizeof(stmt), "ALTER TABLE %s.%s ADD COLUMN %s %s", database, table, c->column, c->type);
			ignored.len = 0;
			if (clickhouse_run(s, stmt, &ignored, err, sizeof(err)) != 0) {
				fprintf(stderr, "jsamplectl fleet init: %s\n  (statement: %s)\n", err, stmt);
				goto cleanup;
			}
			fprintf(out, "jsamplectl fleet init: added column %s to %s.%s\n", c->column, database, table);
		}
	}
	ok = fleet_schema_check(s, database, err, sizeof(err));
	if (ok != 1) {
		fprintf(stderr, "jsamplectl fleet init: the tables are not there after creating them: %s\n", err);
		goto cleanup;
	}
	if (cluster) {
		fprintf(out, "jsamplectl fleet init: %s holds %s.stacks and %s.samples over cluster %s (its local "
			     "part: stacks_local, samples_local)\n", s->url, database, database, cluster);
		fprintf(out, "every server of %s needs its part: run this against each of them:\n", cluster);
		fwrite(hosts.data, 1, hosts.len, out);
	} else {
		fprintf(out, "jsamplectl fleet init: %s holds %s.stacks and %s.samples (a single server)\n", s->url,
			database, database);
	}
	rc = 0;
cleanup:
	wbuf_free(&sql);
	wbuf_free(&hosts);
	wbuf_free(&ignored);
	return rc;
}
