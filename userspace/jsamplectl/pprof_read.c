/* SPDX-License-Identifier: GPL-2.0-only */
#include "pprof_read.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* A profile is small next to this; a larger inflated size is refused. */
#define PPROF_MAX_BYTES (512u << 20)

static uint8_t *gunzip(const uint8_t *data, size_t len, size_t *out_len)
{
	z_stream z = {0};
	size_t cap = len * 4 + 4096, got = 0;
	uint8_t *out = malloc(cap);
	int r = Z_OK;

	if (!out || inflateInit2(&z, 15 + 32 /* gzip or zlib, by header */) != Z_OK) {
		free(out);
		return NULL;
	}
	z.next_in = (Bytef *)data;
	z.avail_in = (uInt)len;
	while (r != Z_STREAM_END) {
		if (got == cap) {
			uint8_t *bigger = cap * 2 <= PPROF_MAX_BYTES ? realloc(out, cap * 2) : NULL;
			if (!bigger)
				break;
			out = bigger;
			cap *= 2;
		}
		z.next_out = out + got;
		z.avail_out = (uInt)(cap - got);
		r = inflate(&z, Z_NO_FLUSH);
		got = cap - z.avail_out;
		if (r != Z_OK && r != Z_STREAM_END)
			break;
	}
	inflateEnd(&z);
	if (r != Z_STREAM_END) {
		free(out);
		return NULL;
	}
	*out_len = got;
	return out;
}

Perftools__Profiles__Profile *pprof_read(const uint8_t *data, size_t len)
{
	Perftools__Profiles__Profile *p;
	uint8_t *plain;
	size_t plain_len;

	if (len >= 2 && data[0] == 0x1f && data[1] == 0x8b) {
		plain = gunzip(data, len, &plain_len);
		if (!plain)
			return NULL;
		p = perftools__profiles__profile__unpack(NULL, plain_len, plain);
		free(plain);
		return p;
	}
	return perftools__profiles__profile__unpack(NULL, len, data);
}

uint64_t pprof_sample_count(const Perftools__Profiles__Profile *p)
{
	uint64_t n = 0;

	for (size_t i = 0; i < p->n_sample; i++)
		if (p->sample[i]->n_value > 0 && p->sample[i]->value[0] > 0)
			n += (uint64_t)p->sample[i]->value[0];
	return n;
}
