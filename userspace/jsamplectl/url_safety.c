/* SPDX-License-Identifier: GPL-2.0-only */
#include "url_safety.h"

#include <curl/curl.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

const char *url_redacted(const char *url, char *out, size_t cap)
{
	CURLU *u = curl_url();
	char *clean = NULL;

	if (cap == 0)
		return out;
	if (u && curl_url_set(u, CURLUPART_URL, url, CURLU_NON_SUPPORT_SCHEME) == CURLUE_OK &&
	    curl_url_set(u, CURLUPART_USER, NULL, 0) == CURLUE_OK &&
	    curl_url_set(u, CURLUPART_PASSWORD, NULL, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_URL, &clean, 0) == CURLUE_OK)
		snprintf(out, cap, "%s", clean);
	else
		snprintf(out, cap, "(unparsable URL)");
	curl_free(clean);
	curl_url_cleanup(u);
	return out;
}

static bool loopback(const char *host)
{
	return strcasecmp(host, "localhost") == 0 || strncmp(host, "127.", 4) == 0 || strcmp(host, "[::1]") == 0 ||
	       strcmp(host, "::1") == 0;
}

bool url_credentials_in_clear(const char *url, bool has_credentials)
{
	CURLU *u = curl_url();
	char *scheme = NULL, *host = NULL, *user = NULL;
	bool clear = false;

	if (u && curl_url_set(u, CURLUPART_URL, url, CURLU_NON_SUPPORT_SCHEME) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK) {
		if (curl_url_get(u, CURLUPART_USER, &user, 0) == CURLUE_OK && user && user[0])
			has_credentials = true;
		clear = has_credentials && strcasecmp(scheme, "http") == 0 && !loopback(host);
	}
	curl_free(scheme);
	curl_free(host);
	curl_free(user);
	curl_url_cleanup(u);
	return clear;
}
