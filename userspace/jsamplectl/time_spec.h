/* SPDX-License-Identifier: GPL-2.0-only */
/* Times on the command line: "now"; an age such as "90s", "5m", "2h",
 * "1d" (that long ago); seconds since the epoch; or a date and time
 * "2026-11-23 18:05[:30]" / "2026-11-23T18:05[:30][Z]" (local time unless
 * it ends in Z). A window is FROM..UNTIL of those, either end optional. */
#ifndef JSAMPLECTL_TIME_SPEC_H
#define JSAMPLECTL_TIME_SPEC_H

#include <stdint.h>
#include <time.h>

/* Seconds since the epoch; -1 if s is no time. */
int64_t time_spec_parse(const char *s, time_t now);
/* "FROM..UNTIL" -> the query's "F..U" in seconds (either end may stay
 * empty); -1 if malformed. */
int window_spec_parse(const char *s, time_t now, char *out, size_t outlen);

#endif
