/* SPDX-License-Identifier: GPL-2.0-only */
#include "fleet_schema.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* One table: its columns, engine and keys (ClickHouse 18.16 syntax, which
 * current releases accept too: deploy/clickhouse/schema.sql explains each
 * choice). shard_key: the Distributed table's sharding expression. */
struct fleet_table {
	const char *name, *columns, *engine, *partition_by, *order_by, *shard_key;
};

static const struct fleet_table tables[] = {
	{
		.name = "stacks",
		.columns = "date Date, stack_hash UInt64, frames Array(String), kinds Array(String)",
		.engine = "ReplacingMergeTree()",
		.partition_by = "date",
		.order_by = "stack_hash",
		.shard_key = "stack_hash",
	},
	{
		.name = "samples",
		.columns = "date Date, time DateTime('UTC'), interval_s UInt32, host String, service String, pid UInt32, "
			   "label_keys Array(String), label_values Array(String), stack_hash UInt64, count UInt64, "
			   "batch_id String, profile_type String",
		.engine = "ReplacingMergeTree()",
		.partition_by = "date",
		.order_by = "(service, host, time, pid, stack_hash)",
		.shard_key = "cityHash64(host)",
	},
};

const char *const fleet_schema_tables[] = {"stacks", "samples", NULL};

int fleet_schema_identifier(const char *s)
{
	if (!s || !*s || isdigit((unsigned char)*s))
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_')
			return 0;
	return 1;
}

int fleet_schema_sql(const char *database, const char *cluster, struct wbuf *out)
{
	if (!fleet_schema_identifier(database) || (cluster && !fleet_schema_identifier(cluster)))
		return -1;
	wbuf_printf(out, "CREATE DATABASE IF NOT EXISTS %s;\n", database);
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		const struct fleet_table *t = &tables[i];

		wbuf_printf(out, "CREATE TABLE IF NOT EXISTS %s.%s%s (%s) ENGINE = %s PARTITION BY %s ORDER BY %s;\n",
			    database, t->name, cluster ? "_local" : "", t->columns, t->engine, t->partition_by,
			    t->order_by);
		if (cluster)
			wbuf_printf(out,
				    "CREATE TABLE IF NOT EXISTS %s.%s AS %s.%s_local ENGINE = Distributed(%s, %s, %s_local, "
				    "%s);\n",
				    database, t->name, database, t->name, cluster, database, t->name, t->shard_key);
	}
	return 0;
}

int fleet_schema_missing(const char *answer, size_t len, char *missing, size_t cap)
{
	int n = 0;
	size_t used = 0;

	if (cap)
		missing[0] = 0;
	for (size_t i = 0; fleet_schema_tables[i]; i++) {
		const char *name = fleet_schema_tables[i];
		size_t nl = strlen(name);
		int found = 0;

		for (size_t at = 0; at < len && !found;) {
			const char *eol = memchr(answer + at, '\n', len - at);
			size_t ll = eol ? (size_t)(eol - (answer + at)) : len - at;

			found = ll == nl && memcmp(answer + at, name, nl) == 0;
			at += ll + 1;
		}
		if (found)
			continue;
		n++;
		if (cap > used) {
			int w = snprintf(missing + used, cap - used, "%s%s", used ? ", " : "", name);
			used += w > 0 ? (size_t)w : 0;
		}
	}
	return n;
}
