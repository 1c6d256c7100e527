/* SPDX-License-Identifier: GPL-2.0-only */
/* libFuzzer target: what a JVM's attach listener answers to "load" (a
 * process that is not a JVM, or lies, may answer anything). */
#include <stdlib.h>

#include "daemon/jvm/hotspot_attach.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum attach_result r = hotspot_parse_reply((const char *)data, size);

	if (r != ATTACH_OK && r != ATTACH_PROTOCOL && r != ATTACH_LOAD_FAILED && r != ATTACH_AGENT_FAILED &&
	    r != ATTACH_NOT_LIVE)
		abort();
	return 0;
}
