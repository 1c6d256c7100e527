/* SPDX-License-Identifier: GPL-2.0-only */
/* The agent loads into every Linux JVM a fleet runs: containers built on
 * glibc 2.17 and later, and on musl (libjsagent-musl.so, the same sources).
 * A library linked here against a newer glibc asks for the newest version
 * of each symbol glibc ever changed, and an older glibc refuses to load it
 * ("version 'GLIBC_2.34' not found"). So the few such functions the agent
 * calls are bound to their oldest x86-64 versions below, and the build
 * checks the result (tests/unit/check-agent-abi.sh):
 *   dlopen, dlsym, dlinfo, dlclose, dladdr  GLIBC_2.34 in libc (libdl before), also
 *                                   exported as GLIBC_2.2.5 (libdl.so.2 on
 *                                   older systems: the agent links it)
 *   fstat                           GLIBC_2.33 (before: __fxstat): a syscall
 * Top-level .symver binds only the references of its own object file, so
 * every file that calls one includes this header, and the agent is built
 * without link-time optimisation (which moves code between files). */
#ifndef JSAMPLED_LIBC_BASELINE_H
#define JSAMPLED_LIBC_BASELINE_H

#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef __GLIBC__
__asm__(".symver dlopen,dlopen@GLIBC_2.2.5");
__asm__(".symver dlsym,dlsym@GLIBC_2.2.5");
__asm__(".symver dlinfo,dlinfo@GLIBC_2.3.3");
__asm__(".symver dlclose,dlclose@GLIBC_2.2.5");
__asm__(".symver dladdr,dladdr@GLIBC_2.2.5");
#endif

/* fstat(2) itself: the kernel's struct stat is libc's on x86-64. */
static inline int baseline_fstat(int fd, struct stat *st)
{
	return (int)syscall(SYS_fstat, fd, st);
}

#endif
