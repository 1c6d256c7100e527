/* SPDX-License-Identifier: GPL-2.0-only */
/* libFuzzer target: a request line on the query socket, answered as root
 * and as another user, against a daemon with one process and a small tree.
 * Every answer starts with OK or ERROR. */
#include <stdlib.h>
#include <string.h>

#include "daemon/service/daemon.h"
#include "daemon/service/query_server.h"

static struct daemon d;

static void setup(void)
{
	struct process_limits lim = {.cct_max_nodes = 100, .held_max_bytes = 1 << 16, .hold_ns = 1};
	struct trace_frame f[] = {{1, FRAME_INTERPRETED, 0, 3}, {2, FRAME_COMPILED, 0, -1}};
	struct process *p;

	process_table_init(&d.processes, &lim);
	p = process_create(&d.processes, 4242, 1000, "vm");
	if (p)
		cct_add(&p->cct, f, 2, 3);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char line[QUERY_MAX_REQUEST + 1];
	struct wbuf out;

	if (!d.processes.all.v)
		setup();
	if (size > QUERY_MAX_REQUEST)
		size = QUERY_MAX_REQUEST;
	memcpy(line, data, size);
	line[size] = 0;
	wbuf_init(&out);
	for (uid_t uid = 0; uid <= 1000; uid += 1000) {
		wbuf_reset(&out);
		query_answer(&d, &(struct viewer){.uid = uid, .conn_fd = -1}, line, &out);
		if (out.len < 3 || (memcmp(out.data, "OK\n", 3) != 0 && memcmp(out.data, "ERROR ", 6) != 0))
			abort();
	}
	wbuf_free(&out);
	return 0;
}
