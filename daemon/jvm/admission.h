/* SPDX-License-Identifier: GPL-2.0-only */
/* Which agents get a process slot: the policy applied at HELLO. An agent is
 * admitted for the process on the other end of its socket only, if that
 * process maps a JVM, the rules allow it, the process is not known to have
 * exceeded its limits, and there is room: --max-processes overall (the
 * longest-exited process is forgotten to make room), --max-total-mb and,
 * for users other than root, --max-processes-per-user and --max-user-mb
 * (what their processes make jsampled hold, trees and all). An agent of a
 * process jsampled already knows (same instance and user: it reconnected,
 * or jsampled restarted) carries on in the same profile. */
#ifndef JSAMPLED_ADMISSION_H
#define JSAMPLED_ADMISSION_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct daemon;
struct agent_link;
struct process;

/* The process for a verified agent's HELLO, or NULL with why. */
struct process *admission_hello(struct daemon *d, struct agent_link *l, const char *vm_name, const char *vm_version,
				char *why, size_t whylen);

/* Bytes of agent data and held samples held for uid's live processes,
 * except skip's. */
/* Room for one more process of uid (evicting exited ones): false with why
 * when a limit says no. Also for processes profiled without an agent. */
bool admission_make_room(struct daemon *d, uid_t uid, char *why, size_t whylen);

size_t admission_user_bytes(const struct daemon *d, uid_t uid, const struct process *skip);

/* Everything the processes of uid (-1: of everyone), live and exited, make
 * jsampled hold (process_memory_bytes). */
size_t admission_user_memory(const struct daemon *d, long uid);
/* Keeps each user other than root under --max-user-mb and everyone under
 * --max-total-mb: the longest-exited profiles are forgotten first, then
 * the live trees of whoever is still over grow no more (new paths go to
 * [other], counted). Every maintenance tick. */
void admission_memory_pressure(struct daemon *d);

/* How far p's model may grow: --max-model-mb, and for a user other than
 * root what is left of --max-user-mb. */
size_t admission_model_budget(const struct daemon *d, const struct process *p);

#endif
