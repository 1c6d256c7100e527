/* Minimal JSON output helpers for query responses. */
#ifndef JSAMPLED_JSON_H
#define JSAMPLED_JSON_H

#include "../userspace/common/wire.h"

/* Writes s as a quoted JSON string, escaping as RFC 8259 requires. */
void json_string(struct wbuf *w, const char *s);
/* The same, also with <, > and & escaped (\u003c...): safe inside an HTML
 * <script> element. */
void json_string_html(struct wbuf *w, const char *s);

#endif
