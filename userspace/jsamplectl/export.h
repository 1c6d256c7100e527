/* SPDX-License-Identifier: GPL-2.0-only */
/* `jsamplectl export`: a long-lived client of jsampled's query socket that
 * pushes every process's profile, interval by interval, to fleet stores.
 * It is not part of the privileged daemon: the daemon stays off the
 * network, the exporter runs unprivileged (deploy/jsampled-export.service).
 *
 * Intervals lie on a grid of interval_s seconds since the epoch (so two
 * hosts' intervals line up) and are fetched lag_s after they end, as
 * `cct PID pprof FROM..UNTIL`: with the daemon's time slices a divisor of
 * the interval, each sample lands in exactly one interval. Each interval's
 * profiles queue per destination (export_queue.h) and go out through one
 * libcurl multi handle, one request in flight per destination, so a slow or
 * dead destination delays nobody else. The state directory keeps where the
 * exporter stands (a restart resumes after the last interval taken care of,
 * neither repeating nor skipping one while jsampled still has it) and a
 * status file that `jsamplectl export --status` prints. */
#ifndef JSAMPLECTL_EXPORT_H
#define JSAMPLECTL_EXPORT_H

#include "export_config.h"

/* Runs until SIGTERM/SIGINT (or max_intervals). Exit status for main. */
int export_run(const struct export_config *c);
/* Prints the running (or last) exporter's status. */
int export_print_status(const struct export_config *c);

#endif
