/* SPDX-License-Identifier: GPL-2.0-only */
#include "log.h"

#include <stdio.h>
#include <time.h>

static int max_level = LOG_INFO;
static void (*sink)(int priority, const char *fmt, va_list ap);

void log_set_level(int max_priority)
{
	max_level = max_priority;
}

int log_level(void)
{
	return max_level;
}

void log_set_sink(void (*s)(int priority, const char *fmt, va_list ap))
{
	sink = s;
}

void log_msg(int priority, const char *fmt, ...)
{
	static const char *names[] = {"emerg", "alert", "crit", "error", "warning", "notice", "info", "debug"};
	va_list ap;

	if (priority > max_level)
		return;
	va_start(ap, fmt);
	if (sink) {
		sink(priority, fmt, ap);
	} else {
		struct timespec ts;
		struct tm tm;
		char when[32];

		clock_gettime(CLOCK_REALTIME, &ts);
		localtime_r(&ts.tv_sec, &tm);
		strftime(when, sizeof(when), "%H:%M:%S", &tm);
		fprintf(stderr, "%s.%03ld jsampled %s: ", when, ts.tv_nsec / 1000000, names[priority & 7]);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	}
	va_end(ap);
}
