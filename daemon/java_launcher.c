#include "java_launcher.h"

#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A launcher is a small program; anything bigger is not read (and a huge
 * file named by a hostile process costs nothing). */
#define MAX_EXE_BYTES (64u << 20)
#define CACHE_SLOTS 256

struct cached {
	dev_t dev;
	ino_t ino;
	off_t size;
	int64_t mtime_ns;
	int answer; /* 0 or 1; slot unused while dev == 0 && ino == 0 */
};

static struct cached cache[CACHE_SLOTS];

static bool needs_jvm_library(const char *name)
{
	return strcmp(name, "libjli.so") == 0 || strcmp(name, "libjvm.so") == 0;
}

/* Looks through the DT_NEEDED entries of the file's dynamic section. The
 * file is read, not mapped: a mapped file truncated under us would kill
 * jsampled with SIGBUS. */
static int links_jvm(int fd)
{
	Elf *e;
	Elf_Scn *scn = NULL;
	int found = 0;

	if (elf_version(EV_CURRENT) == EV_NONE || !(e = elf_begin(fd, ELF_C_READ, NULL)))
		return -1;
	if (elf_kind(e) != ELF_K_ELF) {
		elf_end(e);
		return -1;
	}
	while (!found && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; !found && sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Dyn dyn;
			const char *name;

			if (!gelf_getdyn(data, (int)i, &dyn) || dyn.d_tag == DT_NULL)
				break;
			if (dyn.d_tag == DT_NEEDED && (name = elf_strptr(e, sh.sh_link, dyn.d_un.d_val)))
				found = needs_jvm_library(name);
		}
	}
	elf_end(e);
	return found;
}

int java_launcher_file(int fd)
{
	struct stat st;
	struct cached *slot;
	int64_t mtime_ns;
	int answer;

	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > (off_t)MAX_EXE_BYTES)
		return -1;
	mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	slot = &cache[(st.st_ino ^ (st.st_dev << 7)) % CACHE_SLOTS];
	if (slot->dev == st.st_dev && slot->ino == st.st_ino && slot->size == st.st_size && slot->mtime_ns == mtime_ns)
		return slot->answer;
	answer = links_jvm(fd);
	if (answer >= 0)
		*slot = (struct cached){st.st_dev, st.st_ino, st.st_size, mtime_ns, answer};
	return answer;
}

int java_launcher_check(pid_t pid)
{
	char path[64];
	int fd, answer;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	answer = java_launcher_file(fd);
	close(fd);
	return answer;
}
