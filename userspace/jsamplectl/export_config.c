/* SPDX-License-Identifier: GPL-2.0-only */
#include "export_config.h"

#include <ctype.h>
#include <stdbool.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "query_client.h"
#include "userspace/common/kv_file.h"
#include "userspace/profile/view_names.h"

void export_config_defaults(struct export_config *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->socket_path, sizeof(c->socket_path), "%s", DEFAULT_SOCKET);
	c->interval_s = 15;
	c->lag_s = 5;
	if (gethostname(c->host, sizeof(c->host)) != 0)
		snprintf(c->host, sizeof(c->host), "unknown");
	c->host[sizeof(c->host) - 1] = 0;
	snprintf(c->state_dir, sizeof(c->state_dir), "/var/lib/jsampled-export");
	c->queue_bytes = 64u << 20;
	c->timeout_s = 10;
	snprintf(c->clickhouse_database, sizeof(c->clickhouse_database), "jsampled");
	c->types = EXPORT_TYPE_CPU;
	c->threads = 0;
}

const char *const export_type_names[EXPORT_TYPES] = {"cpu", "offcpu", "wall", "alloc", "lock"};

/* "cpu,wall" -> EXPORT_TYPE_* bits; 0 if a word is none of them. */
static unsigned parse_types(const char *value)
{
	char buf[64], *save = NULL;
	unsigned bits = 0;

	if (snprintf(buf, sizeof(buf), "%s", value) >= (int)sizeof(buf))
		return 0;
	for (char *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		unsigned i = 0;

		while (i < EXPORT_TYPES && strcmp(w, export_type_names[i]) != 0)
			i++;
		if (i == EXPORT_TYPES)
			return 0;
		bits |= 1u << i;
	}
	return bits;
}

int export_config_is_secret(const char *key)
{
	return strcmp(key, "pyroscope_password") == 0 || strcmp(key, "pyroscope_token") == 0 ||
	       strcmp(key, "clickhouse_password") == 0;
}

static int set_text(char *dst, size_t cap, const char *key, const char *value, char *err, size_t errlen)
{
	if (strlen(value) >= cap) {
		snprintf(err, errlen, "%s: value too long (at most %zu bytes)", key, cap - 1);
		return -1;
	}
	snprintf(dst, cap, "%s", value);
	return 0;
}

static int set_uint(uint32_t *dst, const char *key, const char *value, uint32_t lo, uint32_t hi, char *err,
		    size_t errlen)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(value, &end, 10);
	if (errno || !*value || *end || v < lo || v > hi) {
		snprintf(err, errlen, "%s: expected a number in %u..%u, got \"%s\"", key, lo, hi, value);
		return -1;
	}
	*dst = (uint32_t)v;
	return 0;
}

/* "NAME exe|main|unit|cgroup GLOB" */
static int add_rule(struct export_config *c, const char *value, char *err, size_t errlen)
{
	static const char *const fields[] = {"exe", "main", "unit", "cgroup"};
	char name[128], field[16], glob[256];
	struct service_rule *r;

	if (c->n_rules >= EXPORT_MAX_RULES) {
		snprintf(err, errlen, "service: at most %d rules", EXPORT_MAX_RULES);
		return -1;
	}
	if (sscanf(value, "%127s %15s %255s", name, field, glob) != 3) {
		snprintf(err, errlen, "service: expected NAME exe|main|unit|cgroup GLOB");
		return -1;
	}
	r = &c->rules[c->n_rules];
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		if (strcmp(field, fields[i]) == 0) {
			snprintf(r->name, sizeof(r->name), "%s", name);
			snprintf(r->glob, sizeof(r->glob), "%s", glob);
			r->field = (enum rule_field)i;
			c->n_rules++;
			return 0;
		}
	}
	snprintf(err, errlen, "service: unknown field \"%s\" (exe, main, unit or cgroup)", field);
	return -1;
}

