/* SPDX-License-Identifier: GPL-2.0-only */
/* Bounded binary encoding shared by the agent and jsampled: a growable
 * writer and a reader that never reads past its buffer. Integers are little
 * endian; strings carry a u16 length. A reader error is sticky, so a parser
 * can read a whole record and check once. */
#ifndef JSAMPLED_WIRE_H
#define JSAMPLED_WIRE_H

#include <stddef.h>
#include <stdint.h>

struct wbuf {
	uint8_t *data;
	size_t len;
	size_t cap;
	int oom; /* an allocation failed; the content is incomplete */
};

void wbuf_init(struct wbuf *w);
void wbuf_free(struct wbuf *w);
void wbuf_reset(struct wbuf *w);
int wbuf_reserve(struct wbuf *w, size_t more);
void wbuf_put(struct wbuf *w, const void *p, size_t n);
void wbuf_u8(struct wbuf *w, uint8_t v);
void wbuf_u16(struct wbuf *w, uint16_t v);
void wbuf_u32(struct wbuf *w, uint32_t v);
void wbuf_u64(struct wbuf *w, uint64_t v);
static inline void wbuf_i32(struct wbuf *w, int32_t v) { wbuf_u32(w, (uint32_t)v); }
static inline void wbuf_i64(struct wbuf *w, int64_t v) { wbuf_u64(w, (uint64_t)v); }
/* Strings longer than 65535 bytes are truncated; NULL is written as "". */
void wbuf_str(struct wbuf *w, const char *s);
void wbuf_strn(struct wbuf *w, const char *s, size_t n);
/* Appends formatted text (no NUL terminator is counted in len). */
void wbuf_printf(struct wbuf *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Overwrite a u32 written earlier at offset at (for length prefixes). */
void wbuf_patch_u32(struct wbuf *w, size_t at, uint32_t v);

struct rbuf {
	const uint8_t *p;
	size_t len;
	size_t pos;
	int err; /* set on the first read past the end */
};

void rbuf_init(struct rbuf *r, const void *p, size_t len);
uint8_t rbuf_u8(struct rbuf *r);
uint16_t rbuf_u16(struct rbuf *r);
uint32_t rbuf_u32(struct rbuf *r);
uint64_t rbuf_u64(struct rbuf *r);
static inline int32_t rbuf_i32(struct rbuf *r) { return (int32_t)rbuf_u32(r); }
static inline int64_t rbuf_i64(struct rbuf *r) { return (int64_t)rbuf_u64(r); }
/* Returns a pointer into the buffer and the length; not NUL-terminated. */
const char *rbuf_str(struct rbuf *r, size_t *n);
/* Copies a string into out (NUL-terminated, truncated to outlen-1). */
void rbuf_str_copy(struct rbuf *r, char *out, size_t outlen);
const void *rbuf_bytes(struct rbuf *r, size_t n);
static inline size_t rbuf_left(const struct rbuf *r) { return r->err ? 0 : r->len - r->pos; }
/* A sub-reader over the next n bytes; the parent skips them. */
struct rbuf rbuf_sub(struct rbuf *r, size_t n);

#endif
