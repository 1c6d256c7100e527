/* SPDX-License-Identifier: GPL-2.0-only */
#include "journal_log.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <systemd/sd-journal.h>

#include "daemon/support/log.h"

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

static void to_journal(int priority, const char *fmt, va_list ap)
{
	sd_journal_printv(priority, fmt, ap);
}

void journal_log_init(void)
{
	if (stderr_is_journal())
		log_set_sink(to_journal);
}
