/* SPDX-License-Identifier: GPL-2.0-only */
/* Who a profiled JVM is, for fleet stores: its service name and labels,
 * from what any user may read of a process (/proc/PID/cmdline and
 * /proc/PID/cgroup), so the exporter needs no privilege for it.
 *
 * The service name is, in order: the JVM property -Djsampled.service=NAME;
 * the first matching naming rule of the config; the systemd unit or the
 * container of the process; the main class or jar; the command name.
 * Labels: host, pid, jvm (version), unit, container (12-hex id) and pod
 * (the Kubernetes pod UID) where the cgroup path shows them. */
#ifndef JSAMPLECTL_PROCESS_IDENTITY_H
#define JSAMPLECTL_PROCESS_IDENTITY_H

#include <stddef.h>
#include <sys/types.h>

#include "export_config.h"

struct process_identity {
	char service[128];
	char exe[256];  /* argv[0] */
	char main[256]; /* main class, jar (its file name) or module/class */
	char unit[128]; /* systemd service unit, without .service */
	char cgroup[512];
	char container[16];
	char pod[40];
};

/* Fills id from the process's cmdline (NUL-separated, len bytes) and cgroup
 * file text, then names it by rules; comm is the fallback name. */
void process_identity_from(struct process_identity *id, const char *cmdline, size_t len, const char *cgroup,
			   const char *comm, const struct service_rule *rules, size_t n_rules);
/* The same from /proc/PID; -1 if the process is gone. */
int process_identity_read(struct process_identity *id, pid_t pid, const char *comm,
			  const struct service_rule *rules, size_t n_rules);
/* Replaces what a store's name or label value must not hold. */
void identity_sanitize(char *s);

#endif
