/* SPDX-License-Identifier: GPL-2.0-only */
/* The ClickHouse schema of the fleet export, in one place: the tables the
 * exporter writes and `jsamplectl fleet` reads, as `jsamplectl fleet init`
 * creates them, for a single server or for a cluster. For a single server
 * `stacks` and `samples` are the MergeTree tables themselves; for a
 * cluster each is a Distributed table over `<table>_local` on every
 * server (deploy/clickhouse/schema.sql is the cluster form, and a unit
 * test holds it to this). */
#ifndef JSAMPLECTL_FLEET_SCHEMA_H
#define JSAMPLECTL_FLEET_SCHEMA_H

#include <stddef.h>

#include "userspace/common/wire.h"

/* The tables the exporter and the fleet queries need (NULL-terminated). */
extern const char *const fleet_schema_tables[];

/* The statements that create the schema in database (a plain identifier),
 * one per line, each ending in ";": for a single server (cluster NULL) or
 * over cluster. 0, or -1 if a name is not a plain identifier. */
int fleet_schema_sql(const char *database, const char *cluster, struct wbuf *out);

/* Whether s is a plain ClickHouse identifier (letters, digits, _; not
 * starting with a digit): the only names that go into the SQL text. */
int fleet_schema_identifier(const char *s);

/* Which of fleet_schema_tables a `SELECT name FROM system.tables` answer
 * (TabSeparated, one name a line) lacks: their names, comma-separated, in
 * missing ("" if none). The number missing. */
int fleet_schema_missing(const char *tables_answer, size_t len, char *missing, size_t cap);

#endif
