/* Native frames from a sample's stack copy with libdwfl; see native_unwind.h.
 *
 * libdwfl's unwinder wants a "process" with threads: dwfl_attach_state is
 * done once per Dwfl with callbacks that serve the one sample being walked
 * (u->cur). Each dwfl_getthread_frames call allocates a fresh initial frame
 * and calls set_initial_registers again (elfutils' dwfl_thread_getframes),
 * so the same Dwfl serves every sample; nothing of a walk outlives it. */
#include "native_unwind.h"
#include "perf_map.h"

#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "userspace/common/fd_io.h"
#include "userspace/common/u64_map.h"

/* libstdc++'s demangler (link with -lstdc++); libdw has none. */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/* Symbol cache bounds: past either, it starts over. */
#define SYM_CACHE_MAX_ENTRIES 32768u
#define SYM_CACHE_MAX_BYTES (4u << 20)
#define SYM_NAME_MAX 1024u
/* DWARF register numbers of x86-64: rax rdx rcx rbx rsi rdi rbp rsp r8-r15 rip. */
#define DWARF_NREGS 17

struct native_unwinder {
	pid_t pid;
	Dwfl *dwfl;
	Dwfl_Callbacks callbacks; /* must outlive dwfl */
	/* The architecture for dwfl_attach_state: an ELF header only. Giving
	 * our own Elf makes libdwfl open (and own) its backend, instead of
	 * borrowing one of a module that a re-report may remove. */
	Elf64_Ehdr arch_ehdr;
	Elf *arch_elf;
	struct native_files files;
	char *maps;
	size_t maps_len;
	/* The vDSO image (it must outlive the Elf that libdwfl makes of it). */
	char *vdso;
	size_t vdso_len;
	/* /tmp/perf-PID.map of a JIT in the process (perf_map.h). */
	struct perf_map perf_map;
	bool unknown_seen; /* a pc in no module since native_unwinder_take_unknown */

	/* The walk in progress. */
	const struct js_sample *cur;
	/* A walk from a caller frame inside the copy (native_unwind_from):
	 * only its pc, sp and rbp are known; its first pc is a return address. */
	bool from_caller;
	uint64_t start_ip, start_sp, start_bp;
	pid_t cur_tid;
	uint64_t stop_lo, stop_hi;
	uint64_t *pcs;
	int max, n, depth;
	bool aborted;    /* frame_cb stopped the walk (code cache or max) */

	/* Per module, its function symbols sorted by address: libdwfl's own
	 * lookup (dwfl_module_addrinfo) scans every symbol, which profiling
	 * showed costing tens of microseconds per new pc in libjvm. */
	struct module_symbols *modsyms;
	size_t nmodsyms;

	/* Symbol cache: pc -> offset of its name in names. */
	struct u64_map sym_index;
	char *names;
	size_t names_len, names_cap;

	struct native_unwind_stats stats;
};

static bool in_range(uint64_t pc, uint64_t lo, uint64_t hi)
{
	return pc >= lo && pc < hi;
}

