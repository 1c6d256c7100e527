/* SPDX-License-Identifier: GPL-2.0-only */
/* Logging: priorities as syslog's; messages go to stderr with a timestamp
 * and priority prefix unless a sink is installed (jsampled installs the
 * journal's when stderr is connected to it: journal_log.c). */
#ifndef JSAMPLED_LOG_H
#define JSAMPLED_LOG_H

#include <stdarg.h>
#include <syslog.h>

/* Messages above this priority (numerically greater) are dropped. */
void log_set_level(int max_priority);
int log_level(void);
void log_msg(int priority, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Where messages go instead of stderr (NULL: stderr). */
void log_set_sink(void (*sink)(int priority, const char *fmt, va_list ap));

#define log_err(...) log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARNING, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif
