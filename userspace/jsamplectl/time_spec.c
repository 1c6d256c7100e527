/* SPDX-License-Identifier: GPL-2.0-only */
#include "time_spec.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int64_t time_spec_parse(const char *s, time_t now)
{
	struct tm tm;
	char *end;
	long long v;

	if (strcmp(s, "now") == 0)
		return (int64_t)now;
	if (!isdigit((unsigned char)*s))
		return -1;
	v = strtoll(s, &end, 10);
	/* Ages past a century are no ages (and v * 86400 stays in range). */
	if (v > 100ll * 366 * 86400)
		return -1;
	if (end != s && (!*end || (!end[1] && strchr("smhd", *end)))) {
		switch (*end) {
		case 0:
			/* A bare number: seconds since the epoch (a small one is
			 * an age in seconds). */
			return v >= 100000000 ? v : (int64_t)now - v;
		case 's':
			return (int64_t)now - v;
		case 'm':
			return (int64_t)now - v * 60;
		case 'h':
			return (int64_t)now - v * 3600;
		default:
			return (int64_t)now - v * 86400;
		}
	}
	memset(&tm, 0, sizeof(tm));
	const char *rest = strptime(s, "%Y-%m-%d", &tm);
	if (!rest)
		return -1;
	if (*rest == 'T' || *rest == ' ') {
		const char *t = strptime(rest + 1, "%H:%M:%S", &tm);
		if (!t)
			t = strptime(rest + 1, "%H:%M", &tm);
		if (!t)
			return -1;
		rest = t;
	}
	if (strcmp(rest, "Z") == 0)
		return (int64_t)timegm(&tm);
	if (*rest)
		return -1;
	tm.tm_isdst = -1;
	return (int64_t)mktime(&tm);
}

int window_spec_parse(const char *s, time_t now, char *out, size_t outlen)
{
	const char *dots = strstr(s, "..");
	char from[64] = "", until[64] = "";
	int64_t f = -1, u = -1;

	if (!dots || (size_t)(dots - s) >= sizeof(from) || strlen(dots + 2) >= sizeof(until))
		return -1;
	memcpy(from, s, (size_t)(dots - s));
	snprintf(until, sizeof(until), "%s", dots + 2);
	if (from[0] && (f = time_spec_parse(from, now)) < 0)
		return -1;
	if (until[0] && (u = time_spec_parse(until, now)) < 0)
		return -1;
	if (f >= 0 && u >= 0 && f >= u)
		return -1;
	int n = f >= 0 ? snprintf(out, outlen, "%" PRId64, f) : 0;

	if (n < 0 || (size_t)n + 3 > outlen)
		return -1;
	snprintf(out + n, outlen - (size_t)n, "..");
	if (u >= 0)
		snprintf(out + n + 2, outlen - (size_t)n - 2, "%" PRId64, u);
	return 0;
}
