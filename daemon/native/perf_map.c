/* SPDX-License-Identifier: GPL-2.0-only */
#include "perf_map.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NAME_MAX_BYTES 256

static char *read_all(int fd, size_t *lenp)
{
	size_t len = 0, cap = 1u << 16;
	char *buf = malloc(cap + 1);

	if (!buf)
		return NULL;
	for (;;) {
		ssize_t r;

		if (len == cap) {
			char *nb;

			if (cap >= PERF_MAP_MAX_BYTES)
				break; /* the rest is not read */
			cap *= 2;
			if (!(nb = realloc(buf, cap + 1))) {
				free(buf);
				return NULL;
			}
			buf = nb;
		}
		r = read(fd, buf + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			free(buf);
			return NULL;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	buf[len] = 0;
	*lenp = len;
	return buf;
}

static int by_start(const void *a, const void *b)
{
	const struct perf_map_entry *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

/* "START SIZE NAME": 0 and the fields, or -1. */
static int parse_line(char *line, uint64_t *start, uint64_t *size, char **name)
{
	char *end;

	errno = 0;
	*start = strtoull(line, &end, 16);
	if (errno || end == line || *end != ' ')
		return -1;
	line = end + 1;
	*size = strtoull(line, &end, 16);
	if (errno || end == line || *end != ' ' || *size == 0 || *start + *size < *start)
		return -1;
	*name = end + 1;
	return **name ? 0 : -1;
}

int perf_map_load(struct perf_map *m, int fd)
{
	struct perf_map next = {0};
	size_t len, cap = 0, names_len = 0, names_cap = 0;
	char *buf = read_all(fd, &len), *line, *save = NULL;
	uint32_t lineno = 0;

	if (!buf)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		uint64_t start, size;
		char *name;
		size_t nl;

		lineno++;
		if (next.n >= PERF_MAP_MAX_ENTRIES || parse_line(line, &start, &size, &name) != 0) {
			next.skipped++;
			continue;
		}
		nl = strnlen(name, NAME_MAX_BYTES - 1);
		if (next.n == cap) {
			size_t nc = cap ? cap * 2 : 256;
			struct perf_map_entry *nv = realloc(next.v, nc * sizeof(*nv));
			if (!nv)
				goto fail;
			next.v = nv;
			cap = nc;
		}
		if (names_len + nl + 1 > names_cap) {
			size_t nc = names_cap ? names_cap * 2 : 4096;
			char *nn;
			while (nc < names_len + nl + 1)
				nc *= 2;
			if (nc > UINT32_MAX || !(nn = realloc(next.names, nc)))
				goto fail;
			next.names = nn;
			names_cap = nc;
		}
		memcpy(next.names + names_len, name, nl);
		next.names[names_len + nl] = 0;
		next.v[next.n++] = (struct perf_map_entry){
			.start = start, .end = start + size, .name = (uint32_t)names_len, .line = lineno};
		names_len += nl + 1;
	}
	free(buf);
	if (next.n)
		qsort(next.v, next.n, sizeof(next.v[0]), by_start);
	perf_map_free(m);
	*m = next;
	return 0;
fail:
	free(buf);
	perf_map_free(&next);
	return -1;
}

const char *perf_map_find(const struct perf_map *m, uint64_t pc)
{
	const struct perf_map_entry *best = NULL;
	size_t lo = 0, hi = m->n;

	/* The last entry starting at or below pc, then back over the entries
	 * that may still cover it: overlaps are rare and short. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->v[mid].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo, k = 0; i-- > 0 && k < 64; k++) {
		const struct perf_map_entry *e = &m->v[i];
		if (pc < e->end && (!best || e->line > best->line))
			best = e;
	}
	return best ? m->names + best->name : NULL;
}

void perf_map_free(struct perf_map *m)
{
	free(m->v);
	free(m->names);
	*m = (struct perf_map){0};
}
