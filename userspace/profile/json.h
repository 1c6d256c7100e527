/* SPDX-License-Identifier: GPL-2.0-only */
/* Minimal JSON output helpers for query responses. (Not json_string: that
 * is jansson's, which jsamplectl links beside these.) */
#ifndef JSAMPLED_JSON_H
#define JSAMPLED_JSON_H

#include "userspace/common/wire.h"

/* Writes s as a quoted JSON string, escaping as RFC 8259 requires. */
void json_quote(struct wbuf *w, const char *s);
/* The same, also with <, > and & escaped (\u003c...): safe inside an HTML
 * <script> element. */
void json_quote_html(struct wbuf *w, const char *s);

#endif
