/* SPDX-License-Identifier: GPL-2.0-only */
#include "thread_pools.h"

#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

void thread_pool_name(const char *name, char *out, size_t outlen)
{
	size_t n = 0;

	for (const char *c = name; *c && n + 1 < outlen; c++) {
		if (*c >= '0' && *c <= '9') {
			while (c[1] >= '0' && c[1] <= '9')
				c++;
			out[n++] = '*';
		} else {
			out[n++] = *c;
		}
	}
	out[n] = 0;
}

bool thread_pool_selected(const char *selector, const char *pool)
{
	char own[THREAD_POOL_NAME_MAX];

	if (fnmatch(selector, pool, 0) == 0)
		return true;
	thread_pool_name(selector, own, sizeof(own));
	return strcmp(own, pool) == 0;
}

int thread_selector_word(const char *selector, char *out, size_t outlen)
{
	size_t len = strlen(selector), n;

	if (!len || len > 127 || outlen < sizeof(" thread="))
		return -1;
	n = (size_t)snprintf(out, outlen, " thread=");
	for (const unsigned char *c = (const unsigned char *)selector; *c; c++) {
		if (n + 4 >= outlen)
			return -1;
		if (*c <= ' ' || *c == '%' || *c >= 0x7f)
			n += (size_t)snprintf(out + n, outlen - n, "%%%02X", *c);
		else
			out[n++] = (char)*c;
	}
	out[n] = 0;
	return 0;
}
