/* SPDX-License-Identifier: GPL-2.0-only */
/* libFuzzer target: what a JVM's attach listener answers to "load" (a
 * process that is not a JVM, or lies, may answer anything), read for its
 * outcome and for the words list shows: one line of printable ASCII, cut
 * to its buffer. */
#include <stdlib.h>
#include <string.h>

#include "daemon/jvm/hotspot_attach.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum attach_result r = hotspot_parse_reply((const char *)data, size);

	if (r != ATTACH_OK && r != ATTACH_PROTOCOL && r != ATTACH_LOAD_FAILED && r != ATTACH_AGENT_FAILED &&
	    r != ATTACH_NOT_LIVE)
		abort();
	for (size_t cap = 1; cap <= ATTACH_REPORT_MAX + 1; cap += ATTACH_REPORT_MAX) {
		char text[ATTACH_REPORT_MAX + 1];
		size_t n = hotspot_reply_text((const char *)data, size, text, cap);

		if (n >= cap || strlen(text) != n)
			abort();
		for (size_t i = 0; i < n; i++)
			if (text[i] < 0x20 || text[i] >= 0x7f)
				abort();
	}
	return 0;
}
