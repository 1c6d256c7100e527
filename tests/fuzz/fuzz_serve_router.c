/* SPDX-License-Identifier: GPL-2.0-only */
/* libFuzzer target: `jsamplectl serve`'s router (serve_routes.c) on any
 * URL and query arguments a browser, or a page open in it, can send: the
 * input is url, since, from, until, base, target, separated by NUL bytes.
 * Whatever it decides, a request line for jsampled is one line of
 * printable characters, naming only pids of digits. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "userspace/common/pid_text.h"
#include "userspace/jsamplectl/serve_routes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1), *field[6] = {0};
	struct serve_query q;
	struct serve_route r;
	size_t at = 0;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = 0;
	for (int i = 0; i < 6 && at <= size; i++) {
		field[i] = buf + at;
		at += strlen(buf + at) + 1;
	}
	q = (struct serve_query){.url = field[0], .since = field[1], .from = field[2], .until = field[3],
				 .base = field[4], .target = field[5], .now = 1764000000};
	serve_route(&q, &r);
	for (const char *p = r.request; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
			abort();
	if (r.kind == SERVE_FLAME_PAGE && !pid_from_text(r.pid))
		abort();
	free(buf);
	return 0;
}
