/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * /tmp/perf-PID.map: the symbol file JITs write for perf (node
 * --perf-basic-prof, LuaJIT, .NET, perf-map-agent...), one "START SIZE
 * NAME" line per piece of generated code, START and SIZE in hex. The
 * native unwinder names pcs in anonymous executable memory from it.
 *
 * Loaded whole from a descriptor (the caller opens it inside the process's
 * root), sorted by start; when two entries overlap the later line wins
 * (a JIT that reuses memory appends the new code's line). Bounded: at most
 * PERF_MAP_MAX_BYTES are read and PERF_MAP_MAX_ENTRIES kept, longer names
 * are cut; malformed lines and lines past the cap are skipped and counted.
 */
#ifndef JSAMPLED_PERF_MAP_H
#define JSAMPLED_PERF_MAP_H

#include <stddef.h>
#include <stdint.h>

#define PERF_MAP_MAX_BYTES (32u << 20)
#define PERF_MAP_MAX_ENTRIES (1u << 20) /* past it lines are counted as skipped */

struct perf_map_entry {
	uint64_t start, end;
	uint32_t name; /* offset in names */
	uint32_t line; /* line number: the later line wins an overlap */
};

struct perf_map {
	struct perf_map_entry *v;
	size_t n;
	char *names;
	uint64_t skipped; /* malformed lines */
};

/* Replaces m's contents with the map read from fd (not closed). 0, or -1
 * (m unchanged) if it cannot be read. */
int perf_map_load(struct perf_map *m, int fd);
/* The name of the entry covering pc, or NULL. */
const char *perf_map_find(const struct perf_map *m, uint64_t pc);
void perf_map_free(struct perf_map *m);

#endif
