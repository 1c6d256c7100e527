/* SPDX-License-Identifier: GPL-2.0-only */
/* The libcurl settings every request of jsamplectl's shares: timeouts (a
 * destination that hangs must not hold the exporter), no signals, only
 * http(s), no redirects (credentials stay with the configured host), and an
 * error buffer for the reason of a failure. */
#ifndef JSAMPLECTL_HTTP_DEFAULTS_H
#define JSAMPLECTL_HTTP_DEFAULTS_H

#include <curl/curl.h>

void http_defaults(CURL *easy, unsigned timeout_s, char *error_buffer);

#endif
