/* SPDX-License-Identifier: GPL-2.0-only */
#include "kv_file.h"

#include <ctype.h>
#include <string.h>

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

/* Cuts a " # comment" after the value. */
static void cut_comment(char *value)
{
	for (char *h = strchr(value, '#'); h; h = strchr(h + 1, '#'))
		if (h > value && isspace((unsigned char)h[-1])) {
			*h = 0;
			return;
		}
}

static char *unquote(char *v)
{
	size_t n = strlen(v);

	if (n >= 2 && (v[0] == '"' || v[0] == '\'') && v[n - 1] == v[0]) {
		v[n - 1] = 0;
		v++;
	}
	return v;
}

int kv_file_read(FILE *f, const char *path, const struct kv_reader *r, char *err, size_t errlen)
{
	char line[KV_LINE_MAX], why[512];
	unsigned lineno = 0;

	while (fgets(line, sizeof(line), f)) {
		char *s, *eq, *key, *value;

		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			snprintf(err, errlen, "%s:%u: line too long (at most %d bytes)", path, lineno, KV_LINE_MAX - 2);
			return -1;
		}
		s = trim(line);
		if (!*s || *s == '#')
			continue;
		eq = strchr(s, '=');
		if (!eq) {
			snprintf(err, errlen, "%s:%u: expected key = value", path, lineno);
			return -1;
		}
		*eq = 0;
		key = trim(s);
		value = eq + 1;
		if (!r->whole_line || !r->whole_line(key))
			cut_comment(value);
		value = unquote(trim(value));
		why[0] = 0;
		if (r->apply(r->ctx, key, value, why, sizeof(why)) != 0) {
			snprintf(err, errlen, "%s:%u: %s", path, lineno, why[0] ? why : "invalid setting");
			return -1;
		}
	}
	if (ferror(f)) {
		snprintf(err, errlen, "%s: read error", path);
		return -1;
	}
	return 0;
}
