/* SPDX-License-Identifier: GPL-2.0-only */
/* ClickHouse's HTTP interface (port 8123): the SQL goes in the `query` URL
 * parameter, an INSERT's rows in the POST body; basic auth when a user is
 * configured. https://clickhouse.com/docs/en/interfaces/http */
#ifndef JSAMPLECTL_CLICKHOUSE_HTTP_H
#define JSAMPLECTL_CLICKHOUSE_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>

#include "userspace/common/wire.h"

struct clickhouse_server {
	const char *url; /* http(s)://host:8123 */
	const char *user, *password;
	unsigned timeout_s;
	int gzip_body; /* request bodies are gzipped (ClickHouse 18.16 and later accept it) */
};

/* One request (for a curl multi handle); its response lands in `response`
 * (the server's error text on failure). */
struct clickhouse_request {
	CURL *easy;
	struct curl_slist *headers;
	struct wbuf response;
	char error[CURL_ERROR_SIZE];
};

/* Prepares r: `sql` runs with `body` (may be NULL) as its data, which must
 * live until the transfer ends. -1 if curl cannot be set up. */
int clickhouse_request_init(struct clickhouse_request *r, const struct clickhouse_server *s, const char *sql,
			    const void *body, size_t len);
void clickhouse_request_free(struct clickhouse_request *r);

/* Runs sql and waits. 0 with the result in out; -1 with err set (the
 * server's message when it answered). */
int clickhouse_run(const struct clickhouse_server *s, const char *sql, struct wbuf *out, char *err, size_t errlen);

#endif
