/* SPDX-License-Identifier: GPL-2.0-only */
#include "serve.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "query_client.h"
#include "serve_routes.h"
#include "time_spec.h"

/* The pages, embedded at build time (userspace/common/web/flamegraph.html,
 * userspace/jsamplectl/web/index.html). */
extern const char jsampled_flamegraph_page[];
extern const char jsamplectl_index_page[];
#define PAGE_MARKER "/*JSAMPLED_DATA*/null"
#define LIVE_INTERVAL_S 5

struct server {
	const char *socket_path;
	char token[33];   /* hex */
	char hosts[3][96]; /* Host headers accepted (no DNS rebinding) */
};

static volatile sig_atomic_t stopping;

static void on_stop(int sig)
{
	(void)sig;
	stopping = 1;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *type, char *body, size_t len,
			     const char *download)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	enum MHD_Result rc;

	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", type);
	MHD_add_response_header(r, "Cache-Control", "no-store");
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	/* Everything a page needs is inline: nothing else may load. */
	MHD_add_response_header(r, "Content-Security-Policy",
				"default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
				"connect-src 'self'; img-src data:");
	if (download) {
		char cd[160];
		snprintf(cd, sizeof(cd), "attachment; filename=\"%s\"", download);
		MHD_add_response_header(r, "Content-Disposition", cd);
	}
	rc = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return rc;
}

static enum MHD_Result reply_text(struct MHD_Connection *c, unsigned status, const char *fmt, const char *arg)
{
	char *body = malloc(1024);

	if (!body)
		return MHD_NO;
	snprintf(body, 1024, fmt, arg);
	return reply(c, status, "text/plain; charset=utf-8", body, strlen(body), NULL);
}

/* A query's answer as the reply; jsampled's errors as 404/502. */
static enum MHD_Result proxy(struct server *s, struct MHD_Connection *c, const char *request, const char *type,
			     const char *download)
{
	char *body, err[512];
	size_t len;
	int rc = query_to_memory(s->socket_path, request, &body, &len, err, sizeof(err));

	if (rc == QUERY_ERROR)
		return reply_text(c, MHD_HTTP_NOT_FOUND, "jsampled: %s\n", err);
	if (rc != QUERY_OK)
		return reply_text(c, MHD_HTTP_BAD_GATEWAY, "%s\n", err);
	return reply(c, MHD_HTTP_OK, type, body, len, download);
}

/* The window of the query string (since=AGE, or from=TIME&until=TIME) in
 * the query's form, with a leading space; "" for all; -1 if malformed. */
/* The flame-graph page around data, refreshing itself from live_url. */
static char *make_page(const char *data, size_t data_len, const char *live_url, size_t *len)
{
	const char *marker = strstr(jsampled_flamegraph_page, PAGE_MARKER);
	const char *tail = "\"live\":null}";
	size_t tail_len = strlen(tail), head, total;
	char live[512], *page;

	/* The data ends with its live member (cct_page.c writes it last):
	 * replaced by where to fetch updates. */
	if (!marker || data_len < tail_len || memcmp(data + data_len - tail_len, tail, tail_len) != 0)
		return NULL;
	snprintf(live, sizeof(live), "\"live\":{\"url\":\"%s\",\"interval_s\":%d}}", live_url, LIVE_INTERVAL_S);
	head = (size_t)(marker - jsampled_flamegraph_page);
	total = head + data_len - tail_len + strlen(live) + strlen(marker + strlen(PAGE_MARKER));
	page = malloc(total + 1);
	if (!page)
		return NULL;
	memcpy(page, jsampled_flamegraph_page, head);
	memcpy(page + head, data, data_len - tail_len);
	strcpy(page + head + data_len - tail_len, live);
	strcat(page, marker + strlen(PAGE_MARKER));
	*len = total;
	return page;
}

