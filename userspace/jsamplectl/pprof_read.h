/* SPDX-License-Identifier: GPL-2.0-only */
/* Reading back a profile jsampled wrote (gzipped pprof profile.proto), with
 * protobuf-c and zlib: the exporter counts what it pushes with it. */
#ifndef JSAMPLECTL_PPROF_READ_H
#define JSAMPLECTL_PPROF_READ_H

#include <stddef.h>
#include <stdint.h>

#include "profile.pb-c.h"

/* Unpacks a gzipped (or plain) profile; NULL if it is not one. Free with
 * perftools__profiles__profile__free_unpacked(p, NULL). */
Perftools__Profiles__Profile *pprof_read(const uint8_t *data, size_t len);
/* The sum of the samples' first value (jsampled: the sample count). */
uint64_t pprof_sample_count(const Perftools__Profiles__Profile *p);

#endif
