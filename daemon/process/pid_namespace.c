/* SPDX-License-Identifier: GPL-2.0-only */
#include "pid_namespace.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int same_namespace(pid_t pid)
{
	char path[64];
	struct stat a, b;

	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)pid);
	if (stat(path, &a) != 0 || stat("/proc/self/ns/pid", &b) != 0)
		return 1; /* cannot tell: assume the common case */
	return a.st_ino == b.st_ino && a.st_dev == b.st_dev;
}

int pidns_parse_nspid(const char *line, uint32_t *host, uint32_t *inner)
{
	unsigned long h, in = 0;
	const char *p;
	char *end;

	if (strncmp(line, "NSpid:", 6) != 0)
		return -1;
	h = strtoul(line + 6, &end, 10);
	for (p = end; *p && *p != '\n'; p = end) {
		unsigned long v = strtoul(p, &end, 10);
		if (end == p)
			break;
		in = v;
	}
	if (!h || !in || h > UINT32_MAX || in > UINT32_MAX)
		return -1;
	*host = (uint32_t)h;
	*inner = (uint32_t)in;
	return 0;
}

/* Rebuilds the map from the NSpid lines of /proc/<pid>/task/<tid>/status:
 * the first field is the host tid, the last the innermost namespace's. */
static void rescan(struct pidns_map *m, pid_t pid)
{
	char path[64], line[256];
	DIR *d;
	struct dirent *e;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return;
	while ((e = readdir(d))) {
		FILE *f;
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/status", (int)pid, e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			uint32_t host, inner;
			if (strncmp(line, "NSpid:", 6) != 0)
				continue;
			if (pidns_parse_nspid(line, &host, &inner) == 0)
				u64_map_put(&m->host, inner, host);
			break;
		}
		fclose(f);
	}
	closedir(d);
}

uint32_t pidns_host_tid(struct pidns_map *m, pid_t pid, uint32_t ns_tid)
{
	uint64_t *h;

	if (m->same < 0)
		m->same = same_namespace(pid);
	if (m->same)
		return ns_tid;
	h = u64_map_get(&m->host, ns_tid);
	if (!h) {
		rescan(m, pid);
		h = u64_map_get(&m->host, ns_tid);
	}
	return h ? (uint32_t)*h : 0;
}
