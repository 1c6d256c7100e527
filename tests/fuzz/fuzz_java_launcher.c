/* libFuzzer target: the Java-launcher check reads the ELF file of every
 * program any user execs (as root), so arbitrary bytes as that file. Each
 * input goes to a fresh memfd (a new inode: the per-file cache does not
 * answer from an earlier input). */
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../daemon/java_launcher.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz-exe", MFD_CLOEXEC);

	if (fd < 0)
		return 0;
	if (write(fd, data, size) == (ssize_t)size)
		java_launcher_file(fd);
	close(fd);
	return 0;
}
