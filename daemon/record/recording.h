/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Record and replay of jsampled's inputs. A recording is the sequence of
 * events the sample path consumed, in the order it consumed them: processes
 * appearing, agent batches, raw BPF samples, held-sample retries and exits.
 * Replaying it through the same functions reproduces the daemon's decoding
 * exactly, so a recorded run becomes a regression test (tests/corpus/).
 *
 * File: "JSREC002", then entries {u8 type, u32 pid, u64 time_ns, u32 len,
 * payload}, compressed as a whole with zstd. A sample's stack may be
 * written as what changed since its thread's previous sample
 * (recording_stacks.h); reading gives it back whole. Files made before
 * ("JSREC001": no such entries; older ones gzip) are read as well.
 */
#ifndef JSAMPLED_RECORDING_H
#define JSAMPLED_RECORDING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define RECORDING_MAGIC "JSREC002"
#define RECORDING_MAGIC_V1 "JSREC001"
#define RECORDING_MAX_ENTRY (64u << 20)

enum recording_event {
	REC_PROCESS = 1, /* payload: u32 uid, str vm */
	REC_BATCH = 2,   /* payload: a BATCH message payload */
	REC_SAMPLE = 3,  /* payload: a struct js_sample with its stack */
	REC_RETRY = 4,   /* held samples retried (maintenance tick); no payload */
	REC_EXIT = 5,    /* payload: u8 agent_lost (1: process still running) */
	REC_MAPS = 6,    /* payload: the process's /proc/PID/maps text, as the native unwinder read it */
	REC_AGENT = 7,   /* the agent of a process sampled since its exec (vm "early") said HELLO; no payload */
	/* payload: a struct js_sample (its stack_len the whole stack's), u32
	 * shared, then the stack's first stack_len - shared bytes: its last
	 * shared bytes are its thread's previous sample's. Read back as a
	 * REC_SAMPLE; never returned by recording_next. */
	REC_SAMPLE_SHARED = 8,
	/* payload: the process's vDSO image as mapped (the [vdso] range of its
	 * maps, read from its memory), once per native unwinder, after its
	 * first REC_MAPS: a replay names vDSO frames from it. */
	REC_VDSO = 9,
};

struct recording;

/* Creates path (mode 0600, never through a symbolic link), compressing at
 * level 1 (fast) to 9 (small). exclusive: path must not exist yet (the
 * daemon's --record); else an existing file of that name is truncated.
 * NULL with errno on failure. */
struct recording *recording_create(const char *path, int level, bool exclusive);
void recording_close(struct recording *r);
/* Appends one event stamped now (or at time_ns: the time the sample path
 * acted on, so a replay decides as the daemon did); errors are sticky and
 * reported by recording_error. */
void recording_write(struct recording *r, uint8_t type, pid_t pid, const void *payload, size_t len);
void recording_write_at(struct recording *r, uint8_t type, pid_t pid, uint64_t time_ns, const void *payload,
			size_t len);
int recording_error(const struct recording *r);
uint64_t recording_events(const struct recording *r);
/* Stack bytes of samples that were written (or read) as their thread's
 * previous sample's: what REC_SAMPLE_SHARED entries spared. */
uint64_t recording_shared_bytes(const struct recording *r);

/* Reading back: *payload points into an internal buffer valid until the
 * next call. Returns 1 for an event, 0 at the end, -1 if the file is
 * corrupt or truncated. */
struct recording *recording_open(const char *path);
int recording_next(struct recording *r, uint8_t *type, pid_t *pid, uint64_t *time_ns,
		   const uint8_t **payload, uint32_t *len);

#endif