/* --- Files --- */

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
static int cb_find_elf(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base, char **file_name,
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
static int cb_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
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

/* --- Modules --- */

static int set_userdata_cb(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start, void *arg)
{
	(void)mod;
	(void)name;
	(void)start;
	*userdata = arg;
	return DWARF_CB_OK;
}

struct symbol_range {
	uint64_t lo, hi; /* hi: lo + size, or the next symbol's lo for a size 0 */
	const char *name; /* libelf's string: valid while the module is reported */
	int global; /* rank_of: at one address the highest wins */
};

struct module_symbols {
	Dwfl_Module *mod;
	struct symbol_range *v; /* sorted by lo; NULL: no symbol table */
	size_t n;
};

static void modsyms_clear(struct native_unwinder *u)
{
	for (size_t i = 0; i < u->nmodsyms; i++)
		free(u->modsyms[i].v);
	free(u->modsyms);
	u->modsyms = NULL;
	u->nmodsyms = 0;
}

static void sym_cache_clear(struct native_unwinder *u)
{
	u64_map_free(&u->sym_index);
	u64_map_init(&u->sym_index);
	u->names_len = 0;
	modsyms_clear(u); /* a re-report may have replaced modules */
}

static int by_lo(const void *a, const void *b)
{
	const struct symbol_range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->global - y->global; /* at one address the global one last: it wins */
}

/* Which of several names at one address a frame shows: the exported
 * one, not glibc's internal __GI_ alias or a local or weak one. */
static int rank_of(const GElf_Sym *sym, const char *name)
{
	int bind = GELF_ST_BIND(sym->st_info);

	if (bind == STB_GLOBAL && GELF_ST_VISIBILITY(sym->st_other) == STV_DEFAULT && strncmp(name, "__GI_", 5) != 0)
		return 3;
	return bind == STB_GLOBAL ? 2 : bind == STB_WEAK ? 1 : 0;
}

static void build_symbols(struct module_symbols *m)
{
	int n = dwfl_module_getsymtab(m->mod);
	size_t k = 0;

	if (n <= 0 || !(m->v = malloc((size_t)n * sizeof(*m->v))))
		return;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *name = dwfl_module_getsym_info(m->mod, i, &sym, &addr, NULL, NULL, NULL);

		if (!name || !name[0] || GELF_ST_TYPE(sym.st_info) != STT_FUNC || addr == 0)
			continue;
		m->v[k++] = (struct symbol_range){.lo = addr, .hi = addr + sym.st_size, .name = name,
						  .global = rank_of(&sym, name)};
	}
	m->n = k;
	qsort(m->v, k, sizeof(*m->v), by_lo);
	for (size_t i = 0; i < k; i++)
		if (m->v[i].hi == m->v[i].lo)
			m->v[i].hi = i + 1 < k ? m->v[i + 1].lo : UINT64_MAX;
}

/* pc's function in mod, or NULL (then the module's name stands for it). */
static const char *module_function(struct native_unwinder *u, Dwfl_Module *mod, uint64_t pc)
{
	struct module_symbols *m = NULL;
	size_t lo = 0, hi;

	for (size_t i = 0; i < u->nmodsyms; i++)
		if (u->modsyms[i].mod == mod)
			m = &u->modsyms[i];
	if (!m) {
		struct module_symbols *v = realloc(u->modsyms, (u->nmodsyms + 1) * sizeof(*v));
		if (!v)
			return NULL;
		u->modsyms = v;
		m = &v[u->nmodsyms++];
		*m = (struct module_symbols){.mod = mod};
		build_symbols(m);
	}
	/* the last symbol starting at or below pc */
	hi = m->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->v[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && pc < m->v[lo - 1].hi ? m->v[lo - 1].name : NULL;
}

/* Reports the fed mappings (and the vDSO) as the Dwfl's modules. 0, or -1
 * if there are none. */
static int report_modules(struct native_unwinder *u)
{
	char *line, *end;
	FILE *f;

	if (!u->maps || u->maps_len == 0)
		return -1;
	f = fmemopen(u->maps, u->maps_len, "r");
	if (!f)
		return -1;
	dwfl_report_begin(u->dwfl);
	(void)dwfl_linux_proc_maps_report(u->dwfl, f);
	fclose(f);
	/* dwfl_linux_proc_maps_report skips the vDSO (no auxv): report it
	 * under a name of its own, whose Elf cb_find_elf makes of the image. */
	end = u->maps + u->maps_len;
	for (line = u->maps; line < end;) {
		char *nl = memchr(line, '\n', (size_t)(end - line));
		size_t ll = nl ? (size_t)(nl - line) : (size_t)(end - line);

		if (ll > 7 && memcmp(line + ll - 7, " [vdso]", 7) == 0) {
			unsigned long long lo, hi;
			char name[32];

			if (sscanf(line, "%llx-%llx", &lo, &hi) == 2 && lo < hi) {
				snprintf(name, sizeof(name), "[vdso: %d]", (int)u->pid);
				(void)dwfl_report_module(u->dwfl, name, lo, hi);
			}
			break;
		}
		line += ll + 1;
	}
	dwfl_report_end(u->dwfl, NULL, NULL);
	dwfl_getmodules(u->dwfl, set_userdata_cb, u, 0);
	u->stats.reports++;
	sym_cache_clear(u);
	return 0;
}

/* The module pc lies in, or NULL. dwfl_addrmodule can answer for a pc just
 * past a module's reported end (test_native_unwind: a library dlopened
 * into the gap after libelf's mapping was taken for libelf in about one
 * run in five), which would name the wrong library and never trigger the
 * re-report that finds the new one: its answer is checked against the
 * module's reported range. */
static Dwfl_Module *module_at(struct native_unwinder *u, uint64_t pc)
{
	Dwfl_Module *mod = dwfl_addrmodule(u->dwfl, pc);
	Dwarf_Addr lo = 0, hi = 0;

	if (mod && (!dwfl_module_info(mod, NULL, &lo, &hi, NULL, NULL, NULL, NULL) || pc < lo || pc >= hi))
		return NULL;
	return mod;
}

/* --- Thread state: the sample being walked --- */

static pid_t cb_next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct native_unwinder *u = arg;

	(void)dwfl;
	if (*thread_argp || !u->cur)
		return 0;
	*thread_argp = u;
	return u->cur_tid;
}

