/* SPDX-License-Identifier: GPL-2.0-only */
/* libFuzzer target: one agent record of any kind (the first byte picks the
 * kind), then the same bytes as a whole BATCH payload, into one JVM model
 * that lives across inputs (as a connection's does), under a size limit. */
#include <stdlib.h>
#include <string.h>

#include "daemon/decode/jvm_model.h"

static struct jvm_model model;
static int ready;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct batch_info info;

	if (!ready) {
		jvm_model_init(&model);
		ready = 1;
	}
	if (size == 0)
		return 0;
	jvm_model_apply_record(&model, (uint16_t)(data[0] % 10), data + 1, size - 1);
	jvm_model_apply_batch(&model, data, size, &info, 8u << 20);
	/* The limit holds: a fresh model when it is reached. */
	if (jvm_model_bytes(&model) > (16u << 20)) {
		jvm_model_free(&model);
		jvm_model_init(&model);
	}
	/* Lookups on whatever was built. */
	if (size >= 9) {
		uint64_t pc;
		memcpy(&pc, data + 1, 8);
		codemap_find(&model.code, pc, data[0]);
		method_table_by_ptr(&model.methods, pc);
	}
	return 0;
}
