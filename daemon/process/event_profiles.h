/* SPDX-License-Identifier: GPL-2.0-only */
/* A process's allocation and lock profiles, from its agent's EVENTS
 * records (agent_protocol.h): each sampled event's stack goes into two
 * trees, one per value a profile of that type carries (alloc: estimated
 * bytes and objects; lock: estimated wait time and waits). An event of
 * value v, sampled with probability p = 1 - exp(-v / interval), stands
 * for v / p of the first and 1 / p of the second: the estimator of
 * Poisson sampling, unbiased for every site whatever its sizes. The trees
 * are made on the first event of their type, capped like the CPU tree. */
#ifndef JSAMPLED_EVENT_PROFILES_H
#define JSAMPLED_EVENT_PROFILES_H

#include <stddef.h>
#include <stdint.h>

#include "userspace/common/wire.h"
#include "userspace/profile/cct.h"
#include "userspace/profile/kernel_symbols.h"
#include "userspace/profile/method_table.h"

enum event_tree {
	EVENT_ALLOC_BYTES,   /* alloc_space/bytes */
	EVENT_ALLOC_OBJECTS, /* alloc_objects/count */
	EVENT_LOCK_DELAY,    /* delay/nanoseconds */
	EVENT_LOCK_COUNT,    /* contentions/count */
	EVENT_TREE_COUNT
};

struct event_profiles {
	struct cct *tree[EVENT_TREE_COUNT]; /* NULL until its first event */
	uint64_t alloc_interval, lock_interval; /* as the agent last reported them */
	uint64_t alloc_events, monitor_events, park_events;
	uint64_t malformed; /* records or events refused (counted, not applied) */
	uint64_t agent_dropped; /* the agent's own drops, as last reported */
	uint64_t no_memory;     /* events a tree could not take */
};

/* The caps of each tree (a quarter of the CPU tree's each). */
struct event_caps {
	uint32_t max_nodes;
	size_t max_bytes;
	uint32_t slice_s;
	size_t slice_max_bytes;
};

void event_profiles_free(struct event_profiles *e);
/* The tree which, made (empty, with caps) if there is none yet; NULL if
 * out of memory. */
struct cct *event_profiles_tree(struct event_profiles *e, int which, const struct event_caps *caps);
/* One EVENTS record. wall_offset_ns turns the agent's CLOCK_MONOTONIC into
 * wall-clock time (the trees' time slices); names holds the classes'
 * names. -1 if malformed (events before the bad one stay applied). */
int event_profiles_apply(struct event_profiles *e, const struct event_caps *caps, const struct method_table *m,
			 struct name_refs *names, int64_t wall_offset_ns, const void *payload, size_t len);
size_t event_profiles_bytes(const struct event_profiles *e);
/* The weight of an event of value v sampled at interval (0: every event):
 * what it stands for in the first tree (v / p) and the second (1 / p). */
void event_weights(uint64_t v, uint64_t interval, uint64_t *first, uint64_t *second);
/* "byte[]" for "[B", "java.lang.String[][]" for "[[Ljava.lang.String;":
 * a class name as the method table holds it, as Java writes it. */
void event_class_name(const char *held, char *out, size_t outlen);

#endif
