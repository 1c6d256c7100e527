/* SPDX-License-Identifier: GPL-2.0-only */
/* What jsampled holds after start: the query socket's owner and mode, and
 * the capabilities it keeps once BPF is loaded and perf events are open. */
#ifndef JSAMPLED_PRIVILEGES_H
#define JSAMPLED_PRIVILEGES_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Gives the query socket at path to root:group with mode 0660 (0600 if the
 * group does not exist: then only root may query). 0 or -1 with why. */
int privileges_socket_access(const char *path, const char *group, char *why, size_t whylen);

/* Keeps only what running needs: CAP_BPF (map updates; kernels before 6.3
 * check it on every bpf() call), CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH
 * (other users' /proc/<pid> files and roots, and perf events on their
 * threads), CAP_SETUID/CAP_SETGID (an attach runs as the JVM's user),
 * CAP_KILL (to kill such an attach child past its deadline: it then
 * belongs to that user, who may have stopped it); with perf_events (they
 * are opened on each new JVM's threads) CAP_PERFMON, and CAP_SYS_ADMIN
 * where kernel.perf_event_paranoid is above 2 (Debian's 3). The rest is
 * dropped from the effective, permitted and bounding sets, and
 * no_new_privs is set. Returns 0, or -1 with why (nothing to drop is not
 * an error). */
int privileges_drop(bool perf_events, char *why, size_t whylen);

/* kernel.perf_event_paranoid (2 if unreadable). */
int privileges_perf_paranoid(void);

/* Drops every capability from the effective, permitted and inheritable
 * sets (an attach child, once it has the JVM's credentials). 0 or -1. */
int privileges_drop_all(void);

/* The user jsampled's sandboxes run as (the native helper, query
 * renders): name, or jsampled-unwind (the package's), else nobody; never
 * root. 0, or -1 with why. */
#define JSAMPLED_SANDBOX_USER "jsampled-unwind"
int privileges_sandbox_user(const char *name, uid_t *uid, gid_t *gid, char *why, size_t whylen);
/* Becomes uid:gid for good (no supplementary groups, so no capability is
 * left), with no_new_privs and not dumpable. 0, or -1 (then the caller
 * must not go on). */
int privileges_become(uid_t uid, gid_t gid);

#endif
