/* SPDX-License-Identifier: GPL-2.0-only */
/* A JVMTI agent built as a library is by default on this machine: linked
 * against its glibc's newest symbol versions (dlopen@GLIBC_2.34). An older
 * distribution's JVM refuses to load it, and jsampled must say why. */
#include <dlfcn.h>

__attribute__((visibility("default"))) int Agent_OnAttach(void *vm, char *options, void *reserved)
{
	(void)vm;
	(void)options;
	(void)reserved;
	return dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD) ? 0 : 1;
}
