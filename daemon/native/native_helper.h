/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The native helper: the one place where files that profiled processes
 * control (their libraries, debug files, perf maps) are parsed. It runs as
 * its own process (jsampled-unwind, native_helper_main.c): an unprivileged
 * uid, no capabilities, no_new_privs, a seccomp allow-list of the system
 * calls below, memory and CPU limits. It opens nothing: every file comes as
 * a descriptor jsampled opened and checked (native_sources.h), every
 * mapping list and vDSO image as bytes. A crafted file can crash it, stall
 * it or fill its memory; jsampled then kills it past a deadline, restarts
 * it, and loses only the native frames of the samples it held.
 *
 * This is its request path, apart from its socket (the fuzzer drives it
 * directly): one message in (native_protocol.h), an answer out.
 */
#ifndef JSAMPLED_NATIVE_HELPER_H
#define JSAMPLED_NATIVE_HELPER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "userspace/common/wire.h"

#define NATIVE_HELPER_MAX_PROCESSES 4096u
#define NATIVE_HELPER_MAX_FILES 4096u /* per process */

struct native_helper;

/* Asks jsampled for the debug files of build ID id (n bytes) of process
 * key, and waits for the answer: fds[0] the process's own, fds[1] ours, -1
 * where there is none (the caller owns them). 0, or -1 if jsampled is gone. */
typedef int (*native_debug_ask_fn)(void *ctx, uint32_t key, const unsigned char *id, unsigned n, int fds[2]);

struct native_helper *native_helper_new(native_debug_ask_fn ask, void *ask_ctx);
void native_helper_free(struct native_helper *h);

/* Called from the helper's SIGBUS handler: a mapped file of the process
 * being walked was cut short under it (its owner truncated it). Jumps out
 * of the walk, which then answers NATIVE_FRAMES_FAILED; the process's
 * unwinder is abandoned (its memory too: after NATIVE_HELPER_MAX_ABANDONED
 * of them the helper exits, and jsampled starts a fresh one). Returns only
 * if no walk is under way. */
#define NATIVE_HELPER_MAX_ABANDONED 16u
void native_helper_on_sigbus(void);
/* Whether the helper abandoned so many unwinders that it should end. */
bool native_helper_worn_out(const struct native_helper *h);

/* Handles one message (len bytes) and the descriptors that came with it
 * (taken: kept or closed). An answer, if the message wants one, is put in
 * out (emptied first). 0, or -1 if the message is malformed (nothing else
 * changed; a helper that gets one stops: jsampled sends none). */
int native_helper_handle(struct native_helper *h, const uint8_t *msg, size_t len, int *fds, unsigned nfds,
			 struct wbuf *out);

#endif
