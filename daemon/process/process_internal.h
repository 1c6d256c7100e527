/* SPDX-License-Identifier: GPL-2.0-only */
/* What process.c (the table, the agent's batches) shares with
 * process_samples.c (the per-sample path) only. */
#ifndef JSAMPLED_PROCESS_INTERNAL_H
#define JSAMPLED_PROCESS_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "process.h"

/* Looks at each held sample once: decoded if the model now has what it
 * waited for (or, final or expired, as far as it goes), else held again. */
void process_samples_retry(struct process_table *t, struct process *p, bool final, uint64_t now);
/* What the per-sample path learnt about a thread (its copy sizes, its
 * context, its stack image, its walks) starts over: a new thread took the
 * tid, or the thread ended. */
void process_samples_forget_thread(struct process_table *t, struct process *p, uint32_t host);

#endif
