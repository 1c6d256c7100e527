/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Native (C/C++) frames of a sampled thread: DWARF-CFI unwinding from the
 * sample's registers through its *copy* of the user stack, with elfutils'
 * libdwfl (the way perf unwinds its user-stack copies), and symbolisation.
 *
 * This parses files a profiled process controls (its libraries, their
 * debug files, its perf map), so jsampled itself never links it: it runs
 * in the sandboxed native helper (native_helper.h) and in jsreplay. The
 * unwinder reads nothing by itself: the process's mappings come as the text
 * of /proc/PID/maps (native_unwinder_new, native_unwinder_set_maps), its
 * vDSO as an image, its files as descriptors from a native_files provider
 * (the helper's come from jsampled, which opened and checked them; jsreplay's
 * are this machine's files at the same paths), its perf map as a
 * descriptor. Separate debug files are looked up by build ID only and used
 * only if the build ID matches; never through debuginfod. ELF files are
 * loaded lazily, on the first pc in them, and only if they pass the limits
 * below (a file past one is as if missing: its frames are named after it).
 *
 * Where a module has no CFI for a pc (or it fails), libdwfl itself falls
 * back to the frame pointer for that frame; when libdwfl cannot get past the
 * first frame at all, native_unwind walks the rbp chain through the copy.
 *
 * Not thread-safe: one thread per unwinder (different unwinders may be used
 * from different threads). Garbage registers, an empty copy, files that
 * are not ELF or break the limits only make it find fewer frames.
 */
#ifndef JSAMPLED_NATIVE_UNWIND_H
#define JSAMPLED_NATIVE_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "daemon/decode/stack_fragment.h" /* struct js_sample: see bpf/sampler.h */

/* What an ELF file may hold to be used at all: a crafted file cannot make
 * the unwinder hold or decompress more than this. */
#define NATIVE_FILE_MAX_BYTES (2ull << 30)
#define NATIVE_MAX_SECTIONS 65536u
#define NATIVE_MAX_SYMBOLS (2u << 20)       /* per file, .symtab and .dynsym together */
#define NATIVE_MAX_DECOMPRESSED (256u << 20) /* a compressed section, expanded */
#define NATIVE_MAX_EXPANSION 64u             /* ... and at most this many times its size (+1 MiB) */
#define NATIVE_VDSO_MAX_BYTES (64u << 10)
#define NATIVE_MAPS_MAX_BYTES (16u << 20)

/* Where an unwinder's files come from. Each returns a read-only descriptor
 * the unwinder then owns, or -1. */
struct native_files {
	/* A mapped file, by the path the mappings show. */
	int (*module)(void *ctx, const char *path);
	/* A separate debug file for a build ID: pass 0 the process's own
	 * /usr/lib/debug/.build-id/XX/YYYY.debug, pass 1 this machine's. */
	int (*debug)(void *ctx, const unsigned char *build_id, int id_len, int pass);
	void *ctx;
};

/* This machine's files at the paths given (jsreplay, tests). */
extern const struct native_files native_files_host;
/* Lets go of the files every unwinder shared (after the last is freed;
 * for leak checks at exit). */
void native_files_forget(void);

struct native_unwinder; /* one per profiled process */

/* For process pid with the mappings maps (the text of its /proc/PID/maps,
 * len bytes) and its files from files (copied; files->ctx must outlive the
 * unwinder). NULL if libdwfl cannot be set up (no mappings, no memory). */
struct native_unwinder *native_unwinder_new(pid_t pid, const char *maps, size_t len, const struct native_files *files);
/* The process's newer mappings. 0, or -1. */
int native_unwinder_set_maps(struct native_unwinder *u, const char *maps, size_t len);
/* The process's vDSO image: the vDSO's symbols come from it, if it is
 * given before the first pc in the vDSO is looked up. The first image
 * given stays (a process's vDSO does not change). 0, or -1. */
int native_unwinder_set_vdso(struct native_unwinder *u, const void *image, size_t len);
/* The process's perf map (/tmp/perf-PID.map, perf_map.h) read from fd
 * (not closed), replacing the one before. 0, or -1. */
int native_unwinder_set_perf_map(struct native_unwinder *u, int fd);
/* Whether a pc in no known module was met since the last call: the
 * mappings should be read again (a dlopen, new JIT code). */
bool native_unwinder_take_unknown(struct native_unwinder *u);
void native_unwinder_free(struct native_unwinder *u);

/* The native frames of sample s, innermost first, from its registers
 * (s->regs, enum js_reg) through its copied stack (s->stack, s->stack_len
 * bytes copied from address s->stack_addr; reads outside the copy fail).
 * The walk stops before the first pc in [stop_lo, stop_hi) (the JVM's code
 * cache: Java frames, decoded elsewhere), when unwinding fails, or at max
 * frames. Returns the number of pcs written (the first is s->regs[IP] if
 * that is outside [stop_lo, stop_hi)), 0 if none. For frames after the
 * first, the pc written is the return address minus 1 (inside the call
 * instruction, for symbolisation); after a signal frame, the interrupted pc
 * itself. */
int native_unwind(struct native_unwinder *u, const struct js_sample *s, uint64_t stop_lo, uint64_t stop_hi,
		  uint64_t *pcs, int max);

/* As native_unwind, from a caller's frame inside the copy instead of the
 * interrupted one: ret is the return address into it, sp and bp its stack
 * and frame pointer (other registers unknown). The first pc written is
 * ret - 1. Used below a JNI upcall, from the call stub's caller. */
int native_unwind_from(struct native_unwinder *u, const struct js_sample *s, uint64_t ret, uint64_t sp,
		       uint64_t bp, uint64_t stop_lo, uint64_t stop_hi, uint64_t *pcs, int max);

/* pc's function name, demangled and without the parameter list
 * ("G1ParTask::work", "inflate", "__libc_write"; C compiler suffixes such as
 * ".part.0", ".isra.0", ".cold" cut), found by binary search in the
 * module's function symbols sorted once; if no symbol covers pc: the
 * module's file name ("libz.so.1.2.13": one name for all of a library's
 * unnamed code, so a profile does not grow a frame per pc); in no module:
 * the perf map's name, else "[unknown]". Written into buf (always
 * NUL-terminated when len > 0), returned. Names are cached per pc
 * (bounded; cleared when the mappings or the perf map change). The name is
 * raw bytes of the file: whoever shows it escapes it. */
const char *native_symbolize(struct native_unwinder *u, uint64_t pc, char *buf, size_t len);

/* Cumulative counters: walks, frames found, walks that ended in an
 * unwinding error, module (re)reports (the first one included), files
 * refused by the limits. */
struct native_unwind_stats {
	uint64_t walks, frames, errors, reports, files_refused;
};
const struct native_unwind_stats *native_unwind_stats(const struct native_unwinder *u);

/* Whether the ELF file open on fd stays within the limits above (header,
 * section headers, symbol counts and compressed section sizes read with
 * pread, a few KiB at a time). 0, or -1 with why. */
int native_elf_within_limits(int fd, char *why, size_t whylen);

#endif
