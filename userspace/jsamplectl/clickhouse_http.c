/* SPDX-License-Identifier: GPL-2.0-only */
#include "clickhouse_http.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_defaults.h"

static size_t collect(char *p, size_t size, size_t n, void *ctx)
{
	struct wbuf *w = ctx;

	wbuf_put(w, p, size * n);
	return w->oom ? 0 : size * n;
}

int clickhouse_request_init(struct clickhouse_request *r, const struct clickhouse_server *s, const char *sql,
			    const void *body, size_t len)
{
	size_t base = strlen(s->url);
	char *enc, *url;

	memset(r, 0, sizeof(*r));
	wbuf_init(&r->response);
	r->easy = curl_easy_init();
	if (!r->easy)
		return -1;
	while (base && s->url[base - 1] == '/')
		base--;
	enc = curl_easy_escape(r->easy, sql, 0);
	url = enc ? malloc(base + strlen(enc) + 16) : NULL;
	if (!url) {
		curl_free(enc);
		clickhouse_request_free(r);
		return -1;
	}
	sprintf(url, "%.*s/?query=%s", (int)base, s->url, enc);
	curl_free(enc);
	curl_easy_setopt(r->easy, CURLOPT_URL, url);
	free(url); /* curl keeps its own copy */
	if (s->user && s->user[0]) {
		curl_easy_setopt(r->easy, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		curl_easy_setopt(r->easy, CURLOPT_USERNAME, s->user);
		curl_easy_setopt(r->easy, CURLOPT_PASSWORD, s->password ? s->password : "");
	}
	/* No "Expect: 100-continue" round trip before a large batch. */
	r->headers = curl_slist_append(NULL, "Expect:");
	if (r->headers && s->gzip_body) {
		struct curl_slist *h = curl_slist_append(r->headers, "Content-Encoding: gzip");
		if (h)
			r->headers = h;
	}
	curl_easy_setopt(r->easy, CURLOPT_HTTPHEADER, r->headers);
	curl_easy_setopt(r->easy, CURLOPT_POST, 1L);
	curl_easy_setopt(r->easy, CURLOPT_POSTFIELDS, body ? (const char *)body : "");
	curl_easy_setopt(r->easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(body ? len : 0));
	curl_easy_setopt(r->easy, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(r->easy, CURLOPT_WRITEDATA, &r->response);
	http_defaults(r->easy, s->timeout_s, r->error);
	return 0;
}

void clickhouse_request_free(struct clickhouse_request *r)
{
	if (r->easy)
		curl_easy_cleanup(r->easy);
	curl_slist_free_all(r->headers);
	wbuf_free(&r->response);
	memset(r, 0, sizeof(*r));
}

int clickhouse_run(const struct clickhouse_server *s, const char *sql, struct wbuf *out, char *err, size_t errlen)
{
	struct clickhouse_request r;
	long code = 0;
	CURLcode rc;
	int ret = -1;

	if (clickhouse_request_init(&r, s, sql, NULL, 0) != 0) {
		snprintf(err, errlen, "cannot set up a request");
		return -1;
	}
	rc = curl_easy_perform(r.easy);
	curl_easy_getinfo(r.easy, CURLINFO_RESPONSE_CODE, &code);
	if (rc != CURLE_OK) {
		snprintf(err, errlen, "%s: %s", s->url, r.error[0] ? r.error : curl_easy_strerror(rc));
	} else if (code != 200) {
		snprintf(err, errlen, "%s: HTTP %ld: %.*s", s->url, code, (int)(r.response.len > 400 ? 400 : r.response.len),
			 r.response.data ? (const char *)r.response.data : "");
	} else if (r.response.oom) {
		snprintf(err, errlen, "out of memory");
	} else {
		wbuf_put(out, r.response.data, r.response.len);
		ret = out->oom ? -1 : 0;
		if (ret)
			snprintf(err, errlen, "out of memory");
	}
	clickhouse_request_free(&r);
	return ret;
}
