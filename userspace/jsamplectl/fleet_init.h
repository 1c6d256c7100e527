/* SPDX-License-Identifier: GPL-2.0-only */
/* `jsamplectl fleet init`: creates the fleet store's schema
 * (fleet_schema.h) on a ClickHouse server, for that server alone or as its
 * part of a cluster; and the check the exporter makes before it writes. */
#ifndef JSAMPLECTL_FLEET_INIT_H
#define JSAMPLECTL_FLEET_INIT_H

#include <stddef.h>
#include <stdio.h>

#include "clickhouse_http.h"

/* Creates database's tables on s (over cluster, or for s alone: cluster
 * NULL), then checks them; says what it did on out. Exit status for main:
 * 0, 1 when ClickHouse refused or failed (the reason on stderr), 2 on a
 * bad name. */
int fleet_init(const struct clickhouse_server *s, const char *database, const char *cluster, FILE *out);

/* Whether s has every table the exporter writes: 1 yes; 0 no, with what is
 * missing and how to create it in why; -1 if s could not be asked (why). */
int fleet_schema_check(const struct clickhouse_server *s, const char *database, char *why, size_t len);

/* The advice for a server that lacks the schema (URL shown as given). */
void fleet_init_advice(const char *shown_url, char *out, size_t len);

#endif
