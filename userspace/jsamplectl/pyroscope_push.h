/* SPDX-License-Identifier: GPL-2.0-only */
/* One interval's profile as a Pyroscope ingest request (the HTTP API of
 * Grafana Pyroscope, and of what speaks it: Grafana Alloy's
 * pyroscope.receive_http, qryn). Documented at
 * https://grafana.com/docs/pyroscope/latest/configure-server/about-server-api/ :
 *   POST <url>/ingest?name=SERVICE{label=value,...}&from=S&until=S
 *        &format=pprof&spyName=jsampled&sampleRate=HZ
 * with the pprof in a multipart/form-data part named "profile". Basic auth
 * or a bearer token and X-Scope-OrgID (the tenant) come from the config. */
#ifndef JSAMPLECTL_PYROSCOPE_PUSH_H
#define JSAMPLECTL_PYROSCOPE_PUSH_H

#include <curl/curl.h>

#include "export_config.h"
#include "export_queue.h"

struct pyroscope_request {
	CURL *easy;
	curl_mime *mime;
	struct curl_slist *headers;
	char error[CURL_ERROR_SIZE];
};

/* Prepares r to push item (its body stays owned by the queue and must live
 * until the transfer ends). -1 if curl cannot be set up. */
int pyroscope_request_init(struct pyroscope_request *r, const struct export_config *c,
			   const struct export_item *item, unsigned sample_rate_hz);
void pyroscope_request_free(struct pyroscope_request *r);

#endif
