/* SPDX-License-Identifier: GPL-2.0-only */
/* Immutable byte strings shared by every process's tables on the host,
 * found by content and counted by reference: fifty JVMs of one service
 * report the same classes and methods fifty times, and each name, line
 * table and call-site list is held once. A blob is freed with its last
 * reference.
 *
 * Content addressing keeps one agent from touching another's data: a blob
 * is only ever what its bytes say, so an agent that sends a name another
 * JVM also has gets the same bytes back, never a way to change them. Each
 * table still counts the whole size of every blob it refers to against its
 * own user (method_table_bytes), so a hostile agent inflates only its own
 * share; the host's real use is in shared_blobs_stats().
 *
 * One store per program, not thread-safe: jsampled's tables live on its
 * single main thread (render children are forks). */
#ifndef JSAMPLED_SHARED_BLOBS_H
#define JSAMPLED_SHARED_BLOBS_H

#include <stddef.h>
#include <stdint.h>

/* A reference to bytes[0..n) as a blob, 8-byte aligned and followed by a
 * NUL (so a string blob is a C string); NULL without memory. */
const void *shared_blob_get(const void *bytes, size_t n);
/* One more reference to a blob already held (NULL stays NULL). */
const void *shared_blob_ref(const void *blob);
/* Drops one reference (NULL: nothing). */
void shared_blob_put(const void *blob);
/* What one reference is charged: the blob's memory, header included. */
size_t shared_blob_charge(const void *blob);

struct shared_blobs_stats {
	size_t blobs;
	size_t refs;
	size_t bytes; /* blobs with their headers, and the index */
};
struct shared_blobs_stats shared_blobs_stats(void);

#endif
