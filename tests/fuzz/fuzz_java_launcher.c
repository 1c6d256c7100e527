/* SPDX-License-Identifier: GPL-2.0-only */
/* libFuzzer target: the Java-launcher check reads the ELF file of every
 * program any user execs (as root), so arbitrary bytes as that file; an
 * input starting with 'S' is a sparse file instead: (u32 offset, u8
 * length, bytes) chunks written at offsets up to 4 GiB, the rest holes,
 * as a crafted program's headers can point anywhere in it. Each input
 * goes to a fresh memfd (a new inode: the per-file cache does not answer
 * from an earlier input). */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "daemon/jvm/java_launcher.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz-exe", MFD_CLOEXEC);
	bool ok = true;

	if (fd < 0)
		return 0;
	if (size && data[0] == 'S') {
		for (size_t i = 1; ok && i + 5 <= size;) {
			uint32_t off;
			size_t len = data[i + 4];

			memcpy(&off, data + i, 4);
			i += 5;
			if (len > size - i)
				len = size - i;
			ok = pwrite(fd, data + i, len, (off_t)off) == (ssize_t)len;
			i += len;
		}
	} else {
		ok = write(fd, data, size) == (ssize_t)size;
	}
	if (ok)
		java_launcher_file(fd);
	close(fd);
	return 0;
}
