/* SPDX-License-Identifier: GPL-2.0-only */
/* What the exporter says about its destinations' URLs: never the
 * credentials a URL may carry (user:password@), and a warning when
 * credentials would cross a network in clear text. */
#ifndef JSAMPLECTL_URL_SAFETY_H
#define JSAMPLECTL_URL_SAFETY_H

#include <stdbool.h>
#include <stddef.h>

/* url without its user and password, into out (always NUL-terminated);
 * "(unparsable URL)" if libcurl cannot parse it. Returns out. */
const char *url_redacted(const char *url, char *out, size_t cap);

/* Whether requests to url would carry credentials in clear text over a
 * network: an http:// URL to a host other than the loopback, with
 * credentials set beside it (has_credentials) or in the URL itself. */
bool url_credentials_in_clear(const char *url, bool has_credentials);

#endif
