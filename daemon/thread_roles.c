#include "thread_roles.h"

#include <string.h>

/* HotSpot's thread names as the kernel truncates them (15 chars). Prefix
 * matches; the table is ordered so the first match wins. Only threads that
 * never run Java code are listed (not the Signal Dispatcher, Attach
 * Listener or Notification Thread, which do): jsampled stops copying
 * their stacks. */
static const struct {
	const char *prefix;
	int role;
} roles[] = {
	{"GC Thread#", PSEUDO_GC},     {"G1 ", PSEUDO_GC},          {"ZWorker", PSEUDO_GC},
	{"ZDriver", PSEUDO_GC},        {"ZDirector", PSEUDO_GC},    {"ZStat", PSEUDO_GC},
	{"ZUnmapper", PSEUDO_GC},      {"ZUncommitter", PSEUDO_GC}, {"Shenandoah", PSEUDO_GC},
	{"Shen", PSEUDO_GC},           {"GC ", PSEUDO_GC},          {"Conc", PSEUDO_GC},
	{"C2 CompilerThre", PSEUDO_JIT}, {"C1 CompilerThre", PSEUDO_JIT}, {"C2 Compiler", PSEUDO_JIT},
	{"C1 Compiler", PSEUDO_JIT},   {"JVMCI", PSEUDO_JIT},       {"VM Thread", PSEUDO_VM},
	{"VM Periodic Tas", PSEUDO_VM}, {"Monitor Deflati", PSEUDO_VM}, {"Sweeper thread", PSEUDO_VM},
	{"Service Thread", PSEUDO_VM}, {"VM JFR Buffer", PSEUDO_VM}, {"JFR Periodic Ta", PSEUDO_VM},
	{"JFR Recorder Th", PSEUDO_VM}, {"Attach Listener", PSEUDO_VM},
	{"jsampled-agent", PSEUDO_AGENT},
};

int thread_role_of(const char *comm)
{
	char name[17];

	memcpy(name, comm, 16);
	name[16] = 0;
	for (size_t i = 0; i < sizeof(roles) / sizeof(roles[0]); i++)
		if (strncmp(name, roles[i].prefix, strlen(roles[i].prefix)) == 0)
			return roles[i].role;
	return 0;
}
