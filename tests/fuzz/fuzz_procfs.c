/* SPDX-License-Identifier: GPL-2.0-only */
/* libFuzzer target: the readers of /proc files other processes shape
 * (status, stat with its free-form comm, maps lines, cgroup, cmdline and
 * environ, NSpid lines), on arbitrary text. */
#include <stdlib.h>
#include <string.h>

#include "daemon/process/pid_namespace.h"
#include "daemon/jvm/procfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proc_status st;
	char *buf = malloc(size + 1), out[256];
	uint32_t host, inner;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = 0;
	procfs_parse_start_time(buf);
	pidns_parse_nspid(buf, &host, &inner);
	procfs_args_hold(buf, size, "-Djsampled.disable=true");
	procfs_env_options_hold(buf, size, "-Djsampled.disable=true");
	procfs_parse_status(buf, 1, &st); /* strtok_r modifies buf: last but two */
	memcpy(buf, data, size);
	procfs_parse_cgroup(buf, out, sizeof(out));
	memcpy(buf, data, size);
	procfs_maps_line_has(buf, "/libjvm.so");
	free(buf);
	return 0;
}
