/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One line of a /proc/PID/maps text: its fields and where its path starts.
 * The text is the profiled process's (its paths are its own), so the
 * parser reads a bounded head of the line and never trusts the path.
 */
#ifndef JSAMPLED_MAPS_LINE_H
#define JSAMPLED_MAPS_LINE_H

#include <stdbool.h>
#include <stddef.h>

struct maps_line {
	unsigned long long lo, hi, offset, ino;
	unsigned major, minor;
	char perms[5];
	const char *path; /* into the line, not NUL-terminated; NULL: none */
	size_t path_len;
};

/* Parses line[0..len) (no newline); false if it is not a maps line. */
bool maps_line_parse(const char *line, size_t len, struct maps_line *m);

#endif
