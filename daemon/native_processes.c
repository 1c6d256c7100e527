#include "native_processes.h"

#include <stdio.h>

#include "admission.h"
#include "daemon.h"
#include "log.h"
#include "procfs.h"
#include "process_rules.h"
#include "sampler_targets.h"

int native_process_start(struct daemon *d, pid_t pid, uid_t requester, char *why, size_t whylen)
{
	struct proc_status st;
	struct process *old = process_lookup(&d->processes, pid), *p;
	uint64_t start;

	/* Another user's process is refused exactly like a missing one. */
	if (procfs_status(pid, &st) != 0 || !(start = procfs_start_time(pid)) ||
	    (requester != 0 && requester != st.euid)) {
		snprintf(why, whylen, "no process %d of yours", (int)pid);
		return -1;
	}
	if (!d->opt.native_stacks || !d->processes.hooks.add_native_frames) {
		snprintf(why, whylen, "native stacks are off (--native-stacks)");
		return -1;
	}
	if (procfs_maps_has(pid, "/libjvm.so") == 1) {
		snprintf(why, whylen, "pid %d is a JVM: jsampled attaches to it by itself", (int)pid);
		return -1;
	}
	if (old && old->state == PROCESS_LIVE && old->start_time == start) {
		snprintf(why, whylen, "pid %d is profiled already", (int)pid);
		return -1;
	}
	if (!process_rules_allow(&d->opt.rules, pid, st.euid, why, whylen) ||
	    !admission_make_room(d, st.euid, why, whylen))
		return -1;
	if (old)
		process_agent_gone(&d->processes, old, false, monotonic_ns());
	if (!(p = process_create(&d->processes, pid, st.euid, "native"))) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	p->native_only = true;
	p->start_time = start;
	procfs_comm(pid, p->comm, sizeof(p->comm));
	if (sampler_targets_start_bare(d, p) != 0) {
		snprintf(why, whylen, "cannot add pid %d to the sampler's targets", (int)pid);
		process_agent_gone(&d->processes, p, false, monotonic_ns());
		return -1;
	}
	log_info("profiling pid %d (%s, uid %u, native, asked by uid %u)", (int)pid, p->comm, (unsigned)p->uid,
		 (unsigned)requester);
	return 0;
}

void native_processes_check(struct daemon *d, uint64_t now_ns)
{
	for (size_t i = 0; i < d->processes.all.n; i++) {
		struct process *p = d->processes.all.v[i];

		if (!p->native_only || p->state != PROCESS_LIVE || procfs_start_time(p->pid) == p->start_time)
			continue;
		sampler_targets_stop(d, p);
		process_agent_gone(&d->processes, p, false, now_ns);
		log_info("pid %d (%s, native) exited: %llu samples", (int)p->pid, p->comm,
			 (unsigned long long)p->cct.samples);
	}
}
