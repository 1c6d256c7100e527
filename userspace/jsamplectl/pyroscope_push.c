/* SPDX-License-Identifier: GPL-2.0-only */
#include "pyroscope_push.h"

#include <stdio.h>
#include <string.h>

#include "http_defaults.h"

/* Appends "&key=value" (value URL-encoded). */
static int add_param(CURL *easy, char *url, size_t cap, const char *key, const char *value)
{
	char *enc = curl_easy_escape(easy, value, 0);
	size_t len = strlen(url);
	int n;

	if (!enc)
		return -1;
	n = snprintf(url + len, cap - len, "%s%s=%s", strchr(url, '?') ? "&" : "?", key, enc);
	curl_free(enc);
	return n < 0 || (size_t)n >= cap - len ? -1 : 0;
}

int pyroscope_request_init(struct pyroscope_request *r, const struct export_config *c,
			   const struct export_item *item, unsigned sample_rate_hz)
{
	char url[4096], num[32], hdr[700];
	size_t base = strlen(c->pyroscope_url);
	curl_mimepart *part;

	memset(r, 0, sizeof(*r));
	r->easy = curl_easy_init();
	if (!r->easy)
		return -1;
	/* <url>/ingest, whether or not the URL ends in a slash */
	while (base && c->pyroscope_url[base - 1] == '/')
		base--;
	snprintf(url, sizeof(url), "%.*s/ingest", (int)base, c->pyroscope_url);
	if (add_param(r->easy, url, sizeof(url), "name", item->name) != 0)
		goto fail;
	snprintf(num, sizeof(num), "%lld", (long long)item->from_s);
	if (add_param(r->easy, url, sizeof(url), "from", num) != 0)
		goto fail;
	snprintf(num, sizeof(num), "%lld", (long long)item->until_s);
	if (add_param(r->easy, url, sizeof(url), "until", num) != 0 ||
	    add_param(r->easy, url, sizeof(url), "format", "pprof") != 0 ||
	    add_param(r->easy, url, sizeof(url), "spyName", "jsampled") != 0)
		goto fail;
	snprintf(num, sizeof(num), "%u", sample_rate_hz);
	if (add_param(r->easy, url, sizeof(url), "sampleRate", num) != 0)
		goto fail;

	r->mime = curl_mime_init(r->easy);
	part = r->mime ? curl_mime_addpart(r->mime) : NULL;
	if (!part || curl_mime_name(part, "profile") != CURLE_OK ||
	    curl_mime_filename(part, "profile.pprof") != CURLE_OK ||
	    curl_mime_type(part, "application/octet-stream") != CURLE_OK ||
	    curl_mime_data(part, (const char *)item->body, item->len) != CURLE_OK)
		goto fail;

	if (c->pyroscope_token[0]) {
		snprintf(hdr, sizeof(hdr), "Authorization: Bearer %s", c->pyroscope_token);
		if (!(r->headers = curl_slist_append(r->headers, hdr)))
			goto fail;
	} else if (c->pyroscope_user[0]) {
		curl_easy_setopt(r->easy, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		curl_easy_setopt(r->easy, CURLOPT_USERNAME, c->pyroscope_user);
		curl_easy_setopt(r->easy, CURLOPT_PASSWORD, c->pyroscope_password);
	}
	if (c->pyroscope_tenant[0]) {
		struct curl_slist *h;
		snprintf(hdr, sizeof(hdr), "X-Scope-OrgID: %s", c->pyroscope_tenant);
		if (!(h = curl_slist_append(r->headers, hdr)))
			goto fail;
		r->headers = h;
	}
	curl_easy_setopt(r->easy, CURLOPT_URL, url);
	curl_easy_setopt(r->easy, CURLOPT_MIMEPOST, r->mime);
	curl_easy_setopt(r->easy, CURLOPT_HTTPHEADER, r->headers);
	http_defaults(r->easy, c->timeout_s, r->error);
	return 0;
fail:
	pyroscope_request_free(r);
	return -1;
}

void pyroscope_request_free(struct pyroscope_request *r)
{
	if (r->easy)
		curl_easy_cleanup(r->easy);
	curl_mime_free(r->mime);
	curl_slist_free_all(r->headers);
	memset(r, 0, sizeof(*r));
}
