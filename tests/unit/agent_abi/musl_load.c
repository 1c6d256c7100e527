/* SPDX-License-Identifier: GPL-2.0-only */
/* Loads the musl agent as a musl-linked JVM would (dlopen, every symbol
 * bound at once) and finds its JVMTI entry points. Built by musl-gcc. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	void *lib;

	if (argc != 2)
		return 2;
	lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	if (!dlsym(lib, "Agent_OnLoad") || !dlsym(lib, "Agent_OnAttach")) {
		fprintf(stderr, "no Agent_OnLoad or Agent_OnAttach in %s\n", argv[1]);
		return 1;
	}
	printf("musl: %s loads, Agent_OnLoad and Agent_OnAttach found\n", argv[1]);
	return 0;
}
