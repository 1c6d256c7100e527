#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <systemd/sd-journal.h>
#include <time.h>

static int max_level = LOG_INFO;
static int use_journal = -1; /* decided on first use */

void log_set_level(int max_priority)
{
	max_level = max_priority;
}

int log_level(void)
{
	return max_level;
}

/* systemd sets JOURNAL_STREAM=dev:ino for the stream stderr is connected to. */
static int stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long dev, ino;
	struct stat st;

	if (!js || sscanf(js, "%lu:%lu", &dev, &ino) != 2)
		return 0;
	if (fstat(2, &st) != 0)
		return 0;
	return st.st_dev == dev && st.st_ino == ino;
}

void log_msg(int priority, const char *fmt, ...)
{
	static const char *names[] = {"emerg", "alert", "crit", "error", "warning", "notice", "info", "debug"};
	va_list ap;

	if (priority > max_level)
		return;
	if (use_journal < 0)
		use_journal = stderr_is_journal();
	va_start(ap, fmt);
	if (use_journal) {
		sd_journal_printv(priority, fmt, ap);
	} else {
		struct timespec ts;
		struct tm tm;
		char when[32];

		clock_gettime(CLOCK_REALTIME, &ts);
		localtime_r(&ts.tv_sec, &tm);
		strftime(when, sizeof(when), "%H:%M:%S", &tm);
		fprintf(stderr, "%s.%03ld jsampled %s: ", when, ts.tv_nsec / 1000000,
			names[priority & 7]);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	}
	va_end(ap);
}
