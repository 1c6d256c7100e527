/* SPDX-License-Identifier: GPL-2.0-only */
/* jsreplay's native frames: each REC_MAPS of a recording (the mappings
 * jsampled gave its helper) makes or updates an unwinder of the process
 * in jsreplay itself, with this machine's files at the recorded paths, and
 * REC_VDSO gives it the vDSO; each sample is then unwound in place, with
 * the names put where the live run put them (native_frames.h). Run as the
 * user who replays: it reads what that user may read. */
#ifndef JSAMPLED_NATIVE_REPLAY_H
#define JSAMPLED_NATIVE_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/process/process.h"

/* The process table's add_native_frames hook, for table t
 * (native_replay_use). A sample of a process whose mappings have not come
 * yet waits: live, jsampled reads a process's first mappings when its
 * first such sample is decoded and records them right after the event
 * that decoded it, and every such sample of that event got its native
 * frames. native_replay_settle finishes them. */
void native_replay_use(struct process_table *t);
bool native_replay_frames(void *ctx, struct recording *rec, struct process *p, const struct js_sample *s,
			  enum decode_status st, struct trace *tr, uint32_t java_n);
/* Before each event other than REC_MAPS and REC_VDSO, and at the end: the
 * waiting samples get their native frames if their process's mappings
 * came meanwhile, and go into its tree. */
void native_replay_settle(void);
/* A REC_MAPS event of p. 0, or -1. */
int native_replay_maps(struct process *p, const char *maps, size_t len);
/* A REC_VDSO event of p (after its first REC_MAPS). 0, or -1. */
int native_replay_vdso(struct process *p, const void *image, size_t len);

#endif
