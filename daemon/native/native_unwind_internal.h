/* SPDX-License-Identifier: GPL-2.0-only */
/* What the parts of the native unwinder share (native_unwind.c: libdwfl
 * glue and walks; native_files.c: the files it reads; native_symbols.c:
 * symbolisation), and nothing else includes. */
#ifndef JSAMPLED_NATIVE_UNWIND_INTERNAL_H
#define JSAMPLED_NATIVE_UNWIND_INTERNAL_H

#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>

#include "native_unwind.h"
#include "perf_map.h"
#include "userspace/common/u64_map.h"

/* DWARF register numbers of x86-64: rax rdx rcx rbx rsi rdi rbp rsp r8-r15 rip. */
#define DWARF_NREGS 17

struct module_symbols;

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

/* The module pc lies in (checked against its reported range), or NULL. */
Dwfl_Module *native_module_at(struct native_unwinder *u, uint64_t pc);

/* Dwfl_Callbacks.find_elf and .find_debuginfo (native_files.c). */
int native_cb_find_elf(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base, char **file_name,
		       Elf **elfp);
int native_cb_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			     const char *file_name, const char *debuglink, GElf_Word crc, char **debuginfo_file_name);

/* The symbol tables and the name cache start over: a re-report may have
 * replaced modules (native_symbols.c). */
void native_symbols_clear(struct native_unwinder *u);
void native_symbols_free(struct native_unwinder *u);

#endif
