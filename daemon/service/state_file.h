/* SPDX-License-Identifier: GPL-2.0-only */
/* Profiles that survive a restart: every process's CCT, its allocation
 * and lock trees (version 5), counters and the names of the methods they
 * mention, saved to <state dir>/profiles.bin
 * periodically and at stop, restored at start.
 *
 * Format (little endian, versioned, checksummed): "JSMPSTAT", u32 version,
 * u64 save time (CLOCK_REALTIME s), str boot id (version 2), u32 process
 * count, one length-prefixed block per process, then a CRC-32 of
 * everything before it. Written to a temporary file, fsynced and renamed
 * over the old one, so a crash leaves the previous save intact. A file that
 * fails its checks is renamed aside (profiles.bin.bad) and reported, never
 * half-applied. A process is taken for still running (its agent may carry
 * on in the tree) only when the boot is the same and its pid has the same
 * start time; restoring obeys --max-processes and the CCT caps. */
#ifndef JSAMPLED_STATE_FILE_H
#define JSAMPLED_STATE_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "daemon/process/process.h"

#define STATE_FILE_NAME "profiles.bin"
#define STATE_FILE_VERSION 5

/* 0, or -1 with why set. */
int state_save(const struct process_table *t, const char *dir, uint64_t now_ns, char *why, size_t whylen);
/* Number of processes restored (0 when there is no file), or -1 with why.
 * At most max_processes are kept (the most recently active first). */
int state_restore(struct process_table *t, const char *dir, uint64_t now_ns, unsigned max_processes, char *why,
		  size_t whylen);

/* The same on memory buffers (for tests). */
int state_encode(const struct process_table *t, uint64_t now_ns, struct wbuf *out);
int state_decode(struct process_table *t, const void *data, size_t len, uint64_t now_ns, unsigned max_processes,
		 char *why, size_t whylen);
/* This boot's id (/proc/sys/kernel/random/boot_id), "" if unknown. */
void state_boot_id(char out[40]);

#endif
