/* SPDX-License-Identifier: GPL-2.0-only */
/* The `key = value` files of jsampled (/etc/jsampled/jsampled.conf) and
 * of its exporter (/etc/jsampled/export.conf), read by one reader:
 *   - one setting per line; blank lines and lines starting with '#' are
 *     skipped;
 *   - space around the key and the value does not count;
 *   - a '#' after a space ends the value ("queue_mb = 64  # per
 *     destination"), except for keys whose value is the whole rest of the
 *     line (a password may hold " #");
 *   - a value in matching single or double quotes loses them.
 * Each setting goes to the caller's apply function, which says what is
 * wrong with it; the reader prefixes "FILE:LINE: ". */
#ifndef JSAMPLED_KV_FILE_H
#define JSAMPLED_KV_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define KV_LINE_MAX 2048

struct kv_reader {
	/* 0, or -1 with err set (without the file and line). */
	int (*apply)(void *ctx, const char *key, const char *value, char *err, size_t errlen);
	/* Keys whose value is the whole rest of the line (NULL: none). */
	bool (*whole_line)(const char *key);
	void *ctx;
};

/* Reads every setting of f (named path in messages) until the first that
 * fails. 0, or -1 with err set ("path:line: ..."). */
int kv_file_read(FILE *f, const char *path, const struct kv_reader *r, char *err, size_t errlen);

#endif
