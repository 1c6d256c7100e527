/* SPDX-License-Identifier: GPL-2.0-only */
#include "memory_stats.h"

#include <malloc.h>
#include <stdio.h>
#include <string.h>

#include "daemon.h"
#include "daemon/jvm/agent_link.h"
#include "userspace/profile/kernel_symbols.h"
#include "userspace/profile/shared_blobs.h"

/* Resident bytes by kind of mapping, from /proc/self/smaps. */
struct rss_kinds {
	size_t bpf_maps; /* the ring buffer and the maps mapped into jsampled */
	size_t files;    /* its program and libraries */
	size_t anon;     /* its heap, stacks and anonymous mappings */
};

static void read_rss(struct rss_kinds *r)
{
	char line[512];
	size_t *kind = &r->anon;
	FILE *f = fopen("/proc/self/smaps", "re");

	memset(r, 0, sizeof(*r));
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long inode, kib;
		int name = 0;

		if (sscanf(line, "%*x-%*x %*s %*s %*s %lu %n", &inode, &name) == 1 && name) {
			kind = strncmp(line + name, "anon_inode:bpf-map", 18) == 0 ? &r->bpf_maps
			       : inode                                          ? &r->files
										: &r->anon;
		} else if (sscanf(line, "Rss: %lu kB", &kib) == 1) {
			*kind += (size_t)kib << 10;
		}
	}
	fclose(f);
}

size_t memory_stats(const struct daemon *d, struct stat_field *f, size_t max)
{
	struct process_memory sum = {0};
	size_t links = 0, counted, unaccounted;
	struct rss_kinds rss;
	struct mallinfo2 mi = mallinfo2();
	struct shared_blobs_stats shared = shared_blobs_stats();
	size_t n = 0;

	for (size_t i = 0; i < d->processes.all.n; i++) {
		const struct process *p = d->processes.all.v[i];
		struct process_memory m;

		process_memory(p, &m);
		process_memory_add(&sum, &m);
		if (p->link)
			links += p->link->in_cap + p->link->out.cap;
	}
	read_rss(&rss);
	/* What jsampled's own structures hold on the heap: the shared names
	 * once, as they are, not as each process is charged them. */
	counted = sum.record + sum.code_map + sum.methods + shared.bytes + sum.threads + sum.trees + sum.event_trees +
		  sum.held + sum.images + sum.native + links + kernel_symbols_bytes();
	/* The rest of the anonymous memory: what malloc keeps free is its
	 * own overhead; what then remains nothing here counts. */
	unaccounted = rss.anon > counted + mi.fordblks ? rss.anon - counted - mi.fordblks : 0;

	const struct stat_field all[] = {
		{"ring_buffer_bytes", d->opt.ringbuf_bytes},
		/* The ring's data pages count twice: libbpf maps them twice
		 * in a row, so that a record that wraps reads straight. */
		{"bpf_maps_rss_bytes", rss.bpf_maps},
		{"files_rss_bytes", rss.files},
		{"anon_rss_bytes", rss.anon},
		{"processes_bytes", sum.record},
		{"code_maps_bytes", sum.code_map},
		{"methods_bytes", sum.methods},
		{"shared_names_bytes", shared.bytes},
		{"shared_names_blobs", shared.blobs},
		/* What the processes are charged for them, each as if alone. */
		{"shared_names_charged_bytes", sum.shared},
		{"threads_bytes", sum.threads},
		{"trees_bytes", sum.trees},
		{"event_trees_bytes", sum.event_trees},
		{"held_bytes", sum.held},
		{"stack_images_bytes", sum.images},
		{"native_bytes", sum.native},
		{"agent_buffers_bytes", links},
		{"kernel_names_bytes", kernel_symbols_bytes()},
		{"malloc_free_bytes", mi.fordblks},
		{"unaccounted_bytes", unaccounted},
	};
	for (; n < max && n < sizeof(all) / sizeof(all[0]); n++)
		f[n] = all[n];
	return n;
}
