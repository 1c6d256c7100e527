/* SPDX-License-Identifier: GPL-2.0-only */
#include "jvm_startup.h"

#include <signal.h>
#include <stdio.h>

#include "admission.h"
#include "daemon/service/daemon.h"
#include "java_launcher.h"
#include "daemon/support/log.h"
#include "daemon/service/process_access.h"
#include "procfs.h"
#include "process_rules.h"
#include "daemon/ingest/sampler_bpf.h"
#include "daemon/ingest/sampler_targets.h"

/* An agent loaded at the attach connects within milliseconds. */
#define STARTUP_DECIDED_GRACE_NS (10ull * 1000000000)

/* Still waiting for its agent. */
static bool waiting(const struct process *p)
{
	return p->early && !p->link && p->state == PROCESS_LIVE;
}

/* A target without JVM facts, until the agent's layout replaces it. */
static int add_early_target(struct daemon *d, struct process *p)
{
	if (sampler_targets_start_bare(d, p) != 0)
		return -1;
	p->early_target = true;
	return 0;
}

/* Early sampling ends without an agent: what was held is settled now. */
static void give_up(struct daemon *d, struct process *p, bool still_running, const char *why, uint64_t now)
{
	sampler_targets_stop(d, p);
	p->early_target = false;
	d->counters.startup_not_attached++;
	process_agent_gone(&d->processes, p, still_running, now);
	log_info("pid %d (%s) sampled since its exec %s before its agent came: %llu samples, %llu in its profile",
		 (int)p->pid, p->comm, why, (unsigned long long)p->stats.samples, (unsigned long long)p->cct.samples);
}

/* Starts sampling pid (the instance started at start) before its agent. */
static void start_early(struct daemon *d, pid_t pid, uint64_t start, uint64_t now, const char *what)
{
	struct process *old = process_lookup(&d->processes, pid), *p;
	struct proc_status st;
	struct proc_creds creds;
	char why[256];

	if (!start || procfs_status(pid, &st) != 0 || proc_creds_read(pid, &creds) != 0)
		return;
	if (!process_rules_allow(&d->opt.rules, pid, st.euid, why, sizeof(why)))
		return; /* discovery logs it when it finds the JVM */
	if (!admission_make_room(d, st.euid, why, sizeof(why))) {
		log_info("not sampling pid %d before its agent: %s", (int)pid, why);
		return;
	}
	if (old && old->state == PROCESS_LIVE)
		process_agent_gone(&d->processes, old, false, now); /* superseded */
	if (!(p = process_create(&d->processes, pid, st.euid, PROCESS_VM_EARLY))) {
		log_warn("cannot sample pid %d before its agent: out of memory", (int)pid);
		return;
	}
	p->start_time = start;
	p->root_only = !proc_owner_may_read(&creds);
	procfs_comm(pid, p->comm, sizeof(p->comm));
	/* The watch first (attaching it takes a while), then the target it
	 * reports on, then a look at what the JVM did meanwhile: a handler
	 * installed before the target was added went unreported. */
	if (sampler_watch_sigquit(d->sampler, true) != 0)
		log_debug("cannot watch for SIGQUIT handlers: the attach waits for discovery's checks");
	if (add_early_target(d, p) != 0) {
		log_warn("cannot add pid %d to the sampler's targets", (int)pid);
		process_agent_gone(&d->processes, p, false, now);
		return;
	}
	/* An exec between the reading and the insert (a setuid program, say)
	 * went unseen by the BPF program's exec hook. */
	if (!proc_creds_unchanged(pid, &creds)) {
		p->root_only = true;
		give_up(d, p, true, "changed while it was added", now);
		return;
	}
	d->counters.startup_sampled++;
	discovery_mark_early(&d->discovery, pid);
	log_debug("sampling pid %d (%s, uid %u) before its agent: %s", (int)pid, p->comm, (unsigned)st.euid, what);
	if (procfs_status(pid, &st) == 0 && (st.sig_caught & (1ull << (SIGQUIT - 1)))) {
		discovery_attach_soon(&d->discovery, pid, now);
		discovery_tick(&d->discovery, now);
	}
}

static bool enabled(const struct daemon *d)
{
	return d->opt.startup_sampling && d->opt.attach == ATTACH_AUTO && d->sampler;
}

void jvm_startup_on_exec(struct daemon *d, pid_t pid, uint64_t now)
{
	struct process *old = process_lookup(&d->processes, pid);
	uint64_t start;
	int launcher;

	if (!enabled(d))
		return;
	launcher = java_launcher_check(pid);
	start = procfs_start_time(pid);
	if (old && waiting(old) && old->start_time == start) {
		/* The same process exec'd again (a launcher may re-exec itself);
		 * the BPF program dropped the target at the exec. */
		if (launcher == 1 && add_early_target(d, old) == 0)
			return;
		give_up(d, old, launcher >= 0, "exec'd another program", now);
		return;
	}
	if (launcher == 1)
		start_early(d, pid, start, now, "a Java launcher, from its exec");
}

void jvm_startup_on_jvm_found(struct daemon *d, pid_t pid, uint64_t now)
{
	struct process *old = process_lookup(&d->processes, pid);
	uint64_t start = procfs_start_time(pid);

	if (!enabled(d) || (old && old->start_time == start && (old->link || waiting(old))))
		return;
	start_early(d, pid, start, now, "libjvm.so mapped");
}

void jvm_startup_on_sigquit(struct daemon *d, pid_t pid, uint64_t now)
{
	struct process *p = process_lookup(&d->processes, pid);

	d->counters.sigquit_events++;
	if (p && waiting(p)) {
		discovery_attach_soon(&d->discovery, pid, now);
		discovery_tick(&d->discovery, now);
	}
}

/* A process's CPU time is for its stats (cpu_covered_pct), which read it
 * afresh, and for an exited one's last count (its agent's disconnect reads
 * it too): each second for fifty JVMs it was a twentieth of jsampled's CPU. */
#define CPU_READ_NS (10 * 1000000000ull)

uint64_t jvm_startup_read_cpu(struct process *p, uint64_t now)
{
	uint64_t cpu = procfs_cpu_ns(p->pid, p->start_time);

	p->cpu_read_ns = now;
	if (cpu > p->cpu_ns)
		p->cpu_ns = cpu;
	return cpu;
}

void jvm_startup_check(struct daemon *d, uint64_t now)
{
	bool any_waiting = false;

	for (size_t i = 0; i < d->processes.all.n; i++) {
		struct process *p = d->processes.all.v[i];
		uint64_t cpu;

		if (p->state != PROCESS_LIVE || p->native_only)
			continue;
		if (!waiting(p)) {
			if (now - p->cpu_read_ns >= CPU_READ_NS)
				jvm_startup_read_cpu(p, now);
			continue;
		}
		cpu = jvm_startup_read_cpu(p, now);
		if (!cpu && procfs_start_time(p->pid) != p->start_time)
			give_up(d, p, false, "exited", now);
		else if (now - p->early_since_ns > STARTUP_ATTACH_LIMIT_S * 1000000000ull)
			give_up(d, p, true, "was not attached in time", now);
		else if (discovery_decided(&d->discovery, p->pid) && now - p->early_since_ns > STARTUP_DECIDED_GRACE_NS)
			give_up(d, p, true, "was not attached (discovery decided against it or failed)", now);
		else
			any_waiting = true;
	}
	if (!any_waiting && d->sampler)
		sampler_watch_sigquit(d->sampler, false);
}
