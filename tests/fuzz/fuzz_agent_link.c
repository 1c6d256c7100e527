/* SPDX-License-Identifier: GPL-2.0-only */
/* libFuzzer target: bytes an agent sends on its socket, through the link's
 * framing (HELLO, BATCH, ERROR, BYE, anything else) into the process's
 * model - every record parser behind it. Nothing may crash, leak or read
 * out of bounds, and the link either keeps going or names why it closes. */
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <unistd.h>

#include "daemon/jvm/agent_link.h"
#include "daemon/process/process.h"

static struct process_table table;

static struct process *on_hello(void *ctx, struct agent_link *l, const char *vm_name, const char *vm_version,
				char *why, size_t whylen)
{
	char vm[160];

	(void)ctx;
	(void)why;
	(void)whylen;
	snprintf(vm, sizeof(vm), "%s %s", vm_name, vm_version);
	return process_create(&table, l->peer.pid, l->peer.uid, vm);
}

static int on_batch(void *ctx, struct agent_link *l, const void *payload, size_t len, struct batch_info *info,
		    char *why, size_t whylen)
{
	(void)ctx;
	(void)why;
	(void)whylen;
	return process_apply_batch(&table, l->proc, payload, len, info, 4u << 20, 1);
}

static const struct agent_link_hooks hooks = {.on_hello = on_hello, .on_batch = on_batch};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct process_limits lim = {.cct_max_nodes = 1000, .held_max_bytes = 1 << 20, .hold_ns = 1000};
	struct agent_link *l = calloc(1, sizeof(*l));

	if (!l || size > (16u << 20)) {
		free(l);
		return 0;
	}
	process_table_init(&table, &lim);
	l->fd = -1; /* what the link writes back is dropped */
	l->peer.pid = getpid();
	l->peer.uid = getuid();
	l->peer.pidfd = pidfd_open(getpid(), 0);
	wbuf_init(&l->out);
	l->in = malloc(size ? size : 1);
	if (l->in) {
		memcpy(l->in, data, size);
		l->in_len = l->in_cap = size;
		if (agent_link_take_frames(l, &hooks) != 0 && !l->why_closed[0])
			abort(); /* a close always has a reason */
	}
	agent_link_free(l);
	process_table_free(&table);
	return 0;
}
