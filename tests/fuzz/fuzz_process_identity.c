/* SPDX-License-Identifier: GPL-2.0-only */
/* libFuzzer target: who a profiled JVM is for the fleet stores
 * (userspace/jsamplectl/process_identity.c), from what its process
 * controls: its command line (NUL-separated) and its cgroup path (whoever
 * made the cgroup chose its name). The input is command line, a 0xff
 * byte, cgroup text; the service name and labels must come out as a
 * store's names and labels allow. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "userspace/jsamplectl/process_identity.h"

static void check_label(const char *s)
{
	for (; *s; s++)
		if (strchr(",{}=\"\n\\ ", *s))
			abort(); /* would break a series name */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct service_rule rules[] = {
		{.name = "billing", .field = RULE_MAIN, .glob = "com.example.*"},
		{.name = "units", .field = RULE_UNIT, .glob = "*-worker"},
		{.name = "exe", .field = RULE_EXE, .glob = "/opt/*/java"},
		{.name = "cg", .field = RULE_CGROUP, .glob = "*/kubepods*"},
	};
	const uint8_t *sep = memchr(data, 0xff, size);
	size_t cmd_len = sep ? (size_t)(sep - data) : size;
	char *cgroup = malloc(size + 1);
	struct process_identity id;

	if (!cgroup)
		return 0;
	memcpy(cgroup, sep ? sep + 1 : data + size, size - cmd_len - (sep ? 1 : 0));
	cgroup[size - cmd_len - (sep ? 1 : 0)] = 0;
	process_identity_from(&id, (const char *)data, cmd_len, cgroup, "java", rules, 4);
	check_label(id.service);
	check_label(id.unit);
	check_label(id.pod);
	check_label(id.container);
	free(cgroup);
	return 0;
}
