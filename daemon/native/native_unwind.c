/* SPDX-License-Identifier: GPL-2.0-only */
/* Native frames from a sample's stack copy with libdwfl; see native_unwind.h.
 *
 * libdwfl's unwinder wants a "process" with threads: dwfl_attach_state is
 * done once per Dwfl with callbacks that serve the one sample being walked
 * (u->cur). Each dwfl_getthread_frames call allocates a fresh initial frame
 * and calls set_initial_registers again (elfutils' dwfl_thread_getframes),
 * so the same Dwfl serves every sample; nothing of a walk outlives it.
 * The files libdwfl reads are native_files.c's; symbols native_symbols.c's. */
#include "native_unwind.h"

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

#include "native_unwind_internal.h"
#include "userspace/common/maps_line.h"



static bool in_range(uint64_t pc, uint64_t lo, uint64_t hi)
{
	return pc >= lo && pc < hi;
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
			struct maps_line m;
			char name[32];

			if (maps_line_parse(line, ll, &m) && m.lo < m.hi) {
				snprintf(name, sizeof(name), "[vdso: %d]", (int)u->pid);
				(void)dwfl_report_module(u->dwfl, name, m.lo, m.hi);
			}
			break;
		}
		line += ll + 1;
	}
	dwfl_report_end(u->dwfl, NULL, NULL);
	dwfl_getmodules(u->dwfl, set_userdata_cb, u, 0);
	u->stats.reports++;
	native_symbols_clear(u);
	return 0;
}

/* The module pc lies in, or NULL. dwfl_addrmodule can answer for a pc just
 * past a module's reported end (test_native_unwind: a library dlopened
 * into the gap after libelf's mapping was taken for libelf in about one
 * run in five), which would name the wrong library and never trigger the
 * re-report that finds the new one: its answer is checked against the
 * module's reported range. */
Dwfl_Module *native_module_at(struct native_unwinder *u, uint64_t pc)
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
		struct maps_line m, m2;
		bool keep = true;

		if (maps_line_parse(line, nl ? ll - 1 : ll, &m) && m.ino != 0 && m.offset == 0) {
			/* the next file-backed line */
			for (const char *next = line + ll; next < end;) {
				const char *nl2 = memchr(next, '\n', (size_t)(end - next));
				size_t l2 = nl2 ? (size_t)(nl2 - next) + 1 : (size_t)(end - next);

				if (!maps_line_parse(next, nl2 ? l2 - 1 : l2, &m2))
					break;
				if (m2.ino != 0) {
					keep = !(m2.ino == m.ino && m2.major == m.major && m2.minor == m.minor &&
						 m2.offset == 0);
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
	u->callbacks.find_elf = native_cb_find_elf;
	u->callbacks.find_debuginfo = native_cb_find_debuginfo;
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
	native_symbols_free(u);
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
	native_symbols_clear(u);
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
	if (!native_module_at(u, p))
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
	if (!native_module_at(u, first))
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
