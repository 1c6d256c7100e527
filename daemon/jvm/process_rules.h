/* SPDX-License-Identifier: GPL-2.0-only */
/* Which processes jsampled profiles: the allow/deny rules of the config
 * (users, executables, cgroups) and a JVM's own opt-out property. Applied
 * before attaching and again when an agent says HELLO, so a JVM started
 * with -agentpath obeys the same rules. */
#ifndef JSAMPLED_PROCESS_RULES_H
#define JSAMPLED_PROCESS_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "daemon/service/options.h"

/* The JVM option that opts a process out. */
#define JSAMPLED_OPT_OUT "-Djsampled.disable=true"

/* true to profile pid (owned by uid); else why names the rule that said no. */
bool process_rules_allow(const struct process_rules *r, pid_t pid, uid_t uid, char *why, size_t whylen);

#endif
