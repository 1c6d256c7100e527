/*
 * Native (C/C++) frames of a sampled thread: DWARF-CFI unwinding from the
 * sample's registers through its *copy* of the user stack, with elfutils'
 * libdwfl (the way perf unwinds its user-stack copies), and symbolisation.
 *
 * One unwinder per profiled process. Its modules are the file mappings of
 * /proc/PID/maps (plus the vDSO, read from /proc/PID/mem); their files are
 * opened inside the process's root (/proc/PID/root, resolved with
 * RESOLVE_IN_ROOT, so a container's absolute symlinks stay in it), regular
 * files only. Separate debug files are looked up by build ID only, under
 * the process's /usr/lib/debug and then ours, and used only if the build ID
 * matches; never through debuginfod. ELF files are loaded lazily, on the
 * first pc in them.
 *
 * Where a module has no CFI for a pc (or it fails), libdwfl itself falls
 * back to the frame pointer for that frame; when libdwfl cannot get past the
 * first frame at all, native_unwind walks the rbp chain through the copy.
 *
 * Not thread-safe: one thread per unwinder (different unwinders may be used
 * from different threads). Nothing here crashes on a process that exited,
 * unreadable files, garbage registers or an empty copy: it just finds fewer
 * frames.
 */
#ifndef JSAMPLED_NATIVE_UNWIND_H
#define JSAMPLED_NATIVE_UNWIND_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "stack_fragment.h" /* struct js_sample: see bpf/sampler.h */

struct native_unwinder; /* one per profiled process */

/* Called with the text of /proc/PID/maps each time a live unwinder reads
 * it (jsampled records it, so a replay unwinds with the same modules). */
typedef void (*native_maps_cb)(void *ctx, pid_t pid, const char *maps, size_t len);
/* Called once with the process's vDSO image, read from its memory the
 * first time its maps show one (recorded: a replay has no process memory
 * to read it from). */
typedef void (*native_vdso_cb)(void *ctx, pid_t pid, const void *image, size_t len);

/* For process pid (alive; its files are opened through /proc/PID/root/...
 * so containers work, and its mappings read from /proc/PID/maps). NULL if
 * libdwfl cannot be set up (no such process, maps unreadable, no memory).
 * on_maps and on_vdso may be NULL. */
struct native_unwinder *native_unwinder_new(pid_t pid, native_maps_cb on_maps, native_vdso_cb on_vdso, void *ctx);
/* For a recorded process (jsreplay): its mappings are the maps text given
 * here and later by native_unwinder_set_maps (never /proc), its files this
 * machine's at the same paths (replays run where the recording was made;
 * a file that changed since only yields fewer or other names). */
struct native_unwinder *native_unwinder_new_replay(pid_t pid, const char *maps, size_t len);
/* A replay unwinder's newer mappings. 0, or -1. */
int native_unwinder_set_maps(struct native_unwinder *u, const char *maps, size_t len);
/* A replay unwinder's vDSO image (as on_vdso gave it live): the vDSO's
 * symbols come from it. The first image given stays (a process's vDSO does
 * not change). 0, or -1 (not a replay unwinder, too large, no memory). */
int native_unwinder_set_vdso(struct native_unwinder *u, const void *image, size_t len);
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
 * itself. A pc in no known module makes the unwinder re-read the process's
 * mappings (at most once a second) for the next samples. */
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
 * unnamed code, so a profile does not grow a frame per pc); if no module:
 * "[unknown]". Written into buf
 * (always NUL-terminated when len > 0), returned. Names are cached per pc
 * (bounded; cleared when the mappings are re-read). */
const char *native_symbolize(struct native_unwinder *u, uint64_t pc, char *buf, size_t len);

/* Cumulative counters for stats: walks, frames found, walks that ended in
 * an unwinding error, module (re)reports (the first one included). */
struct native_unwind_stats {
	uint64_t walks, frames, errors, reports;
};
const struct native_unwind_stats *native_unwind_stats(const struct native_unwinder *u);

#endif
