/* SPDX-License-Identifier: GPL-2.0-only */
/* jsampled's model of one JVM, built from its agent's records: the VM
 * layout, the code map over time, and the methods. Applying a BATCH is a
 * pure function of the bytes, so a lying agent can only describe its own
 * process, and malformed records are counted and skipped. */
#ifndef JSAMPLED_JVM_MODEL_H
#define JSAMPLED_JVM_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "userspace/common/u64_map.h"
#include "userspace/common/vec.h"
#include "codemap.h"
#include "userspace/profile/method_table.h"
#include "vm_layout.h"

/* A Java thread as the agent reported it (tid in the JVM's pid namespace). */
struct jvm_thread {
	uint32_t tid;
	bool alive;
	uint64_t java_thread; /* JavaThread* */
	uint64_t stack_base;  /* highest address */
	uint64_t stack_size;
	char name[48];
};

struct jvm_model {
	struct vm_layout layout;
	struct codemap code;
	struct method_table methods;
	struct u64_map threads;                 /* tid -> index in thread_list */
	VEC(struct jvm_thread) thread_list;
	VEC(uint32_t) thread_changes;           /* tids changed since last taken */
	uint64_t records;
	uint64_t malformed_records;
	uint64_t unknown_records;
};

struct batch_info {
	uint64_t since;
	uint64_t upto;
	uint64_t cut_ns;
	bool more;
	uint32_t count;
};

void jvm_model_init(struct jvm_model *m);
void jvm_model_free(struct jvm_model *m);

enum batch_result {
	BATCH_OK = 0,
	BATCH_MALFORMED = -1,  /* the batch's framing is broken */
	BATCH_OVER_LIMIT = -2, /* the model reached max_bytes */
};

/* Applies the payload of a BATCH message, record by record, stopping once
 * the model holds more than max_bytes (0: no limit). Malformed records are
 * counted and skipped; records applied before an error stay. */
int jvm_model_apply_batch(struct jvm_model *m, const void *payload, size_t len, struct batch_info *info,
			  size_t max_bytes);

/* Applies one record (kind + payload); -1 if malformed. */
int jvm_model_apply_record(struct jvm_model *m, uint16_t kind, const void *payload, size_t len);

/* Its memory: code map + method table (shared parts counted whole) +
 * threads. */
size_t jvm_model_bytes(const struct jvm_model *m);
size_t jvm_model_code_bytes(const struct jvm_model *m);
size_t jvm_model_thread_bytes(const struct jvm_model *m);

const struct jvm_thread *jvm_model_thread(const struct jvm_model *m, uint32_t tid);
/* Drops a thread that ended (after its end was passed on). */
void jvm_model_forget_thread(struct jvm_model *m, uint32_t tid);

#endif