static bool cb_get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	struct native_unwinder *u = arg;

	(void)dwfl;
	if (!u->cur || tid != u->cur_tid)
		return false;
	*thread_argp = u;
	return true;
}

static bool copy_read(const struct js_sample *s, uint64_t addr, uint64_t *out)
{
	if (!s || s->stack_len < 8 || addr < s->stack_addr || addr - s->stack_addr > s->stack_len - 8)
		return false;
	memcpy(out, s->stack + (addr - s->stack_addr), 8);
	return true;
}

static bool cb_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	const struct native_unwinder *u = arg;
	uint64_t v;

	(void)dwfl;
	if (!copy_read(u->cur, addr, &v))
		return false;
	*result = v;
	return true;
}

static bool cb_set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
	const struct native_unwinder *u = thread_arg;
	const __u64 *r;
	Dwarf_Word regs[DWARF_NREGS];

	if (!u || !u->cur)
		return false;
	r = u->cur->regs;
	if (u->from_caller) {
		/* Callee-saved registers other than rbp are unknown: the CFI of
		 * the frames met here recovers the CFA from rsp or rbp. */
		memset(regs, 0, sizeof(regs));
		regs[6] = u->start_bp;
		regs[7] = u->start_sp;
		regs[16] = u->start_ip;
		return dwfl_thread_state_registers(thread, 0, DWARF_NREGS, regs);
	}
	regs[0] = r[JS_REG_AX];
	regs[1] = r[JS_REG_DX];
	regs[2] = r[JS_REG_CX];
	regs[3] = r[JS_REG_BX];
	regs[4] = r[JS_REG_SI];
	regs[5] = r[JS_REG_DI];
	regs[6] = r[JS_REG_BP];
	regs[7] = r[JS_REG_SP];
	for (int i = 0; i < 8; i++)
		regs[8 + i] = r[JS_REG_R8 + i];
	regs[16] = r[JS_REG_IP]; /* the return-address column: the pc */
	return dwfl_thread_state_registers(thread, 0, DWARF_NREGS, regs);
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = cb_next_thread,
	.get_thread = cb_get_thread,
	.memory_read = cb_memory_read,
	.set_initial_registers = cb_set_initial_registers,
};

/* --- Setup --- */

static char *copy_of(const void *p, size_t len)
{
	char *c = malloc(len ? len : 1);

	if (c && len)
		memcpy(c, p, len);
	return c;
}

/* One line of /proc/PID/maps: its file's offset, device and inode (all
 * 0 for an anonymous mapping). false if the line does not parse. */
static bool maps_line_file(const char *line, size_t ll, uint64_t *off, uint64_t *dev, uint64_t *ino)
{
	char buf[160];
	unsigned long long o, i;
	unsigned maj, min;

	snprintf(buf, sizeof(buf), "%.*s", (int)(ll < sizeof(buf) - 1 ? ll : sizeof(buf) - 1), line);
	if (sscanf(buf, "%*x-%*x %*s %llx %x:%x %llu", &o, &maj, &min, &i) != 4)
		return false;
	*off = o;
	*dev = (uint64_t)maj << 32 | min;
	*ino = i;
	return true;
}

