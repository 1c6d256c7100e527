/* SPDX-License-Identifier: GPL-2.0-only */
/* The body of jsampled's "profiles" answer (daemon/service/query_server.h): per
 * process a "<pid> <length>" line and that many bytes of pprof, then "end".
 * An answer cut short (jsampled's render died) has no "end": nothing of it
 * is trusted as complete. */
#ifndef JSAMPLECTL_PROFILES_ANSWER_H
#define JSAMPLECTL_PROFILES_ANSWER_H

#include <stddef.h>
#include <stdint.h>

struct profile_frame {
	int pid;
	const uint8_t *pprof; /* inside the answer */
	size_t len;
};

enum { PROFILES_FRAME = 1, PROFILES_END = 0, PROFILES_MALFORMED = -1 };

/* Reads the frame at *off of body[0..len), moving *off past it. */
int profiles_next(const char *body, size_t len, size_t *off, struct profile_frame *f);

#endif
