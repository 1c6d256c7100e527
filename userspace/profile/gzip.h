/* SPDX-License-Identifier: GPL-2.0-only */
/* gzip (RFC 1952) compression into a wbuf, with zlib: pprof profiles are
 * gzipped by convention, and jsamplectl's ClickHouse inserts travel
 * gzipped (Content-Encoding: gzip). */
#ifndef JSAMPLED_GZIP_H
#define JSAMPLED_GZIP_H

#include <stddef.h>
#include <stdint.h>

#include "userspace/common/wire.h"

/* Appends the gzip of data to out; -1 on an allocation or zlib error. */
int gzip_into(const uint8_t *data, size_t len, struct wbuf *out);

#endif
