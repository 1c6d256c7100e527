/* SPDX-License-Identifier: GPL-2.0-only */
/* Reads of JVM-internal memory that fail instead of crashing the JVM.
 * Pointers found through vmStructs can dangle (a class unloaded, a thread
 * exited); process_vm_readv on our own pid returns EFAULT for them where a
 * plain load would be a SIGSEGV. */
#ifndef JSAGENT_SAFE_READ_H
#define JSAGENT_SAFE_READ_H

#include <stddef.h>
#include <stdint.h>

/* 0 on success, -1 if any byte of [addr, addr+n) is unreadable. */
int safe_read(uint64_t addr, void *out, size_t n);
int safe_read_u64(uint64_t addr, uint64_t *out);

#endif
