/* SPDX-License-Identifier: GPL-2.0-only */
/* Drains the BPF ring buffer into the per-process sample path. Records are
 * submitted without wake-ups (docs/hotspot.md, section 4), so the event loop
 * drains on a timer; the BPF side forces a wake-up past its watermark. */
#ifndef JSAMPLED_RINGBUF_DRAIN_H
#define JSAMPLED_RINGBUF_DRAIN_H

#include <stdbool.h>
#include <stdint.h>

struct process_table;
struct ring_buffer;

struct ringbuf_drain {
	struct ring_buffer *rb;
	struct process_table *processes;
	uint64_t records;
	uint64_t bytes;
	uint64_t now; /* CLOCK_MONOTONIC at the start of the running drain */
	uint32_t budget; /* records this drain may take; 0: no limit */
	uint32_t taken;
	bool more;	 /* the last drain stopped at its budget: records remain */
};

/* Records one turn of the event loop decodes before agents and queries get
 * their turn: a drain that ran until the ring was empty never ended while
 * the JVMs produced samples as fast as they were decoded, and agent reports
 * that held samples waited for then sat unread until the held queue
 * overflowed (a deep interpreter at 10 kHz: 11 s in one drain). */
#define RINGBUF_DRAIN_BATCH 512u

int ringbuf_drain_open(struct ringbuf_drain *d, int map_fd, struct process_table *processes);
void ringbuf_drain_close(struct ringbuf_drain *d);
/* fd that becomes readable on a forced wake-up. */
int ringbuf_drain_fd(const struct ringbuf_drain *d);
/* Consumes what is available, at most max_records (0: everything, for a
 * process's or the daemon's end); returns the number of records or -errno.
 * d->more says whether records remained. */
int ringbuf_drain_run(struct ringbuf_drain *d, uint32_t max_records);

#endif