/* The flame-graph page of pid: request is its "cct PID page ..." line. */
static enum MHD_Result flame_page(struct server *s, struct MHD_Connection *c, const char *pid, const char *request)
{
	char live_url[400], err[512], *data, *page;
	const char *q;
	size_t len, page_len;
	int rc;

	rc = query_to_memory(s->socket_path, request, &data, &len, err, sizeof(err));
	if (rc == QUERY_ERROR)
		return reply_text(c, MHD_HTTP_NOT_FOUND, "jsampled: %s\n", err);
	if (rc != QUERY_OK)
		return reply_text(c, MHD_HTTP_BAD_GATEWAY, "%s\n", err);
	while (len && (data[len - 1] == '\n'))
		len--;
	/* Updates come from the same window, by the same query string
	 * (relative times move on with the clock). */
	int n = snprintf(live_url, sizeof(live_url), "/api/page/%s", pid);
	const char *keys[] = {"since", "from", "until", "type", "thread"};
	for (size_t k = 0; k < 5 && n > 0 && (size_t)n < sizeof(live_url); k++) {
		q = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, keys[k]);
		if (!q || !*q)
			continue;
		n += snprintf(live_url + n, sizeof(live_url) - (size_t)n, "%c%s=", strchr(live_url, '?') ? '&' : '?', keys[k]);
		/* The value %XX-escaped but for letters, digits and "-_.:": only
		 * characters harmless in a JSON string and a URL remain. */
		for (const unsigned char *v = (const unsigned char *)q; *v && n > 0 && (size_t)n + 4 < sizeof(live_url); v++)
			n += ((*v >= '0' && *v <= '9') || (*v >= 'a' && *v <= 'z') || (*v >= 'A' && *v <= 'Z') ||
			      strchr("-_.:", *v))
				     ? snprintf(live_url + n, sizeof(live_url) - (size_t)n, "%c", *v)
				     : snprintf(live_url + n, sizeof(live_url) - (size_t)n, "%%%02X", *v);
	}
	page = make_page(data, len, live_url, &page_len);
	free(data);
	if (!page)
		return reply_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s\n", "cannot build the page");
	return reply(c, MHD_HTTP_OK, "text/html; charset=utf-8", page, page_len, NULL);
}

/* Whether a given token is ours, in time that does not depend on where
 * it first differs (the token's length is no secret). */
static bool token_matches(const char *given, const char *token)
{
	size_t n = strlen(token);
	unsigned char diff = 0;

	if (!given || strlen(given) != n)
		return false;
	for (size_t i = 0; i < n; i++)
		diff |= (unsigned char)(given[i] ^ token[i]);
	return diff == 0;
}

/* Requests must name this server (not another name that resolves here)
 * and carry the token (or its cookie). */
static bool allowed(struct server *s, struct MHD_Connection *c, bool *set_cookie)
{
	const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host");
	const char *arg = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "token");
	const char *cookie = MHD_lookup_connection_value(c, MHD_COOKIE_KIND, "jsampled_token");
	bool host_ok = false;

	for (int i = 0; i < 3 && host; i++)
		host_ok |= strcmp(host, s->hosts[i]) == 0;
	if (!host_ok)
		return false;
	*set_cookie = token_matches(arg, s->token);
	return *set_cookie || token_matches(cookie, s->token);
}

static const char *arg(struct MHD_Connection *c, const char *key)
{
	return MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, key);
}

static enum MHD_Result route(struct server *s, struct MHD_Connection *c, const char *url)
{
	struct serve_query q = {
		.url = url,
		.since = arg(c, "since"),
		.from = arg(c, "from"),
		.until = arg(c, "until"),
		.base = arg(c, "base"),
		.target = arg(c, "target"),
		.type = arg(c, "type"),
		.thread = arg(c, "thread"),
		.now = time(NULL),
	};
	struct serve_route r;

