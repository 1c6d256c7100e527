/* SPDX-License-Identifier: GPL-2.0-only */
/* The files libdwfl reads for an unwinder (native_unwind_internal.h):
 * opened through the provider, checked against size limits before libelf
 * sees them, shared between processes that map the same file. */
#include "native_unwind_internal.h"

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "userspace/common/fd_io.h"

/* Reopens an O_PATH descriptor for reading if it is a regular file (no
 * open() ever touches a FIFO or a device); closes it. -1 if not. */
static int reopen_regular(int pfd)
{
	struct stat st;
	char self[40];
	int fd = -1;

	if (pfd < 0)
		return -1;
	if (fstat(pfd, &st) == 0 && S_ISREG(st.st_mode)) {
		snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
		fd = open(self, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	}
	close(pfd);
	return fd;
}

static int host_module(void *ctx, const char *path)
{
	(void)ctx;
	return path[0] == '/' ? reopen_regular(open(path, O_PATH | O_CLOEXEC)) : -1;
}

static void build_id_path(char *path, size_t cap, const unsigned char *id, int id_len)
{
	int off = snprintf(path, cap, "/usr/lib/debug/.build-id/%02x/", id[0]);

	for (int i = 1; i < id_len && off > 0 && (size_t)off < cap; i++)
		off += snprintf(path + off, cap - (size_t)off, "%02x", id[i]);
	if (off > 0 && (size_t)off < cap)
		snprintf(path + off, cap - (size_t)off, ".debug");
}

static int host_debug(void *ctx, const unsigned char *id, int id_len, int pass)
{
	char path[64 + 2 * 64];

	(void)ctx;
	if (pass != 0 || id_len < 3 || id_len > 64)
		return -1; /* the process's root is this machine's */
	build_id_path(path, sizeof(path), id, id_len);
	return reopen_regular(open(path, O_PATH | O_CLOEXEC));
}

const struct native_files native_files_host = {.module = host_module, .debug = host_debug};

/* An ELF file for libdwfl, if it is one within the limits; closes fd if
 * not. */
static int usable(struct native_unwinder *u, int fd)
{
	char why[128];

	if (fd < 0)
		return -1;
	if (native_elf_within_limits(fd, why, sizeof(why)) != 0) {
		u->stats.files_refused++;
		close(fd);
		return -1;
	}
	return fd;
}

/* Files mapped by several processes (every JVM's libjvm.so, libc...) are
 * read once: one Elf per file (device and inode), mapped read-only, shared
 * by every unwinder's module of it through libelf's reference count. (As
 * libdwfl opens a descriptor by itself, each process would map each of
 * its files privately and writable: 50 JVMs held 1.5 GB of such mappings,
 * which count against the helper's data limit.) */
#define ELF_CACHE_MAX 4096u

struct cached_elf {
	uint64_t dev, ino;
	int fd;
	Elf *elf; /* our reference */
};

static struct {
	struct cached_elf *v;
	size_t n, cap;
	struct u64_map index; /* hash of dev, ino -> position + 1 */
	bool ready;
} elf_cache;

static uint64_t file_key(uint64_t dev, uint64_t ino)
{
	return (dev * 0x9e3779b97f4a7c15ull ^ ino) | 1;
}

static void elf_cache_drop_oldest(void)
{
	struct cached_elf *e = &elf_cache.v[0];

	elf_end(e->elf);
	close(e->fd);
	u64_map_del(&elf_cache.index, file_key(e->dev, e->ino));
	memmove(&elf_cache.v[0], &elf_cache.v[1], (elf_cache.n - 1) * sizeof(elf_cache.v[0]));
	elf_cache.n--;
	for (size_t i = 0; i < elf_cache.n; i++)
		u64_map_put(&elf_cache.index, file_key(elf_cache.v[i].dev, elf_cache.v[i].ino), i + 1);
}

/* A new reference to the shared Elf of the file open on fd (taken: kept
 * in the cache or closed), or NULL. */
static Elf *shared_elf(int fd)
{
	struct stat st;
	uint64_t key, *at;
	Elf *e;

	if (!elf_cache.ready) {
		u64_map_init(&elf_cache.index);
		elf_cache.ready = true;
	}
	if (fstat(fd, &st) != 0) {
		close(fd);
		return NULL;
	}
	key = file_key(st.st_dev, st.st_ino);
	at = u64_map_get(&elf_cache.index, key);
	if (at && elf_cache.v[*at - 1].dev == st.st_dev && elf_cache.v[*at - 1].ino == st.st_ino) {
		close(fd);
		return elf_begin(-1, ELF_C_READ_MMAP, elf_cache.v[*at - 1].elf);
	}
	if (!(e = elf_begin(fd, ELF_C_READ_MMAP, NULL))) {
		close(fd);
		return NULL;
	}
	if (elf_cache.n == ELF_CACHE_MAX)
		elf_cache_drop_oldest();
	if (elf_cache.n == elf_cache.cap) {
		size_t cap = elf_cache.cap ? elf_cache.cap * 2 : 64;
		struct cached_elf *v = realloc(elf_cache.v, cap * sizeof(*v));

		if (!v) {
			/* Not shared, not cached: this module's own. */
			return e;
		}
		elf_cache.v = v;
		elf_cache.cap = cap;
	}
	elf_cache.v[elf_cache.n] = (struct cached_elf){.dev = st.st_dev, .ino = st.st_ino, .fd = fd, .elf = e};
	if (u64_map_put(&elf_cache.index, key, elf_cache.n + 1) != 0)
		return e; /* (the fd then stays with the cache entry, unreachable: harmless) */
	elf_cache.n++;
	return elf_begin(-1, ELF_C_READ_MMAP, e);
}

void native_files_forget(void)
{
	while (elf_cache.n)
		elf_cache_drop_oldest();
	free(elf_cache.v);
	u64_map_free(&elf_cache.index);
	memset(&elf_cache, 0, sizeof(elf_cache));
}

/* Dwfl_Callbacks.find_elf: the module's file from the provider. The vDSO
 * ("[vdso: PID]", reported below) comes from its image; a file deleted
 * since it was mapped is not looked for anywhere (its frames are named
 * after it). */
int native_cb_find_elf(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base, char **file_name,
		       Elf **elfp)
{
	struct native_unwinder *u = userdata ? *userdata : NULL;
	size_t len;
	int fd;

	(void)mod;
	(void)base;
	if (!u || !name)
		return -1;
	len = strlen(name);
	if (strncmp(name, "[vdso: ", 7) == 0) {
		/* As dwfl_linux_proc_find_elf hands over a live image: no
		 * file, the Elf in *elfp. */
		if (u->vdso)
			*elfp = elf_memory(u->vdso, u->vdso_len);
		return -1;
	}
	if (name[0] != '/' || (len > 10 && strcmp(name + len - 10, " (deleted)") == 0))
		return -1;
	fd = usable(u, u->files.module(u->files.ctx, name));
	if (fd < 0)
		return -1;
	/* No file for libdwfl to open: the shared Elf in *elfp. */
	if (!(*file_name = strdup(name))) {
		close(fd);
		return -1;
	}
	if (!(*elfp = shared_elf(fd))) {
		free(*file_name);
		*file_name = NULL;
	}
	return -1;
}

static bool build_id_matches(int fd, const unsigned char *id, int id_len)
{
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	const void *bits;
	ssize_t n;
	bool ok;

	if (!e)
		return false;
	n = dwelf_elf_gnu_build_id(e, &bits);
	ok = n == id_len && memcmp(bits, id, (size_t)n) == 0;
	elf_end(e);
	return ok;
}

/* Dwfl_Callbacks.find_debuginfo: by build ID only, in the process's
 * /usr/lib/debug/.build-id, then ours; the file is used only if its build
 * ID matches. No debuginfod, no search by name. A dwz alternate file (its
 * link is a path) is not looked for: CFI and symbols do not need it. */
int native_cb_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			     const char *file_name, const char *debuglink, GElf_Word crc, char **debuginfo_file_name)
{
	struct native_unwinder *u = userdata ? *userdata : NULL;
	const unsigned char *id;
	GElf_Addr vaddr;
	char path[64 + 2 * 64];
	int id_len;

	(void)modname;
	(void)base;
	(void)file_name;
	(void)crc;
	if (!u || !u->files.debug || (debuglink && strchr(debuglink, '/')))
		return -1;
	id_len = dwfl_module_build_id(mod, &id, &vaddr);
	if (id_len < 3 || id_len > 64)
		return -1;
	build_id_path(path, sizeof(path), id, id_len);
	for (int pass = 0; pass < 2; pass++) {
		int fd = usable(u, u->files.debug(u->files.ctx, id, id_len, pass));

		if (fd < 0)
			continue;
		if (build_id_matches(fd, id, id_len)) {
			*debuginfo_file_name = strdup(path);
			return fd;
		}
		close(fd);
	}
	return -1;
}

