/* SPDX-License-Identifier: GPL-2.0-only */
/* JVM-internal threads by name. Their samples are attributed to a pseudo
 * frame such as [GC] instead of counting as decoding failures. */
#ifndef JSAMPLED_THREAD_ROLES_H
#define JSAMPLED_THREAD_ROLES_H

#include "userspace/profile/trace.h"

/* enum pseudo_frame of a thread name (comm: 16 bytes, as struct
 * js_sample's, 15 chars max), or 0 if the name is not one of HotSpot's
 * internal threads. */
int thread_role_of(const char *comm);

#endif
