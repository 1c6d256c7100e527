/* SPDX-License-Identifier: GPL-2.0-only */
/* One interval of one host as ClickHouse rows (deploy/clickhouse/schema.sql):
 * each process's profile becomes `samples` rows, one per distinct stack
 * (time, host, service, pid, labels, stack hash, count), and each stack not
 * yet written for that day becomes a `stacks` row (hash, frame names and
 * kinds, root first). Both are JSONEachRow text, ready to POST.
 *
 * A stack's hash is FNV-1a over its kinds and names, so the same stack has
 * the same hash on every host and in every interval: stacks are stored once
 * per day however many hosts and samples use them. A retried or refetched
 * batch produces identical rows, which the tables' ReplacingMergeTree keys
 * collapse: writes are idempotent. */
#ifndef JSAMPLECTL_CLICKHOUSE_ROWS_H
#define JSAMPLECTL_CLICKHOUSE_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "userspace/common/u64_map.h"
#include "userspace/common/vec.h"
#include "userspace/common/wire.h"
#include "process_identity.h"
#include "profile.pb-c.h"

/* Stacks the store already has, by hash: the day (days since the epoch,
 * plus one) they were last written for. Bounded: past max entries it
 * starts over (stacks are then written again, harmlessly). */
struct ch_stacks_written {
	struct u64_map day_of;
	size_t max;
};

struct ch_batch {
	int64_t from_s;
	uint32_t interval_s;
	char host[128];
	char batch_id[192];
	struct wbuf samples; /* JSONEachRow for the samples table */
	struct wbuf stacks;  /* JSONEachRow for the stacks table */
	VEC(uint64_t) new_stacks; /* hashes in `stacks`, remembered once written */
	struct u64_map in_batch;  /* hash -> 1: a stack goes into `stacks` once */
	uint64_t rows, samples_total;
	int oom;
};

void ch_stacks_written_init(struct ch_stacks_written *w, size_t max);
void ch_stacks_written_free(struct ch_stacks_written *w);
/* The batch's stacks are in the store now. */
void ch_stacks_written_add(struct ch_stacks_written *w, const uint64_t *hashes, size_t n, int64_t day);

void ch_batch_init(struct ch_batch *b, const char *host, int64_t from_s, uint32_t interval_s);
void ch_batch_free(struct ch_batch *b);
/* Adds one process's profile of a type ("cpu", "offcpu", "wall") for the
 * batch's interval. labels: pairs of key, value (value "" skipped). -1 if
 * out of memory. */
int ch_batch_add_profile(struct ch_batch *b, const struct ch_stacks_written *written,
			 const Perftools__Profiles__Profile *p, const char *profile_type, const char *service, int pid,
			 const char *const *labels, size_t n_labels);

/* The stack hash of frames (root first) with their kind names. */
uint64_t ch_stack_hash(const char *const *names, const char *const *kinds, size_t n);
/* The kind of a pprof Location's line: "inlined" for all but its last
 * (outermost) line, else from the mapping jsampled named after the kind. */
const char *ch_kind_of_mapping(const char *mapping_filename);

#endif
