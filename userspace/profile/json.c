/* SPDX-License-Identifier: GPL-2.0-only */
#include "json.h"

#include <stdbool.h>

static void quote(struct wbuf *w, const char *s, bool html)
{
	wbuf_u8(w, '"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':
			wbuf_put(w, "\\\"", 2);
			break;
		case '\\':
			wbuf_put(w, "\\\\", 2);
			break;
		case '\n':
			wbuf_put(w, "\\n", 2);
			break;
		case '\t':
			wbuf_put(w, "\\t", 2);
			break;
		case '<':
		case '>':
		case '&':
			if (html) {
				wbuf_printf(w, "\\u%04x", *p);
				break;
			}
			wbuf_u8(w, *p);
			break;
		default:
			if (*p < 0x20)
				wbuf_printf(w, "\\u%04x", *p);
			else
				wbuf_u8(w, *p);
		}
	}
	wbuf_u8(w, '"');
}

void json_quote(struct wbuf *w, const char *s)
{
	quote(w, s, false);
}

void json_quote_html(struct wbuf *w, const char *s)
{
	quote(w, s, true);
}
