/* SPDX-License-Identifier: GPL-2.0-only */
#include "profiles_answer.h"

#include <string.h>

/* A decimal number ending at the byte `stop`; no sign, no leading blanks. */
static int read_number(const char *p, const char *end, char stop, unsigned long long max, unsigned long long *v,
		       const char **after)
{
	unsigned long long x = 0;
	const char *q = p;

	while (q < end && *q >= '0' && *q <= '9') {
		unsigned d = (unsigned)(*q - '0');
		if (x > (max - d) / 10)
			return -1;
		x = x * 10 + d;
		q++;
	}
	if (q == p || q == end || *q != stop)
		return -1;
	*v = x;
	*after = q + 1;
	return 0;
}

int profiles_next(const char *body, size_t len, size_t *off, struct profile_frame *f)
{
	const char *p = body + *off, *end = body + len, *q;
	unsigned long long pid, n;

	if (*off > len)
		return PROFILES_MALFORMED;
	if ((size_t)(end - p) == 4 && memcmp(p, "end\n", 4) == 0) {
		*off = len;
		return PROFILES_END;
	}
	if (read_number(p, end, ' ', 0x3fffffff, &pid, &q) != 0 || pid == 0 ||
	    read_number(q, end, '\n', (unsigned long long)(end - p), &n, &q) != 0 || n > (size_t)(end - q))
		return PROFILES_MALFORMED;
	f->pid = (int)pid;
	f->pprof = (const uint8_t *)q;
	f->len = (size_t)n;
	*off = (size_t)(q + n - body);
	return PROFILES_FRAME;
}
