/* SPDX-License-Identifier: GPL-2.0-only */
/* libFuzzer target: one agent record of any kind (the first byte picks the
 * kind), then the same bytes as a whole BATCH payload, into one JVM model
 * that lives across inputs (as a connection's does), under a size limit.
 * EVENTS records go into a process's event trees, as process.c puts them. */
#include <stdlib.h>
#include <string.h>

#include "daemon/decode/jvm_model.h"
#include "daemon/process/event_profiles.h"
#include "userspace/common/agent_protocol.h"

static struct jvm_model model;
static struct event_profiles events;
static struct name_refs names;
static int ready;
static const struct event_caps caps = {.max_nodes = 20000, .max_bytes = 4u << 20};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct batch_info info;

	if (!ready) {
		jvm_model_init(&model);
		name_refs_init(&names);
		ready = 1;
	}
	if (size == 0)
		return 0;
	jvm_model_apply_record(&model, (uint16_t)(data[0] % 10), data + 1, size - 1);
	if (data[0] % 10 == JS_REC_EVENTS)
		event_profiles_apply(&events, &caps, &model.methods, &names, 0, data + 1, size - 1);
	jvm_model_apply_batch(&model, data, size, &info, 8u << 20);
	/* The limit holds: a fresh model when it is reached. */
	if (jvm_model_bytes(&model) > (16u << 20)) {
		jvm_model_free(&model);
		jvm_model_init(&model);
	}
	if (event_profiles_bytes(&events) > (16u << 20))
		event_profiles_free(&events);
	/* Lookups on whatever was built. */
	if (size >= 9) {
		uint64_t pc;
		memcpy(&pc, data + 1, 8);
		codemap_find(&model.code, pc, data[0]);
		method_table_by_ptr(&model.methods, pc);
	}
	return 0;
}