int export_config_set(struct export_config *c, const char *key, const char *value, int from_cli, char *err,
		      size_t errlen)
{
	uint32_t mb;

	if (export_config_is_secret(key) && from_cli) {
		snprintf(err, errlen, "%s is a secret: set it in the config file, not on the command line", key);
		return -1;
	}
	if (strcmp(key, "pyroscope_token") == 0)
		return set_text(c->pyroscope_token, sizeof(c->pyroscope_token), key, value, err, errlen);
	if (strcmp(key, "pyroscope_password") == 0)
		return set_text(c->pyroscope_password, sizeof(c->pyroscope_password), key, value, err, errlen);
	if (strcmp(key, "clickhouse_password") == 0)
		return set_text(c->clickhouse_password, sizeof(c->clickhouse_password), key, value, err, errlen);
	if (strcmp(key, "socket") == 0)
		return set_text(c->socket_path, sizeof(c->socket_path), key, value, err, errlen);
	if (strcmp(key, "interval_s") == 0)
		return set_uint(&c->interval_s, key, value, 1, 3600, err, errlen);
	if (strcmp(key, "lag_s") == 0)
		return set_uint(&c->lag_s, key, value, 0, 300, err, errlen);
	if (strcmp(key, "timeout_s") == 0)
		return set_uint(&c->timeout_s, key, value, 1, 300, err, errlen);
	if (strcmp(key, "max_intervals") == 0)
		return set_uint(&c->max_intervals, key, value, 0, 1u << 30, err, errlen);
	if (strcmp(key, "queue_mb") == 0) {
		if (set_uint(&mb, key, value, 1, 65536, err, errlen) != 0)
			return -1;
		c->queue_bytes = (size_t)mb << 20;
		return 0;
	}
	if (strcmp(key, "host") == 0)
		return set_text(c->host, sizeof(c->host), key, value, err, errlen);
	if (strcmp(key, "state_dir") == 0)
		return set_text(c->state_dir, sizeof(c->state_dir), key, value, err, errlen);
	if (strcmp(key, "pyroscope_url") == 0)
		return set_text(c->pyroscope_url, sizeof(c->pyroscope_url), key, value, err, errlen);
	if (strcmp(key, "pyroscope_user") == 0)
		return set_text(c->pyroscope_user, sizeof(c->pyroscope_user), key, value, err, errlen);
	if (strcmp(key, "pyroscope_tenant") == 0)
		return set_text(c->pyroscope_tenant, sizeof(c->pyroscope_tenant), key, value, err, errlen);
	if (strcmp(key, "clickhouse_url") == 0)
		return set_text(c->clickhouse_url, sizeof(c->clickhouse_url), key, value, err, errlen);
	if (strcmp(key, "clickhouse_user") == 0)
		return set_text(c->clickhouse_user, sizeof(c->clickhouse_user), key, value, err, errlen);
	if (strcmp(key, "clickhouse_database") == 0) {
		/* It goes into SQL text: a plain identifier only. */
		if (!value[0] || strspn(value, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") !=
					 strlen(value)) {
			snprintf(err, errlen, "%s: letters, digits and _ only", key);
			return -1;
		}
		return set_text(c->clickhouse_database, sizeof(c->clickhouse_database), key, value, err, errlen);
	}
	if (strcmp(key, "view") == 0) {
		if (cct_view_parse(value) < 0) {
			snprintf(err, errlen, "view: java, mixed, carrier or mixed,carrier");
			return -1;
		}
		/* java is the default: a Java process's Java frames, a native
		 * process's own. */
		return set_text(c->view, sizeof(c->view), key, strcmp(value, "java") == 0 ? "" : value, err, errlen);
	}
	if (strcmp(key, "types") == 0) {
		if (!(c->types = parse_types(value))) {
			snprintf(err, errlen, "types: a list of cpu, offcpu, wall, alloc and lock, such as cpu,wall");
			return -1;
		}
		return 0;
	}
	if (strcmp(key, "threads") == 0) {
		if (strcmp(value, "on") != 0 && strcmp(value, "off") != 0) {
			snprintf(err, errlen, "threads: on or off");
			return -1;
		}
		c->threads = strcmp(value, "on") == 0;
		return 0;
	}
	if (strcmp(key, "service") == 0)
		return add_rule(c, value, err, errlen);
	snprintf(err, errlen, "unknown setting \"%s\"", key);
	return -1;
}

static bool secret_key(const char *key)
{
	return export_config_is_secret(key);
}

/* A file's setting: a secret only if no one else may read the file. */
struct load_ctx {
	struct export_config *c;
	mode_t mode;
};

static int apply_setting(void *ctx, const char *key, const char *value, char *err, size_t errlen)
{
	const struct load_ctx *l = ctx;

	if (export_config_is_secret(key) && (l->mode & 077)) {
		snprintf(err, errlen, "%s in a file others may read (mode %03o; chmod 0600)", key,
			 (unsigned)(l->mode & 0777));
		return -1;
	}
	return export_config_set(l->c, key, value, 0, err, errlen);
}

int export_config_load(struct export_config *c, const char *path, int required, char *err, size_t errlen)
{
	struct stat st;
	struct load_ctx l = {.c = c};
	const struct kv_reader reader = {.apply = apply_setting, .whole_line = secret_key, .ctx = &l};
	FILE *f = fopen(path, "re");
	int rc;

	if (!f) {
		if (!required && errno == ENOENT)
			return 0;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fileno(f), &st) != 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		fclose(f);
		return -1;
	}
	l.mode = st.st_mode;
	rc = kv_file_read(f, path, &reader, err, errlen);
	fclose(f);
	return rc;
}
