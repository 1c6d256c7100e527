/* SPDX-License-Identifier: GPL-2.0-only */
#include "gzip.h"

#include <string.h>

#include <zlib.h>

int gzip_into(const uint8_t *data, size_t len, struct wbuf *out)
{
	z_stream z;
	int rc;

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16 /* a gzip wrapper */, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -1;
	if (wbuf_reserve(out, deflateBound(&z, len)) != 0) {
		deflateEnd(&z);
		return -1;
	}
	z.next_in = (Bytef *)data;
	z.avail_in = (uInt)len;
	z.next_out = out->data + out->len;
	z.avail_out = (uInt)(out->cap - out->len);
	rc = deflate(&z, Z_FINISH);
	out->len += (size_t)(z.next_out - (out->data + out->len));
	deflateEnd(&z);
	return rc == Z_STREAM_END ? 0 : -1;
}
