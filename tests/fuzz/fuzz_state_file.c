/* SPDX-License-Identifier: GPL-2.0-only */
/* libFuzzer target: the saved-profiles decoder. Inputs whose first byte is
 * odd get a correct CRC appended, so the fuzzer gets past the checksum to
 * the parser; the others test the checksum itself. Decoding is all or
 * nothing: on failure nothing is added. */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "daemon/service/state_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct process_limits lim = {.cct_max_nodes = 64, .held_max_bytes = 1 << 16, .hold_ns = 1};
	struct process_table t;
	uint8_t *buf;
	char why[256];
	size_t n = size;
	int r;

	if (size == 0 || size > (1u << 20))
		return 0;
	buf = malloc(size + 4);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	if (data[0] & 1) {
		uint32_t crc = (uint32_t)crc32(0, buf + 1, (uInt)(size - 1));
		memmove(buf, buf + 1, size - 1);
		memcpy(buf + size - 1, &crc, 4);
		n = size + 3;
	}
	process_table_init(&t, &lim);
	r = state_decode(&t, buf, n, 1000000000ull, 16, why, sizeof(why));
	if ((r < 0 && t.all.n != 0) || (r >= 0 && (size_t)r != t.all.n) || t.all.n > 16)
		abort();
	process_table_free(&t);
	free(buf);
	return 0;
}
