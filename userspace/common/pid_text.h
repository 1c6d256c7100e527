/* SPDX-License-Identifier: GPL-2.0-only */
/* A process id as text, read the same way by jsampled, jsamplectl and
 * jsreplay: decimal digits only (no sign, space or leading zero), a value
 * of 1 up to the kernel's PID_MAX_LIMIT. */
#ifndef JSAMPLED_PID_TEXT_H
#define JSAMPLED_PID_TEXT_H

#include <stddef.h>
#include <sys/types.h>

/* include/linux/threads.h: the most pid_max may be set to on 64-bit. */
#define PID_TEXT_MAX 4194304

/* The pid the n bytes at s spell, or 0 if they are not one. */
pid_t pid_from_text_n(const char *s, size_t n);
/* The same for a NUL-terminated string (NULL: 0). */
pid_t pid_from_text(const char *s);

#endif
