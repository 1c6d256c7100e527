/* SPDX-License-Identifier: GPL-2.0-only */
/* libFuzzer target: a JIT's /tmp/perf-PID.map (daemon/native/perf_map.c), which
 * the process it belongs to writes: arbitrary bytes as the file, then
 * lookups of the pcs it names and of pcs around them. */
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "daemon/native/perf_map.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perf_map m = {0};
	int fd = memfd_create("fuzz-perf-map", MFD_CLOEXEC);

	if (fd < 0)
		return 0;
	if (write(fd, data, size) == (ssize_t)size && lseek(fd, 0, SEEK_SET) == 0 && perf_map_load(&m, fd) == 0) {
		for (size_t i = 0; i < m.n && i < 64; i++) {
			(void)perf_map_find(&m, m.v[i].start);
			(void)perf_map_find(&m, m.v[i].end - 1);
			(void)perf_map_find(&m, m.v[i].end);
		}
		(void)perf_map_find(&m, 0);
		(void)perf_map_find(&m, UINT64_MAX);
	}
	perf_map_free(&m);
	close(fd);
	return 0;
}
