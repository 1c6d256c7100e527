/* jsampled's model of one JVM, built from its agent's records: the VM
 * layout, the code map over time, and the methods. Applying a BATCH is a
 * pure function of the bytes, so a lying agent can only describe its own
 * process, and malformed records are counted and skipped. */
#ifndef JSAMPLED_JVM_MODEL_H
#define JSAMPLED_JVM_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "codemap.h"
#include "method_table.h"
#include "vm_layout.h"

struct jvm_model {
	struct vm_layout layout;
	struct codemap code;
	struct method_table methods;
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

/* Applies the payload of a BATCH message. Returns 0, or -1 if the batch
 * header itself is malformed (records already applied stay). */
int jvm_model_apply_batch(struct jvm_model *m, const void *payload, size_t len,
			  struct batch_info *info);

/* Applies one record (kind + payload); -1 if malformed. */
int jvm_model_apply_record(struct jvm_model *m, uint16_t kind, const void *payload, size_t len);

size_t jvm_model_bytes(const struct jvm_model *m);

#endif
