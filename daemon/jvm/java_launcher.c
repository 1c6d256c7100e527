/* SPDX-License-Identifier: GPL-2.0-only */
#include "java_launcher.h"

#include <elf.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "userspace/common/fd_io.h"
#include "userspace/common/u64_map.h"

/* What is read of an executable, at most: its ELF header, up to
 * MAX_PHDRS program headers, the first MAX_DYN_ENTRIES entries of its
 * PT_DYNAMIC segment and NEEDED_NAME_BYTES of each of its first
 * MAX_NEEDED DT_NEEDED names. A few KiB of stack, whatever the file
 * holds (a launcher's own table has ~30 entries and ~5 DT_NEEDED). */
#define MAX_PHDRS 64
#define MAX_DYN_ENTRIES 512
#define MAX_NEEDED 64
#define NEEDED_NAME_BYTES 16
#define CACHE_SLOTS 256
/* Files actually read, per uid and second: one user exec'ing freshly
 * written programs in a loop is cut off here (counted); the answers of
 * programs already seen come from the cache, whatever the rate. */
#define READS_PER_UID_PER_S 100
#define RATE_UIDS_MAX 4096

struct cached {
	dev_t dev;
	ino_t ino;
	off_t size;
	int64_t mtime_ns;
	int answer; /* 0 or 1; slot unused while dev == 0 && ino == 0 */
};

static struct cached cache[CACHE_SLOTS];
/* uid + 1 -> (second << 32) | reads in that second */
static struct u64_map rate;
static bool rate_ready;
static struct java_launcher_counters counters;

/* The file offset of virtual address addr, from the PT_LOAD segments; 0
 * if none holds it in its file bytes. */
static uint64_t file_offset(const Elf64_Phdr *ph, unsigned n, uint64_t addr)
{
	for (unsigned i = 0; i < n; i++)
		if (ph[i].p_type == PT_LOAD && addr >= ph[i].p_vaddr && addr - ph[i].p_vaddr < ph[i].p_filesz)
			return addr - ph[i].p_vaddr + ph[i].p_offset;
	return 0;
}

static bool needs_jvm_library(const char *name)
{
	return strcmp(name, "libjli.so") == 0 || strcmp(name, "libjvm.so") == 0;
}

/* 1 if the DT_NEEDED entries of the file's PT_DYNAMIC name libjli.so or
 * libjvm.so, 0 if not (or a 32-bit or foreign ELF: no JVM the sampler
 * reads), -1 if it is no ELF file. Read with pread, never mapped: a
 * mapped file truncated under us would kill jsampled with SIGBUS. */
static int links_jvm(int fd)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph[MAX_PHDRS];
	Elf64_Dyn dyn[MAX_DYN_ENTRIES];
	uint64_t needed[MAX_NEEDED], strtab = 0, strsz = 0, str_off;
	unsigned nph, ndyn = 0, nneeded = 0;
	const Elf64_Phdr *dynamic = NULL;

	if (!fd_pread_all(fd, eh.e_ident, EI_NIDENT, 0) || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
		return -1;
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB || !fd_pread_all(fd, &eh, sizeof(eh), 0) ||
	    eh.e_phentsize != sizeof(Elf64_Phdr))
		return 0;
	nph = eh.e_phnum < MAX_PHDRS ? eh.e_phnum : MAX_PHDRS;
	if (!nph || !fd_pread_all(fd, ph, nph * sizeof(ph[0]), eh.e_phoff))
		return 0;
	for (unsigned i = 0; i < nph && !dynamic; i++)
		if (ph[i].p_type == PT_DYNAMIC)
			dynamic = &ph[i];
	if (!dynamic)
		return 0; /* static: links nothing */
	ndyn = (unsigned)(dynamic->p_filesz / sizeof(dyn[0]) < MAX_DYN_ENTRIES ? dynamic->p_filesz / sizeof(dyn[0])
									       : MAX_DYN_ENTRIES);
	if (!ndyn || !fd_pread_all(fd, dyn, ndyn * sizeof(dyn[0]), dynamic->p_offset))
		return 0;
	for (unsigned i = 0; i < ndyn && dyn[i].d_tag != DT_NULL; i++) {
		if (dyn[i].d_tag == DT_NEEDED && nneeded < MAX_NEEDED)
			needed[nneeded++] = dyn[i].d_un.d_val;
		else if (dyn[i].d_tag == DT_STRTAB)
			strtab = dyn[i].d_un.d_ptr;
		else if (dyn[i].d_tag == DT_STRSZ)
			strsz = dyn[i].d_un.d_val;
	}
	if (!strtab || !(str_off = file_offset(ph, nph, strtab)))
		return 0;
	for (unsigned i = 0; i < nneeded; i++) {
		char name[NEEDED_NAME_BYTES] = {0};
		uint64_t left = strsz > needed[i] ? strsz - needed[i] : 0;
		size_t len = left < sizeof(name) - 1 ? (size_t)left : sizeof(name) - 1;

		/* "libjvm.so" and its NUL fit; a longer or cut name is no match */
		if (len && fd_pread_all(fd, name, len, str_off + needed[i]) && needs_jvm_library(name))
			return 1;
	}
	return 0;
}

/* Whether uid may have one more file read this second. */
static bool rate_allows(uid_t uid)
{
	struct timespec ts;
	uint64_t now_s, *v, key = (uint64_t)uid + 1;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now_s = (uint64_t)ts.tv_sec;
	if (!rate_ready) {
		u64_map_init(&rate);
		rate_ready = true;
	}
	if (rate.count >= RATE_UIDS_MAX && !u64_map_get(&rate, key)) {
		u64_map_free(&rate); /* a new second for everyone: bounded memory */
		u64_map_init(&rate);
	}
	v = u64_map_get(&rate, key);
	if (!v || (*v >> 32) != now_s) {
		u64_map_put(&rate, key, now_s << 32 | 1);
		return true;
	}
	if ((*v & 0xffffffffu) >= READS_PER_UID_PER_S)
		return false;
	(*v)++;
	return true;
}

static int check_file(int fd, uid_t uid, bool limited)
{
	struct stat st;
	struct cached *slot;
	int64_t mtime_ns;
	int answer;

	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		return -1;
	mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	slot = &cache[(st.st_ino ^ (st.st_dev << 7)) % CACHE_SLOTS];
	if (slot->dev == st.st_dev && slot->ino == st.st_ino && slot->size == st.st_size && slot->mtime_ns == mtime_ns) {
		counters.cached++;
		return slot->answer;
	}
	if (limited && !rate_allows(uid)) {
		counters.rate_limited++;
		return -1;
	}
	counters.read++;
	answer = links_jvm(fd);
	if (answer >= 0)
		*slot = (struct cached){st.st_dev, st.st_ino, st.st_size, mtime_ns, answer};
	return answer;
}

int java_launcher_file(int fd)
{
	return check_file(fd, 0, false);
}

int java_launcher_check(pid_t pid)
{
	char path[64];
	struct stat st;
	int fd, answer;

	/* The owner of /proc/PID is the process's effective uid. */
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (stat(path, &st) != 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -1;
	answer = check_file(fd, st.st_uid, true);
	close(fd);
	return answer;
}

const struct java_launcher_counters *java_launcher_counters(void)
{
	return &counters;
}