	serve_route(&q, &r);
	switch (r.kind) {
	case SERVE_INDEX: {
		char *page = strdup(jsamplectl_index_page);
		return page ? reply(c, MHD_HTTP_OK, "text/html; charset=utf-8", page, strlen(page), NULL) : MHD_NO;
	}
	case SERVE_FLAME_PAGE:
		return flame_page(s, c, r.pid, r.request);
	case SERVE_PROXY:
		return proxy(s, c, r.request, r.type, r.filename[0] ? r.filename : NULL);
	case SERVE_BAD_REQUEST:
		return reply_text(c, MHD_HTTP_BAD_REQUEST, "%s\n", r.error);
	case SERVE_NOT_FOUND:
		break;
	}
	return reply_text(c, MHD_HTTP_NOT_FOUND, "no such page: %s\n", url);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
				  const char *version, const char *upload, size_t *upload_len, void **state)
{
	struct server *s = cls;
	bool set_cookie = false;

	(void)version;
	(void)upload;
	(void)upload_len;
	(void)state;
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
		return reply_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "%s\n", "only GET");
	if (!allowed(s, c, &set_cookie))
		return reply_text(c, MHD_HTTP_FORBIDDEN, "%s\n",
				  "open the URL jsamplectl serve printed (it carries a token)");
	if (set_cookie) {
		/* Swap the token in the URL for a cookie, and reload without it. */
		char cookie[128];
		struct MHD_Response *r = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
		enum MHD_Result rc;

		if (!r)
			return MHD_NO;
		snprintf(cookie, sizeof(cookie), "jsampled_token=%s; HttpOnly; SameSite=Strict; Path=/", s->token);
		MHD_add_response_header(r, "Set-Cookie", cookie);
		MHD_add_response_header(r, "Location", url);
		rc = MHD_queue_response(c, MHD_HTTP_SEE_OTHER, r);
		MHD_destroy_response(r);
		return rc;
	}
	return route(s, c, url);
}

int serve_run(const char *socket_path, const char *listen)
{
	struct server s = {.socket_path = socket_path};
	struct sockaddr_in addr = {.sin_family = AF_INET};
	struct MHD_Daemon *d;
	unsigned char rnd[16];
	char host[64];
	const char *colon = strrchr(listen, ':');
	long port;

	if (!colon || (size_t)(colon - listen) >= sizeof(host)) {
		fprintf(stderr, "jsamplectl: --listen wants ADDR:PORT\n");
		return 2;
	}
	snprintf(host, sizeof(host), "%.*s", (int)(colon - listen), listen);
	port = strtol(colon + 1, NULL, 10);
	if (port <= 0 || port > 65535 || inet_pton(AF_INET, host, &addr.sin_addr) != 1) {
		fprintf(stderr, "jsamplectl: --listen wants an IPv4 address and a port\n");
		return 2;
	}
	addr.sin_port = htons((uint16_t)port);
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
		perror("getrandom");
		return 3;
	}
	for (size_t i = 0; i < sizeof(rnd); i++)
		snprintf(s.token + 2 * i, 3, "%02x", rnd[i]);
	snprintf(s.hosts[0], sizeof(s.hosts[0]), "%s:%ld", host, port);
	snprintf(s.hosts[1], sizeof(s.hosts[1]), "localhost:%ld", port);
	snprintf(s.hosts[2], sizeof(s.hosts[2]), "127.0.0.1:%ld", port);
	d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_ERROR_LOG, 0,
			     NULL, NULL, on_request, &s, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
			     MHD_OPTION_CONNECTION_LIMIT, (unsigned)64, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30,
			     MHD_OPTION_END);
	if (!d) {
		fprintf(stderr, "jsamplectl: cannot listen on %s: %s\n", listen, strerror(errno));
		return 3;
	}
	signal(SIGINT, on_stop);
	signal(SIGTERM, on_stop);
	signal(SIGPIPE, SIG_IGN);
	printf("jsamplectl: serving jsampled's profiles on http://%s/?token=%s\n", listen, s.token);
	fflush(stdout);
	while (!stopping)
		pause();
	MHD_stop_daemon(d);
	return 0;
}
