/* SPDX-License-Identifier: GPL-2.0-only */
/* The views of a profile (cct_view.h) and the names users give them, on
 * the command line, in queries and in the export config. */
#ifndef JSAMPLED_VIEW_NAMES_H
#define JSAMPLED_VIEW_NAMES_H

/* Which frames a view shows (flags): Java's and the pseudo frames always;
 * VIEW_MIXED the kernel and native frames above them (a hidden one's
 * samples go to the frame below it); VIEW_CARRIER a virtual thread's
 * carrier frames below its [virtual thread] node. Without it every
 * [virtual thread] node is moved to the root, so a virtual thread's
 * methods add up wherever it was mounted. */
enum cct_view_frames {
	VIEW_JAVA = 0,
	VIEW_MIXED = 1u << 0,
	VIEW_CARRIER = 1u << 1,
	/* The profile type, which samples a view counts: CPU samples (no
	 * flag), off-CPU samples (VIEW_OFFCPU: the paths below the root's
	 * [off-CPU] node), or both (VIEW_WALL: a thread's whole time, on and
	 * off CPU). Every count stands for one sampling period. */
	VIEW_OFFCPU = 1u << 2,
	VIEW_WALL = 1u << 3,
	/* The agent's sampled events, in trees of their own
	 * (event_profiles.h): allocations (estimated bytes and objects) and
	 * lock waits (estimated wait time and waits). */
	VIEW_ALLOC = 1u << 4,
	VIEW_LOCK = 1u << 5,
	/* Each path starts at its thread pool's node ([thread: NAME],
	 * thread_pools.h); without it the pools' paths are merged. */
	VIEW_THREADS = 1u << 6,
};
#define VIEW_FRAMES_MASK (VIEW_MIXED | VIEW_CARRIER | VIEW_THREADS)
#define VIEW_TYPE_MASK (VIEW_OFFCPU | VIEW_WALL | VIEW_ALLOC | VIEW_LOCK)
#define VIEW_EVENT_MASK (VIEW_ALLOC | VIEW_LOCK)

/* A view's name as users write it: "java", "mixed", "carrier" or
 * "mixed,carrier" (either order). The VIEW_* flags; -1 if it is none. */
int cct_view_parse(const char *word);

/* A profile type as users write it: "cpu", "offcpu", "wall", "alloc" or
 * "lock". Its VIEW_*
 * type flag (cpu: 0); -1 if it is none. */
int cct_profile_type_parse(const char *word);
/* The name of the profile type of view flags: "cpu", "offcpu", "wall",
 * "alloc", "lock". */
const char *cct_profile_type_name(unsigned view);

#endif
