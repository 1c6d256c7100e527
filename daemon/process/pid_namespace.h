/* SPDX-License-Identifier: GPL-2.0-only */
/* Thread ids across pid namespaces: an agent in a container reports tids
 * of its own namespace, the BPF program sees the host's. */
#ifndef JSAMPLED_PID_NAMESPACE_H
#define JSAMPLED_PID_NAMESPACE_H

#include <stdint.h>
#include <sys/types.h>

#include "userspace/common/u64_map.h"

struct pidns_map {
	int same;             /* -1 unknown, 1 same namespace as jsampled, 0 other */
	struct u64_map host;  /* namespaced tid -> host tid, when other */
};

/* The map is plain data (a process keeps one); only the lookup below reads
 * /proc. */
static inline void pidns_map_init(struct pidns_map *m)
{
	m->same = -1;
	u64_map_init(&m->host);
}

static inline void pidns_map_free(struct pidns_map *m)
{
	u64_map_free(&m->host);
}

/* The host tid of thread ns_tid of process pid; 0 if it cannot be found
 * (the thread is gone). */
uint32_t pidns_host_tid(struct pidns_map *m, pid_t pid, uint32_t ns_tid);
/* "NSpid:\t<host>\t...\t<innermost>" -> both ends; -1 if malformed. */
int pidns_parse_nspid(const char *line, uint32_t *host, uint32_t *inner);

#endif
