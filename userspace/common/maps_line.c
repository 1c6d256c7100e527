/* SPDX-License-Identifier: GPL-2.0-only */
#include "maps_line.h"

#include <stdio.h>
#include <string.h>

bool maps_line_parse(const char *line, size_t len, struct maps_line *m)
{
	char buf[256]; /* the fields before the path are at most ~100 bytes */
	int at = 0;
	size_t head = len < sizeof(buf) - 1 ? len : sizeof(buf) - 1;

	memcpy(buf, line, head);
	buf[head] = 0;
	if (sscanf(buf, "%llx-%llx %4s %llx %x:%x %llu %n", &m->lo, &m->hi, m->perms, &m->offset, &m->major, &m->minor,
		   &m->ino, &at) < 7 || at <= 0)
		return false;
	m->path = (size_t)at < len ? line + at : NULL;
	m->path_len = m->path ? len - (size_t)at : 0;
	return true;
}
