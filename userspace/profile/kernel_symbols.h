/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kernel frames' names: /proc/kallsyms read once (text symbols only, sorted
 * by address), and an intern table that gives each distinct name a small
 * stable id (1, 2, ...; 0 = none) for the CCT's FRAME_KERNEL nodes.
 *
 * One process-wide table, not thread-safe (the daemon is single-threaded;
 * rendering happens in forked children, which inherit the table).
 *
 * Names are the symbol's name only: a module's "\t[mod]" is dropped, and
 * compiler suffixes (.isra.N, .constprop.N, .cold, .part.N, .llvm.N) are cut,
 * so "foo.isra.0" and "foo.cold" both name "foo". At an address that several
 * symbols share, T wins over W, W over t, t over w, then the first in file
 * order. A symbol extends up to the next text symbol's address; an address
 * below the first symbol or past the last one is "[kernel]".
 */
#ifndef JSAMPLED_KERNEL_SYMBOLS_H
#define JSAMPLED_KERNEL_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

#include "userspace/common/u64_map.h"

/* path NULL: /proc/kallsyms. 0 ok; -1 unreadable, out of memory, or no text
 * symbol with a non-zero address (kptr_restrict): then the address table is
 * empty and lookups return the id of "[kernel]". Loading again replaces the
 * address table; interned names and their ids are kept. */
int kernel_symbols_load(const char *path);
/* Id of the function containing addr; if no table or addr not covered: id of
 * "[kernel]" (0 only if out of memory). */
uint32_t kernel_symbols_lookup(uint64_t addr);
/* Id for name (adds it), escaped as safe_text.h says and cut to fit
 * KERNEL_SYMBOLS_NAME_MAX bytes (with the NUL): names of native frames come
 * from files a profiled process controls. 0 only if out of memory. NULL is
 * "[kernel]". */
#define KERNEL_SYMBOLS_NAME_MAX 1024
uint32_t kernel_symbols_intern(const char *name);

/* The names one process holds (its native frames'): each is interned once
 * on the host and freed when no process holds it any more; each holder is
 * charged its length and NAME_REF_BYTES, up to NAME_REFS_MAX_BYTES (past
 * that, names it does not hold yet come out as NAME_REFS_CAPPED, counted
 * in capped). */
#define NAME_REFS_MAX_BYTES (16u << 20)
#define NAME_REF_BYTES 32u
#define NAME_REFS_CAPPED "[native: too many names]"
struct name_refs {
	struct u64_map ids; /* id -> its length + 1 */
	size_t bytes;
	uint64_t capped;
};
void name_refs_init(struct name_refs *r);
/* Id for name as kernel_symbols_intern gives it, held by r. */
uint32_t kernel_symbols_intern_for(struct name_refs *r, const char *name);
/* r holds no name any more (names nobody holds are freed). */
void name_refs_release(struct name_refs *r);
/* Its name; "[kernel]" for unknown ids (and 0). The string stays valid and
 * unmoved until kernel_symbols_free. */
const char *kernel_symbols_name(uint32_t id);
/* Heap held (names, their index, the address table). */
size_t kernel_symbols_bytes(void);
/* Back to empty (tests; daemon exit for leak checks). */
void kernel_symbols_free(void);

#endif
