/* SPDX-License-Identifier: GPL-2.0-only */
#include "safe_text.h"

#include <stdint.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at p (at most n bytes) of a
 * character that is safe to show, 0 if none: C0 and C1 controls (U+0080-
 * U+009F: 0x9b is CSI to many terminals), DEL and the bidirectional
 * overrides (which reorder what a terminal shows) are not. */
static size_t utf8_seq(const unsigned char *p, size_t n)
{
	size_t len;
	uint32_t cp;

	if (p[0] < 0x80)
		return p[0] >= 0x20 && p[0] != 0x7f;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		len = 2, cp = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		len = 3, cp = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		len = 4, cp = p[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	/* Overlong forms, surrogates and code points past U+10FFFF. */
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	if (cp <= 0x9f || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069))
		return 0;
	return len;
}

size_t safe_text(char *out, size_t cap, const char *in, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)in;
	size_t o = 0;

	if (cap == 0)
		return 0;
	for (size_t i = 0; i < n;) {
		size_t k = utf8_seq(p + i, n - i);

		if (k) {
			if (o + k >= cap)
				break;
			memcpy(out + o, p + i, k);
			o += k;
			i += k;
			continue;
		}
		if (o + 4 >= cap)
			break;
		out[o++] = '\\';
		out[o++] = 'x';
		out[o++] = hex[p[i] >> 4];
		out[o++] = hex[p[i] & 15];
		i++;
	}
	out[o] = 0;
	return o;
}

void safe_text_inplace(char *s, size_t cap)
{
	char tmp[1024];
	size_t n = strnlen(s, cap);

	if (cap > sizeof(tmp))
		cap = sizeof(tmp);
	safe_text(tmp, cap, s, n < cap ? n : cap - 1);
	memcpy(s, tmp, strlen(tmp) + 1);
}
