/* SPDX-License-Identifier: GPL-2.0-only */
#include "pid_text.h"

#include <string.h>

pid_t pid_from_text_n(const char *s, size_t n)
{
	long v = 0;

	if (!s || n == 0 || n > 7 || s[0] == '0')
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return 0;
		v = v * 10 + (s[i] - '0');
	}
	return v <= PID_TEXT_MAX ? (pid_t)v : 0;
}

pid_t pid_from_text(const char *s)
{
	return s ? pid_from_text_n(s, strlen(s)) : 0;
}
