/* SPDX-License-Identifier: GPL-2.0-only */
#include "wire.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void wbuf_init(struct wbuf *w)
{
	memset(w, 0, sizeof(*w));
}

void wbuf_free(struct wbuf *w)
{
	free(w->data);
	wbuf_init(w);
}

void wbuf_reset(struct wbuf *w)
{
	w->len = 0;
	w->oom = 0;
}

int wbuf_reserve(struct wbuf *w, size_t more)
{
	size_t need, cap;
	uint8_t *p;

	if (w->oom)
		return -1;
	if (more > SIZE_MAX / 2 - w->len) {
		w->oom = 1;
		return -1;
	}
	need = w->len + more;
	if (need <= w->cap)
		return 0;
	cap = w->cap ? w->cap : 256;
	while (cap < need)
		cap *= 2;
	p = realloc(w->data, cap);
	if (!p) {
		w->oom = 1;
		return -1;
	}
	w->data = p;
	w->cap = cap;
	return 0;
}

void wbuf_put(struct wbuf *w, const void *p, size_t n)
{
	if (n == 0 || wbuf_reserve(w, n) != 0)
		return;
	memcpy(w->data + w->len, p, n);
	w->len += n;
}

void wbuf_u8(struct wbuf *w, uint8_t v)
{
	wbuf_put(w, &v, 1);
}

void wbuf_u16(struct wbuf *w, uint16_t v)
{
	uint8_t b[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
	wbuf_put(w, b, 2);
}

void wbuf_u32(struct wbuf *w, uint32_t v)
{
	uint8_t b[4];
	for (int i = 0; i < 4; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	wbuf_put(w, b, 4);
}

void wbuf_u64(struct wbuf *w, uint64_t v)
{
	uint8_t b[8];
	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	wbuf_put(w, b, 8);
}

void wbuf_strn(struct wbuf *w, const char *s, size_t n)
{
	if (!s)
		n = 0;
	if (n > 0xffff)
		n = 0xffff;
	wbuf_u16(w, (uint16_t)n);
	wbuf_put(w, s, n);
}

void wbuf_str(struct wbuf *w, const char *s)
{
	wbuf_strn(w, s, s ? strlen(s) : 0);
}

void wbuf_printf(struct wbuf *w, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || wbuf_reserve(w, (size_t)n + 1) != 0)
		return;
	va_start(ap, fmt);
	vsnprintf((char *)w->data + w->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	w->len += (size_t)n;
}

void wbuf_patch_u32(struct wbuf *w, size_t at, uint32_t v)
{
	if (w->oom || at + 4 > w->len)
		return;
	for (int i = 0; i < 4; i++)
		w->data[at + i] = (uint8_t)(v >> (8 * i));
}

void rbuf_init(struct rbuf *r, const void *p, size_t len)
{
	r->p = p;
	r->len = len;
	r->pos = 0;
	r->err = 0;
}

const void *rbuf_bytes(struct rbuf *r, size_t n)
{
	const void *p;

	if (r->err || n > r->len - r->pos) {
		r->err = 1;
		return NULL;
	}
	p = r->p + r->pos;
	r->pos += n;
	return p;
}

uint8_t rbuf_u8(struct rbuf *r)
{
	const uint8_t *b = rbuf_bytes(r, 1);
	return b ? b[0] : 0;
}

uint16_t rbuf_u16(struct rbuf *r)
{
	const uint8_t *b = rbuf_bytes(r, 2);
	return b ? (uint16_t)(b[0] | b[1] << 8) : 0;
}

uint32_t rbuf_u32(struct rbuf *r)
{
	const uint8_t *b = rbuf_bytes(r, 4);
	uint32_t v = 0;

	if (!b)
		return 0;
	for (int i = 3; i >= 0; i--)
		v = v << 8 | b[i];
	return v;
}

uint64_t rbuf_u64(struct rbuf *r)
{
	const uint8_t *b = rbuf_bytes(r, 8);
	uint64_t v = 0;

	if (!b)
		return 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | b[i];
	return v;
}

const char *rbuf_str(struct rbuf *r, size_t *n)
{
	size_t len = rbuf_u16(r);
	const char *s = rbuf_bytes(r, len);

	*n = s ? len : 0;
	return s ? s : "";
}

void rbuf_str_copy(struct rbuf *r, char *out, size_t outlen)
{
	size_t n;
	const char *s = rbuf_str(r, &n);

	if (outlen == 0)
		return;
	if (n >= outlen)
		n = outlen - 1;
	memcpy(out, s, n);
	out[n] = 0;
}

struct rbuf rbuf_sub(struct rbuf *r, size_t n)
{
	struct rbuf sub;
	const void *p = rbuf_bytes(r, n);

	rbuf_init(&sub, p ? p : r->p, p ? n : 0);
	sub.err = p ? 0 : 1;
	return sub;
}