/* --- Limits on the files libdw may read --- */

static int too_much(char *why, size_t whylen, const char *what, uint64_t value)
{
	snprintf(why, whylen, "%s (%llu)", what, (unsigned long long)value);
	return -1;
}

/* A compressed section's expanded size: SHF_COMPRESSED's header, or the
 * ".zdebug" form ("ZLIB" and a big-endian size). 0 if it is neither. */
static uint64_t expanded_size(int fd, const Elf64_Shdr *sh, const char *name)
{
	unsigned char z[12];

	if (sh->sh_flags & SHF_COMPRESSED) {
		Elf64_Chdr ch;

		return fd_pread_all(fd, &ch, sizeof(ch), sh->sh_offset) ? ch.ch_size : UINT64_MAX;
	}
	if (strncmp(name, ".zdebug", 7) != 0)
		return 0;
	if (!fd_pread_all(fd, z, sizeof(z), sh->sh_offset) || memcmp(z, "ZLIB", 4) != 0)
		return 0;
	uint64_t v = 0;
	for (int i = 4; i < 12; i++)
		v = v << 8 | z[i];
	return v;
}

int native_elf_within_limits(int fd, char *why, size_t whylen)
{
	Elf64_Ehdr eh;
	Elf64_Shdr sh[64], strtab_sh;
	struct stat st;
	uint64_t nsec, symbols = 0;
	bool have_names;

	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		return too_much(why, whylen, "not a regular file", 0);
	if ((uint64_t)st.st_size > NATIVE_FILE_MAX_BYTES)
		return too_much(why, whylen, "file too large", (uint64_t)st.st_size);
	if (!fd_pread_all(fd, &eh, sizeof(eh), 0) || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
		return too_much(why, whylen, "not a 64-bit little-endian ELF file", 0);
	if (eh.e_shoff == 0)
		return 0; /* no sections: nothing for libdw to expand */
	if (eh.e_shentsize != sizeof(Elf64_Shdr))
		return too_much(why, whylen, "odd section header size", eh.e_shentsize);
	nsec = eh.e_shnum;
	if (nsec == 0 || eh.e_shstrndx == SHN_XINDEX) { /* the counts live in section 0 */
		if (!fd_pread_all(fd, sh, sizeof(sh[0]), eh.e_shoff))
			return too_much(why, whylen, "unreadable section 0", 0);
		if (nsec == 0)
			nsec = sh[0].sh_size;
	}
	if (nsec > NATIVE_MAX_SECTIONS)
		return too_much(why, whylen, "too many sections", nsec);
	if (eh.e_shoff + nsec * sizeof(Elf64_Shdr) > (uint64_t)st.st_size)
		return too_much(why, whylen, "section headers past the end of the file", nsec);
	have_names = eh.e_shstrndx != SHN_UNDEF && eh.e_shstrndx < nsec &&
		     fd_pread_all(fd, &strtab_sh, sizeof(strtab_sh), eh.e_shoff + eh.e_shstrndx * sizeof(Elf64_Shdr));
	for (uint64_t i = 0; i < nsec; i += 64) {
		unsigned n = nsec - i < 64 ? (unsigned)(nsec - i) : 64;

		if (!fd_pread_all(fd, sh, n * sizeof(sh[0]), eh.e_shoff + i * sizeof(Elf64_Shdr)))
			return too_much(why, whylen, "unreadable section headers", i);
		for (unsigned k = 0; k < n; k++) {
			char name[8] = "";
			uint64_t big;

			if (sh[k].sh_type == SHT_NOBITS)
				continue;
			if (sh[k].sh_type == SHT_SYMTAB || sh[k].sh_type == SHT_DYNSYM) {
				symbols += sh[k].sh_size / sizeof(Elf64_Sym);
				if (symbols > NATIVE_MAX_SYMBOLS)
					return too_much(why, whylen, "too many symbols", symbols);
			}
			if (have_names && strtab_sh.sh_size > sh[k].sh_name)
				(void)fd_pread_all(fd, name, sizeof(name) - 1, strtab_sh.sh_offset + sh[k].sh_name);
			big = expanded_size(fd, &sh[k], name);
			if (big > NATIVE_MAX_DECOMPRESSED ||
			    big > (uint64_t)NATIVE_MAX_EXPANSION * sh[k].sh_size + (1u << 20))
				return too_much(why, whylen, "a compressed section expands too far", big);
		}
	}
	return 0;
}
