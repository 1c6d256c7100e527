/* SPDX-License-Identifier: GPL-2.0-only */
#include "ringbuf_drain.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include <bpf/libbpf.h>

#include "bpf/sampler.h"
#include "daemon/support/clock.h"
#include "daemon/process/process.h"
#include "daemon/decode/stack_fragment.h"

/* A negative return stops ring_buffer__consume after this record (libbpf
 * has already advanced the consumer position past it). */
#define BUDGET_SPENT (-EAGAIN)

static int budget_left(struct ringbuf_drain *d)
{
	return d->budget && ++d->taken >= d->budget ? BUDGET_SPENT : 0;
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct ringbuf_drain *d = ctx;
	const struct js_sample *s = data;
	struct process *p;

	d->records++;
	d->bytes += size;
	if (size < sizeof(*s) || size < sizeof(*s) + s->stack_len) {
		d->processes->malformed_samples++;
		return budget_left(d);
	}
	p = process_lookup(d->processes, (pid_t)s->pid);
	if (!p || p->state != PROCESS_LIVE) {
		/* Sampled just before the process was dropped from the targets. */
		d->processes->unknown_pid_samples++;
		return budget_left(d);
	}
	frag_prefetch(s);
	process_take_sample(d->processes, p, s, d->now);
	return budget_left(d);
}

#define MAX_BPF_MAPPINGS 64

struct mapping {
	uintptr_t start, end;
};

/* This process's BPF map mappings (at most max). */
static size_t bpf_mappings(struct mapping *out, size_t max)
{
	char line[512];
	size_t n = 0;
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		return 0;
	while (n < max && fgets(line, sizeof(line), f)) {
		unsigned long start, end;
		if (strstr(line, "anon_inode:bpf-map") && sscanf(line, "%lx-%lx", &start, &end) == 2 && start < end)
			out[n++] = (struct mapping){.start = start, .end = end};
	}
	fclose(f);
	return n;
}

/* The ring is mapped twice (its data pages back to back, so records that
 * wrap are contiguous): 2 x --ringbuf-mb of page table entries. Render
 * children are forks of jsampled and never read the ring, and on a VM each
 * entry a fork copies costs about a microsecond: at 64 MiB, the ring is
 * about half of what a fork costs (docs/performance.md). The ring's are
 * the BPF mappings that were not there before it. */
static void ring_not_inherited(const struct mapping *before, size_t n_before)
{
	struct mapping now[MAX_BPF_MAPPINGS];
	size_t n = bpf_mappings(now, MAX_BPF_MAPPINGS);

	for (size_t j = 0; j < n; j++) {
		bool old = false;

		for (size_t i = 0; i < n_before && !old; i++)
			old = before[i].start == now[j].start;
		if (!old)
			madvise((void *)now[j].start, now[j].end - now[j].start, MADV_DONTFORK);
	}
}

int ringbuf_drain_open(struct ringbuf_drain *d, int map_fd, struct process_table *processes)
{
	struct mapping before[MAX_BPF_MAPPINGS];
	size_t n_before = bpf_mappings(before, MAX_BPF_MAPPINGS);

	d->processes = processes;
	d->records = 0;
	d->bytes = 0;
	d->rb = ring_buffer__new(map_fd, on_record, d, NULL);
	if (!d->rb)
		return -errno;
	ring_not_inherited(before, n_before);
	return 0;
}

void ringbuf_drain_close(struct ringbuf_drain *d)
{
	ring_buffer__free(d->rb);
	d->rb = NULL;
}

int ringbuf_drain_fd(const struct ringbuf_drain *d)
{
	return ring_buffer__epoll_fd(d->rb);
}

int ringbuf_drain_run(struct ringbuf_drain *d, uint32_t max_records)
{
	int r;

	d->now = monotonic_ns(); /* one clock read per drain, not per sample */
	d->processes->wall_offset_ns = wall_offset_ns(); /* follows clock steps */
	d->budget = max_records;
	d->taken = 0;
	r = ring_buffer__consume(d->rb);
	d->more = r == BUDGET_SPENT;
	return d->more ? (int)d->taken : r;
}
