#include "json.h"

void json_string(struct wbuf *w, const char *s)
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
		default:
			if (*p < 0x20)
				wbuf_printf(w, "\\u%04x", *p);
			else
				wbuf_u8(w, *p);
		}
	}
	wbuf_u8(w, '"');
}
