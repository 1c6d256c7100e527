/* SPDX-License-Identifier: GPL-2.0-only */
/* libFuzzer target: the exporter's reader of the profiles it pushes
 * (userspace/jsamplectl/pprof_read.c): arbitrary bytes, gzipped or not. */
#include <stdint.h>

#include "userspace/jsamplectl/pprof_read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Perftools__Profiles__Profile *p = pprof_read(data, size);

	if (p) {
		(void)pprof_sample_count(p);
		perftools__profiles__profile__free_unpacked(p, NULL);
	}
	return 0;
}
