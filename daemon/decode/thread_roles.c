/* SPDX-License-Identifier: GPL-2.0-only */
#include "thread_roles.h"

#include <string.h>

/* HotSpot's thread names as the kernel truncates them (15 chars). Prefix
 * matches; the table is ordered so the first match wins. Only threads that
 * never run Java code are listed (not the Signal Dispatcher, Attach
 * Listener or Notification Thread, which do): jsampled stops copying
 * their stacks. */
#define ROLE(prefix, role) {prefix, sizeof(prefix) - 1, role}
static const struct {
	const char *prefix;
	size_t len;
	int role;
} roles[] = {
	ROLE("GC Thread#", PSEUDO_GC),       ROLE("G1 ", PSEUDO_GC),          ROLE("ZWorker", PSEUDO_GC),
	ROLE("ZDriver", PSEUDO_GC),          ROLE("ZDirector", PSEUDO_GC),    ROLE("ZStat", PSEUDO_GC),
	ROLE("ZUnmapper", PSEUDO_GC),        ROLE("ZUncommitter", PSEUDO_GC), ROLE("Shenandoah", PSEUDO_GC),
	ROLE("Shen", PSEUDO_GC),             ROLE("GC ", PSEUDO_GC),          ROLE("Conc", PSEUDO_GC),
	ROLE("C2 CompilerThre", PSEUDO_JIT), ROLE("C1 CompilerThre", PSEUDO_JIT), ROLE("C2 Compiler", PSEUDO_JIT),
	ROLE("C1 Compiler", PSEUDO_JIT),     ROLE("JVMCI", PSEUDO_JIT),       ROLE("VM Thread", PSEUDO_VM),
	ROLE("VM Periodic Tas", PSEUDO_VM),  ROLE("Monitor Deflati", PSEUDO_VM), ROLE("Sweeper thread", PSEUDO_VM),
	ROLE("Service Thread", PSEUDO_VM),   ROLE("VM JFR Buffer", PSEUDO_VM), ROLE("JFR Periodic Ta", PSEUDO_VM),
	ROLE("JFR Recorder Th", PSEUDO_VM),  ROLE("Attach Listener", PSEUDO_VM),
	ROLE("jsampled-agent", PSEUDO_AGENT),
};

/* Every prefix is shorter than comm's 16 bytes, so comparing its bytes
 * never reads past comm; a name that ends (NUL) before a prefix does
 * differs from it at that byte, as strncmp would find. Each sample of a
 * JVM-internal thread asks (a fifth of a xalan run's samples). */
int thread_role_of(const char *comm)
{
	for (size_t i = 0; i < sizeof(roles) / sizeof(roles[0]); i++)
		if (comm[0] == roles[i].prefix[0] && memcmp(comm, roles[i].prefix, roles[i].len) == 0)
			return roles[i].role;
	return 0;
}
