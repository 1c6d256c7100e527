/* SPDX-License-Identifier: GPL-2.0-only */
/* libFuzzer target: a recording's entries (what follows its magic, as
 * decompressed), compressed with zstd as jsampled writes them and read back
 * to the end: entry headers, samples written whole and as what changed
 * since their thread's last one (REC_SAMPLE_SHARED), truncations. Every
 * payload handed out is read through, so the sanitizers see any bound it
 * breaks. Seeds are entries of a bench recording (one thread's samples,
 * whole and shared). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "daemon/record/recording.h"

static char path[64];

static void remove_file(void)
{
	unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t n = 8 + size, cap = ZSTD_compressBound(n), zn;
	uint8_t *plain = malloc(n), *packed = malloc(cap);
	const uint8_t *payload;
	struct recording *r;
	uint32_t len;
	uint8_t type;
	pid_t pid;
	uint64_t t;
	FILE *f;
	volatile uint8_t sink = 0;

	if (!path[0]) {
		snprintf(path, sizeof(path), "/tmp/fuzz_recording.%d", (int)getpid());
		atexit(remove_file);
	}
	if (!plain || !packed)
		abort();
	memcpy(plain, RECORDING_MAGIC, 8);
	if (size)
		memcpy(plain + 8, data, size);
	zn = ZSTD_compress(packed, cap, plain, n, 1);
	if (ZSTD_isError(zn) || !(f = fopen(path, "wb")) || fwrite(packed, 1, zn, f) != zn || fclose(f) != 0)
		abort();
	if ((r = recording_open(path))) {
		while (recording_next(r, &type, &pid, &t, &payload, &len) == 1) {
			for (uint32_t i = 0; i < len; i++)
				sink ^= payload[i];
			/* Entries written as what changed come back whole. */
			if (type == REC_SAMPLE_SHARED)
				abort();
		}
		recording_close(r);
	}
	free(plain);
	free(packed);
	(void)sink;
	return 0;
}