/* The maps as libdwfl should see them. dwfl_linux_proc_maps_report makes
 * one module of consecutive mappings of one file, its start the first's;
 * a process that maps a library's file itself (libelf's read of libc in
 * jsampled's own tests, placed just below libc's load) would shift that
 * module's bias, and no symbol of the library would match. A mapping at
 * offset 0 whose file's next mapping is also at offset 0 is not part of
 * the load that follows: it is left out. A copy, or NULL. */
static char *loadable_maps(const char *maps, size_t len, size_t *out_len)
{
	char *out = malloc(len ? len : 1);
	const char *line = maps, *end = maps + len;
	size_t n = 0;

	if (!out)
		return NULL;
	while (line < end) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		size_t ll = nl ? (size_t)(nl - line) + 1 : (size_t)(end - line);
		uint64_t off, dev, ino, off2, dev2, ino2;
		bool keep = true;

		if (maps_line_file(line, ll, &off, &dev, &ino) && ino != 0 && off == 0) {
			/* the next file-backed line */
			for (const char *next = line + ll; next < end;) {
				const char *nl2 = memchr(next, '\n', (size_t)(end - next));
				size_t l2 = nl2 ? (size_t)(nl2 - next) + 1 : (size_t)(end - next);

				if (!maps_line_file(next, l2, &off2, &dev2, &ino2))
					break;
				if (ino2 != 0) {
					keep = !(ino2 == ino && dev2 == dev && off2 == 0);
					break;
				}
				next += l2;
			}
		}
		if (keep) {
			memcpy(out + n, line, ll);
			n += ll;
		}
		line += ll;
	}
	*out_len = n;
	return out;
}

struct native_unwinder *native_unwinder_new(pid_t pid, const char *maps, size_t len, const struct native_files *files)
{
	struct native_unwinder *u;

	if (pid <= 0 || !maps || !files || !files->module || len > NATIVE_MAPS_MAX_BYTES)
		return NULL;
	u = calloc(1, sizeof(*u));
	if (!u)
		return NULL;
	u->pid = pid;
	u->files = *files;
	if (!(u->maps = loadable_maps(maps, len, &u->maps_len))) {
		free(u);
		return NULL;
	}
	u64_map_init(&u->sym_index);
	elf_version(EV_CURRENT);
	u->callbacks.find_elf = cb_find_elf;
	u->callbacks.find_debuginfo = cb_find_debuginfo;
	u->callbacks.section_address = dwfl_offline_section_address;
	u->dwfl = dwfl_begin(&u->callbacks);
	if (!u->dwfl || report_modules(u) != 0)
		goto fail;

	memcpy(u->arch_ehdr.e_ident, ELFMAG, SELFMAG);
	u->arch_ehdr.e_ident[EI_CLASS] = ELFCLASS64;
	u->arch_ehdr.e_ident[EI_DATA] = ELFDATA2LSB;
	u->arch_ehdr.e_ident[EI_VERSION] = EV_CURRENT;
	u->arch_ehdr.e_ident[EI_OSABI] = ELFOSABI_NONE;
	u->arch_ehdr.e_type = ET_CORE;
	u->arch_ehdr.e_machine = EM_X86_64;
	u->arch_ehdr.e_version = EV_CURRENT;
	u->arch_ehdr.e_ehsize = sizeof(Elf64_Ehdr);
	u->arch_elf = elf_memory((char *)&u->arch_ehdr, sizeof(u->arch_ehdr));
	if (!u->arch_elf || !dwfl_attach_state(u->dwfl, u->arch_elf, pid, &thread_callbacks, u))
		goto fail;
	return u;
fail:
	native_unwinder_free(u);
	return NULL;
}

void native_unwinder_free(struct native_unwinder *u)
{
	if (!u)
		return;
	if (u->dwfl)
		dwfl_end(u->dwfl);
	if (u->arch_elf)
		elf_end(u->arch_elf);
	u64_map_free(&u->sym_index);
	modsyms_clear(u);
	free(u->names);
	free(u->maps);
	free(u->vdso); /* after dwfl_end: the vDSO's Elf pointed into it */
	perf_map_free(&u->perf_map);
	free(u);
}

