/* Drains the BPF ring buffer into the per-process sample path. Records are
 * submitted without wake-ups (docs/hotspot.md, section 4), so the event loop
 * drains on a timer; the BPF side forces a wake-up past its watermark. */
#ifndef JSAMPLED_RINGBUF_DRAIN_H
#define JSAMPLED_RINGBUF_DRAIN_H

#include <stdint.h>

struct process_table;
struct ring_buffer;

struct ringbuf_drain {
	struct ring_buffer *rb;
	struct process_table *processes;
	uint64_t records;
	uint64_t bytes;
	uint64_t now; /* CLOCK_MONOTONIC at the start of the running drain */
};

int ringbuf_drain_open(struct ringbuf_drain *d, int map_fd, struct process_table *processes);
void ringbuf_drain_close(struct ringbuf_drain *d);
/* fd that becomes readable on a forced wake-up. */
int ringbuf_drain_fd(const struct ringbuf_drain *d);
/* Consumes everything available; returns the number of records or -errno. */
int ringbuf_drain_run(struct ringbuf_drain *d);

#endif
