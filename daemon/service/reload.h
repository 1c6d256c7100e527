/* SPDX-License-Identifier: GPL-2.0-only */
/* SIGHUP: read the settings again and apply what can change while running
 * (the option table in options.c says which); the rest is logged as
 * needing a restart. Profiles are kept. */
#ifndef JSAMPLED_RELOAD_H
#define JSAMPLED_RELOAD_H

#include "daemon.h"

/* 0 if the new settings were applied, -1 if they were invalid (the old
 * ones stay). */
int daemon_reload(struct daemon *d, int argc, char **argv);

/* Pushes the limits in d->opt to the process table and every process
 * (at start and after a reload). */
void daemon_apply_limits(struct daemon *d);

#endif