int native_unwinder_set_maps(struct native_unwinder *u, const char *maps, size_t len)
{
	char *copy;

	size_t copy_len;

	if (!u || !maps || len > NATIVE_MAPS_MAX_BYTES || !(copy = loadable_maps(maps, len, &copy_len)))
		return -1;
	free(u->maps);
	u->maps = copy;
	u->maps_len = copy_len;
	return report_modules(u);
}

int native_unwinder_set_vdso(struct native_unwinder *u, const void *image, size_t len)
{
	if (!u || len == 0 || len > NATIVE_VDSO_MAX_BYTES)
		return -1;
	if (u->vdso)
		return 0; /* libdwfl may hold an Elf of the first */
	if (!(u->vdso = copy_of(image, len)))
		return -1;
	u->vdso_len = len;
	return 0;
}

int native_unwinder_set_perf_map(struct native_unwinder *u, int fd)
{
	if (!u || perf_map_load(&u->perf_map, fd) != 0)
		return -1;
	sym_cache_clear(u);
	return 0;
}

bool native_unwinder_take_unknown(struct native_unwinder *u)
{
	bool seen = u && u->unknown_seen;

	if (u)
		u->unknown_seen = false;
	return seen;
}

/* --- Unwinding --- */

static int frame_cb(Dwfl_Frame *frame, void *arg)
{
	struct native_unwinder *u = arg;
	Dwarf_Addr pc;
	bool activation = false;
	uint64_t p;

	if (!dwfl_frame_pc(frame, &pc, NULL))
		return DWARF_CB_ABORT;
	/* Checked before asking for the activation flag: that unwinds one
	 * frame further, into the code cache here. */
	p = u->depth == 0 && !u->from_caller ? pc : pc - 1;
	if (in_range(p, u->stop_lo, u->stop_hi) || pc == 0) {
		u->aborted = true;
		return DWARF_CB_ABORT;
	}
	if (u->depth > 0 && dwfl_frame_pc(frame, &pc, &activation) && activation)
		p = pc; /* interrupted by a signal: pc itself */
	u->depth++;
	if (!module_at(u, p))
		u->unknown_seen = true;
	u->pcs[u->n++] = p;
	if (u->n >= u->max) {
		u->aborted = true;
		return DWARF_CB_ABORT;
	}
	return DWARF_CB_OK;
}

/* When libdwfl gets no further than the first frame: the rbp chain
 * (return address at [rbp + 8], next rbp at [rbp]) while it stays in the
 * copy and goes up. */
static void fp_walk(struct native_unwinder *u, const struct js_sample *s)
{
	uint64_t bp = u->start_bp;

	while (u->n < u->max) {
		uint64_t next, ret;

		if (bp > UINT64_MAX - 16 || !copy_read(s, bp, &next) || !copy_read(s, bp + 8, &ret) || ret == 0)
			break;
		if (in_range(ret - 1, u->stop_lo, u->stop_hi))
			break;
		u->pcs[u->n++] = ret - 1;
		if (next <= bp)
			break;
		bp = next;
	}
}

/* One walk from ip/sp/bp (from_caller: a caller's return address, else
 * the interrupted frame with all of s->regs). */
static int unwind_walk(struct native_unwinder *u, const struct js_sample *s, bool from_caller, uint64_t ip,
		       uint64_t sp, uint64_t bp, uint64_t stop_lo, uint64_t stop_hi, uint64_t *pcs, int max)
{
	uint64_t first = from_caller ? ip - 1 : ip;
	int rc;

	if (!u || !s || !pcs || max <= 0)
		return 0;
	u->stats.walks++;
	if (in_range(first, stop_lo, stop_hi))
		return 0;
	if (ip == 0) {
		u->stats.errors++;
		return 0;
	}
	if (!module_at(u, first))
		u->unknown_seen = true;

	u->cur = s;
	u->from_caller = from_caller;
	u->start_ip = ip;
	u->start_sp = sp;
	u->start_bp = bp;
	u->cur_tid = (pid_t)s->tid > 0 ? (pid_t)s->tid : u->pid;
	u->stop_lo = stop_lo;
	u->stop_hi = stop_hi;
	u->pcs = pcs;
	u->max = max;
	u->n = 0;
	u->depth = 0;
	u->aborted = false;
	rc = dwfl_getthread_frames(u->dwfl, u->cur_tid, frame_cb, u);
	u->cur = NULL;

	if (u->n == 0) { /* no initial frame from libdwfl */
		pcs[0] = first;
		u->n = 1;
	}
	/* -1: libdwfl failed (memory outside the copy, no CFI and no frame
	 * pointer, a bad register...); 1 not from us: no pc for a frame. */
	if (rc != 0 && !u->aborted) {
		u->stats.errors++;
		if (u->n == 1)
			fp_walk(u, s);
	}
	u->pcs = NULL;
	u->stats.frames += (uint64_t)u->n;
	return u->n;
}

