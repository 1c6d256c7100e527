/* SPDX-License-Identifier: GPL-2.0-only */
/* The names Pyroscope gives Java's allocation and lock profiles. jsampled's
 * pprof names their values as Go's profiles do (alloc_objects, alloc_space;
 * contentions, delay with a contentions period); Pyroscope files Java's
 * under alloc_in_new_tlab_objects/count, alloc_in_new_tlab_bytes/bytes
 * (period space/bytes) and contentions/count, delay/nanoseconds (period
 * mutex/count), which its Java views and profile type ids
 * (memory:alloc_in_new_tlab_bytes:bytes:space:bytes,
 * mutex:delay:nanoseconds:mutex:count) expect. */
#ifndef JSAMPLED_PYROSCOPE_NAMES_H
#define JSAMPLED_PYROSCOPE_NAMES_H

#include "profile.pb-c.h"
#include "userspace/common/wire.h"

/* Renames p's sample and period types for Pyroscope if it is an alloc or
 * lock profile (profile_type), and writes it packed and gzipped into out.
 * 0: written; 1: not such a profile (nothing written); -1: out of memory. */
int pyroscope_java_profile(Perftools__Profiles__Profile *p, const char *profile_type, struct wbuf *out);

#endif
