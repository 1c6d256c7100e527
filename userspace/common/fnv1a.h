/* SPDX-License-Identifier: GPL-2.0-only */
/* FNV-1a, 64 bits: the one string hash of jsampled and jsamplectl (hash
 * tables of names, and the stack ids of the ClickHouse rows, which must
 * stay the same from one release to the next). */
#ifndef JSAMPLED_FNV1A_H
#define JSAMPLED_FNV1A_H

#include <stddef.h>
#include <stdint.h>

#define FNV1A_START 0xcbf29ce484222325ull

/* h extended by n bytes. */
static inline uint64_t fnv1a_bytes(uint64_t h, const void *data, size_t n)
{
	const uint8_t *p = data;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

/* h extended by a NUL-terminated string (without its NUL). */
static inline uint64_t fnv1a_str(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
	return h;
}

#endif
