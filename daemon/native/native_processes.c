/* SPDX-License-Identifier: GPL-2.0-only */
#include "native_processes.h"

#include <stdio.h>

#include "daemon/jvm/admission.h"
#include "daemon/service/daemon.h"
#include "daemon/support/log.h"
#include "daemon/service/process_access.h"
#include "daemon/jvm/procfs.h"
#include "daemon/jvm/process_rules.h"
#include "daemon/ingest/sampler_targets.h"

int native_process_start(struct daemon *d, pid_t pid, int requester_fd, char *why, size_t whylen)
{
	struct proc_creds who, target;
	struct process *old = process_lookup(&d->processes, pid), *p;
	char denied[96];

	if (proc_creds_of_peer(requester_fd, &who) != 0) {
		snprintf(why, whylen, "cannot tell who asks");
		return -1;
	}
	/* A process the requester may not read is refused exactly like a
	 * missing one: nothing is said about it. */
	if (proc_creds_read(pid, &target) != 0) {
		snprintf(why, whylen, "no process %d of yours", (int)pid);
		return -1;
	}
	if (!proc_may_read(&who, &target, denied, sizeof(denied))) {
		snprintf(why, whylen, "no process %d of yours", (int)pid);
		log_info("uid %u may not profile pid %d: %s", (unsigned)who.uid[1], (int)pid, denied);
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
	if (old && old->state == PROCESS_LIVE && old->start_time == target.start_time) {
		snprintf(why, whylen, "pid %d is profiled already", (int)pid);
		return -1;
	}
	if (!process_rules_allow(&d->opt.rules, pid, target.uid[1], why, whylen) ||
	    !admission_make_room(d, target.uid[1], why, whylen))
		return -1;
	if (old)
		process_agent_gone(&d->processes, old, false, monotonic_ns());
	if (!(p = process_create(&d->processes, pid, target.uid[1], "native"))) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	p->native_only = true;
	p->start_time = target.start_time;
	p->root_only = !proc_owner_may_read(&target);
	procfs_comm(pid, p->comm, sizeof(p->comm));
	if (sampler_targets_start_bare(d, p) != 0) {
		snprintf(why, whylen, "cannot add pid %d to the sampler's targets", (int)pid);
		process_agent_gone(&d->processes, p, false, monotonic_ns());
		return -1;
	}
	/* It may have exec'd a setuid program between the check and the
	 * insert (the BPF program's exec hook found no target to drop then):
	 * checked again now that the target is in. */
	if (!proc_creds_unchanged(pid, &target)) {
		p->root_only = true; /* what it sampled meanwhile may be the new program's */
		sampler_targets_stop(d, p);
		process_agent_gone(&d->processes, p, false, monotonic_ns());
		snprintf(why, whylen, "pid %d changed while it was added (exec?)", (int)pid);
		return -1;
	}
	log_info("profiling pid %d (%s, uid %u, native, asked by uid %u)", (int)pid, p->comm, (unsigned)p->uid,
		 (unsigned)who.uid[1]);
	return 0;
}

void native_processes_on_exec(struct daemon *d, pid_t pid, uint64_t now_ns)
{
	struct process *p = process_lookup(&d->processes, pid);

	if (!p || !p->native_only || p->state != PROCESS_LIVE)
		return;
	/* The BPF program dropped the target at the exec already. */
	sampler_targets_stop(d, p);
	process_agent_gone(&d->processes, p, false, now_ns);
	log_info("pid %d (%s, native) exec'd another program: %llu samples", (int)p->pid, p->comm,
		 (unsigned long long)p->cct.samples);
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