int native_unwind(struct native_unwinder *u, const struct js_sample *s, uint64_t stop_lo, uint64_t stop_hi,
		  uint64_t *pcs, int max)
{
	if (!s)
		return 0;
	return unwind_walk(u, s, false, s->regs[JS_REG_IP], s->regs[JS_REG_SP], s->regs[JS_REG_BP], stop_lo,
			   stop_hi, pcs, max);
}

int native_unwind_from(struct native_unwinder *u, const struct js_sample *s, uint64_t ret, uint64_t sp,
		       uint64_t bp, uint64_t stop_lo, uint64_t stop_hi, uint64_t *pcs, int max)
{
	return unwind_walk(u, s, true, ret, sp, bp, stop_lo, stop_hi, pcs, max);
}

const struct native_unwind_stats *native_unwind_stats(const struct native_unwinder *u)
{
	static const struct native_unwind_stats none;

	return u ? &u->stats : &none;
}

/* --- Symbols --- */

static bool is_ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* The function's name in a demangled signature: without the parameter list
 * (from the first '(' at nesting depth 0 on: also drops " const" and
 * " [clone .cold]") and without a template function's return type (up to
 * the last space at depth 0). "(anonymous namespace)", "{lambda(int)#1}",
 * "operator()", "operator<<" and "operator new" are kept whole. */
static void name_part(const char *d, const char **startp, size_t *lenp)
{
	size_t start = 0, end = strlen(d), i;
	int depth = 0;
	bool op = false;

	for (i = 0; d[i]; i++) {
		char c = d[i];

		if (depth == 0 && strncmp(d + i, "(anonymous namespace)", 21) == 0) {
			i += 20;
			continue;
		}
		if (c == 'o' && strncmp(d + i, "operator", 8) == 0 && (i == 0 || !is_ident(d[i - 1])) &&
		    !is_ident(d[i + 8])) {
			i += 8;
			if (depth == 0)
				op = true;
			if (d[i] == '(' && d[i + 1] == ')') {
				i++;
				continue;
			}
			while (d[i] && strchr("<>=!+-*/%&|^~[],", d[i]))
				i++;
			if (!d[i])
				break;
			i--;
			continue;
		}
		if (c == '<' || c == '{' || c == '[') {
			depth++;
		} else if (c == '>' || c == '}' || c == ']') {
			if (depth > 0)
				depth--;
		} else if (c == '(') {
			if (depth == 0) {
				end = i;
				break;
			}
			depth++;
		} else if (c == ')') {
			if (depth > 0)
				depth--;
		} else if (c == ' ' && depth == 0 && !op) {
			start = i + 1;
		}
	}
	if (start >= end)
		start = 0;
	*startp = d + start;
	*lenp = end - start;
}

/* Length of a C name without a compiler suffix: "foo.part.0", "foo.isra.0",
 * "foo.constprop.0", "foo.cold", "foo.lto_priv.0" -> "foo". */
static size_t c_name_len(const char *s)
{
	static const char *const suffixes[] = {"isra", "constprop", "part", "cold", "lto_priv", "llvm",
					       "localalias", "clone"};
	size_t len = strlen(s);

	for (size_t i = 1; i < len; i++) {
		if (s[i] != '.')
			continue;
		for (size_t k = 0; k < sizeof(suffixes) / sizeof(suffixes[0]); k++) {
			size_t sl = strlen(suffixes[k]);

			if (strncmp(s + i + 1, suffixes[k], sl) == 0 && !is_ident(s[i + 1 + sl]))
				return i;
		}
	}
	return len;
}

