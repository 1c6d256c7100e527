/* SPDX-License-Identifier: GPL-2.0-only */
/* The exporter's settings: /etc/jsampled/export.conf (or --config FILE),
 * then the command line. Secrets (passwords, tokens) are read only from the
 * file, which must not be readable by others: a command line is visible to
 * every user of the host.
 *
 * File syntax, one setting per line; "#" starts a comment line, or one after
 * a space behind a value (not behind a secret: its whole line is its value):
 *   socket = /run/jsampled/jsampled.sock
 *   interval_s = 15              lag_s = 5
 *   host = web-17                (default: the host name)
 *   state_dir = /var/lib/jsampled-export
 *   queue_mb = 64                (per destination; oldest dropped first)
 *   pyroscope_url = https://pyroscope.example:4040
 *   pyroscope_user = ...   pyroscope_password = ...   (basic auth)
 *   pyroscope_token = ...        (bearer)
 *   pyroscope_tenant = ...       (X-Scope-OrgID)
 *   clickhouse_url = http://clickhouse.example:8123   (HTTP interface)
 *   clickhouse_user = ...  clickhouse_password = ...  (basic auth)
 *   clickhouse_database = jsampled
 *   timeout_s = 10
 *   view = java|mixed|carrier    (mixed: with kernel frames; carrier: a
 *                                 virtual thread's carrier frames too)
 *   types = cpu[,offcpu][,wall]  (the profile types exported, each its own
 *                                 series and rows; offcpu and wall need
 *                                 jsampled --offcpu on)
 *   threads = on|off             (each sample's thread pool: a thread label
 *                                 in Pyroscope, a thread frame at the root of
 *                                 ClickHouse stacks; default off)
 *   service = NAME exe|main|unit|cgroup GLOB   (a naming rule; first match wins)
 */
#ifndef JSAMPLECTL_EXPORT_CONFIG_H
#define JSAMPLECTL_EXPORT_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#define EXPORT_DEFAULT_CONFIG "/etc/jsampled/export.conf"
#define EXPORT_MAX_RULES 64

enum rule_field { RULE_EXE, RULE_MAIN, RULE_UNIT, RULE_CGROUP };

/* The profile types an exporter sends: bit i is export_type_names[i]. */
enum {
	EXPORT_TYPE_CPU = 1u << 0,
	EXPORT_TYPE_OFFCPU = 1u << 1,
	EXPORT_TYPE_WALL = 1u << 2,
	EXPORT_TYPE_ALLOC = 1u << 3,
	EXPORT_TYPE_LOCK = 1u << 4,
	EXPORT_TYPES = 5
};
extern const char *const export_type_names[EXPORT_TYPES];

struct service_rule {
	char name[128];
	enum rule_field field;
	char glob[256];
};

struct export_config {
	char socket_path[108];
	uint32_t interval_s;
	uint32_t lag_s; /* a window is fetched this long after it ends: late samples land */
	char host[128];
	char state_dir[256];
	size_t queue_bytes;
	uint32_t timeout_s;
	char pyroscope_url[512];
	char pyroscope_user[128];
	char pyroscope_password[256];
	char pyroscope_token[512];
	char pyroscope_tenant[128];
	char clickhouse_url[512];
	char clickhouse_user[128];
	char clickhouse_password[256];
	char clickhouse_database[64];
	char view[16]; /* jsampled's --view (cct_view.h); "": each process's default */
	unsigned types; /* EXPORT_TYPE_* bits */
	int threads;    /* samples keep their thread pool (jsampled's "threads" word) */
	struct service_rule rules[EXPORT_MAX_RULES];
	size_t n_rules;
	uint32_t max_intervals; /* runs this many intervals then stops (tests; 0: forever) */
};

void export_config_defaults(struct export_config *c);
/* Reads path into c. A missing file is fine when !required. A secret in a
 * file that group or others may read is refused. -1 with err set. */
int export_config_load(struct export_config *c, const char *path, int required, char *err, size_t errlen);
/* Whether a setting is a secret (file only, file not readable by others). */
int export_config_is_secret(const char *key);
/* One "key = value" setting (also from the command line, where secrets are
 * refused: from_cli). -1 with err set. */
int export_config_set(struct export_config *c, const char *key, const char *value, int from_cli, char *err,
		      size_t errlen);

#endif
