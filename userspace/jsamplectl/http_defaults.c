/* SPDX-License-Identifier: GPL-2.0-only */
#include "http_defaults.h"

void http_defaults(CURL *easy, unsigned timeout_s, char *error_buffer)
{
	curl_easy_setopt(easy, CURLOPT_USERAGENT, "jsampled-export");
	curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT, (long)(timeout_s < 5 ? timeout_s : 5));
	curl_easy_setopt(easy, CURLOPT_TIMEOUT, (long)timeout_s);
	curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, error_buffer);
	curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
}