static void copy_name(char *out, size_t outlen, const char *s, size_t n)
{
	if (n >= outlen)
		n = outlen - 1;
	memcpy(out, s, n);
	out[n] = '\0';
}

/* Symbol name -> the name shown, into out (outlen > 0). A symbol version
 * ("__libc_start_main@@GLIBC_2.34") is dropped first. */
static void clean_name(const char *sym, char *out, size_t outlen)
{
	size_t at = strcspn(sym, "@");
	char *unversioned = NULL;
	const char *raw = sym;

	if (sym[at] && at > 0 && (unversioned = strndup(sym, at)))
		raw = unversioned;
	if (raw[0] == '_' && raw[1] == 'Z') {
		int status = -1;
		char *d = __cxa_demangle(raw, NULL, NULL, &status);

		if (d && status == 0 && d[0]) {
			const char *start;
			size_t n;

			name_part(d, &start, &n);
			copy_name(out, outlen, start, n);
			free(d);
			free(unversioned);
			return;
		}
		free(d);
	}
	copy_name(out, outlen, raw, c_name_len(raw));
	free(unversioned);
}

static void describe_pc(struct native_unwinder *u, uint64_t pc, char *out, size_t outlen)
{
	Dwfl_Module *mod = module_at(u, pc);
	const char *sym, *mname, *base;
	Dwarf_Addr start = 0;

	if (!mod) {
		const char *jit = perf_map_find(&u->perf_map, pc);

		if (jit)
			copy_name(out, outlen, jit, strlen(jit));
		else
			copy_name(out, outlen, "[unknown]", 9);
		return;
	}
	sym = module_function(u, mod, pc);
	if (sym && sym[0]) {
		clean_name(sym, out, outlen);
		return;
	}
	mname = dwfl_module_info(mod, NULL, &start, NULL, NULL, NULL, NULL, NULL);
	if (!mname)
		mname = "?";
	if (mname[0] == '[') {
		base = strncmp(mname, "[vdso", 5) == 0 ? "[vdso]" : mname;
	} else {
		base = strrchr(mname, '/');
		base = base ? base + 1 : mname;
	}
	/* No symbol (a stripped static function): the file stands for all
	 * of them, so one frame name per library, not one per pc. */
	snprintf(out, outlen, "%s", base);
}

const char *native_symbolize(struct native_unwinder *u, uint64_t pc, char *buf, size_t len)
{
	char name[SYM_NAME_MAX];
	uint64_t *idx;
	size_t n;

	if (!buf || len == 0)
		return buf;
	if (!u) {
		copy_name(buf, len, "[unknown]", 9);
		return buf;
	}
	idx = pc ? u64_map_get(&u->sym_index, pc) : NULL;
	if (idx) {
		const char *s = u->names + *idx;

		copy_name(buf, len, s, strlen(s));
		return buf;
	}
	if (!module_at(u, pc))
		u->unknown_seen = true; /* dlopen since the last report? */
	describe_pc(u, pc, name, sizeof(name));
	copy_name(buf, len, name, strlen(name));
	if (pc == 0 || strcmp(name, "[unknown]") == 0)
		return buf; /* not cached: a later re-report may find it */

	n = strlen(name) + 1;
	if (u->sym_index.count >= SYM_CACHE_MAX_ENTRIES || u->names_len + n > SYM_CACHE_MAX_BYTES)
		sym_cache_clear(u);
	if (u->names_len + n > u->names_cap) {
		size_t cap = u->names_cap ? u->names_cap : 4096;
		char *nb;

		while (cap < u->names_len + n)
			cap *= 2;
		nb = realloc(u->names, cap);
		if (!nb)
			return buf;
		u->names = nb;
		u->names_cap = cap;
	}
	memcpy(u->names + u->names_len, name, n);
	if (u64_map_put(&u->sym_index, pc, u->names_len) == 0)
		u->names_len += n;
	return buf;
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
