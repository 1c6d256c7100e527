/* SPDX-License-Identifier: GPL-2.0-only */
#include "admission.h"

#include <stdio.h>

#include "agent_link.h"
#include "daemon/service/daemon.h"
#include "daemon/support/log.h"
#include "daemon/service/process_access.h"
#include "process_rules.h"
#include "procfs.h"

static size_t process_bytes(const struct process *p)
{
	return jvm_model_bytes(&p->jvm) + p->held.bytes;
}

size_t admission_user_bytes(const struct daemon *d, uid_t uid, const struct process *skip)
{
	size_t sum = 0;

	for (size_t i = 0; i < d->processes.all.n; i++) {
		const struct process *p = d->processes.all.v[i];
		if (p != skip && p->uid == uid && p->state == PROCESS_LIVE)
			sum += process_bytes(p);
	}
	return sum;
}

size_t admission_model_budget(const struct daemon *d, const struct process *p)
{
	size_t budget = d->opt.max_model_bytes, used, left;

	if (p->uid == 0)
		return budget;
	used = admission_user_bytes(d, p->uid, p) + p->held.bytes;
	left = used < d->opt.max_user_bytes ? d->opt.max_user_bytes - used : 0;
	return left < budget ? left : budget;
}

/* Forgets the process that exited longest ago among those of uid (any uid
 * if uid is -1); false if there is none. */
static bool evict_oldest_exited(struct daemon *d, long uid)
{
	struct process *oldest = NULL;

	for (size_t i = 0; i < d->processes.all.n; i++) {
		struct process *p = d->processes.all.v[i];
		if (p->state != PROCESS_LIVE && !p->link && (uid < 0 || p->uid == (uid_t)uid) &&
		    (!oldest || p->exited_ns < oldest->exited_ns))
			oldest = p;
	}
	if (!oldest)
		return false;
	/* That one only: the others keep their retention. */
	if (!process_table_forget(&d->processes, oldest))
		return false;
	d->counters.processes_evicted++;
	return true;
}

static unsigned user_processes(const struct daemon *d, uid_t uid)
{
	unsigned n = 0;

	for (size_t i = 0; i < d->processes.all.n; i++)
		n += d->processes.all.v[i]->uid == uid;
	return n;
}

size_t admission_user_memory(const struct daemon *d, long uid)
{
	size_t sum = 0;

	for (size_t i = 0; i < d->processes.all.n; i++) {
		const struct process *p = d->processes.all.v[i];
		if (uid < 0 || p->uid == (uid_t)uid)
			sum += process_memory_bytes(p);
	}
	return sum;
}

/* Forgets uid's (anyone's if -1) longest-exited profiles while what they
 * hold is over limit; whether it is under now. */
static bool evict_while_over(struct daemon *d, long uid, size_t limit)
{
	while (admission_user_memory(d, uid) >= limit)
		if (!evict_oldest_exited(d, uid))
			return false;
	return true;
}

/* The live trees of uid (anyone's if -1) grow no more: capped at what
 * they hold (new paths go to [other], counted). */
static void freeze_trees(struct daemon *d, long uid)
{
	for (size_t i = 0; i < d->processes.all.n; i++) {
		struct process *p = d->processes.all.v[i];
		size_t held = cct_bytes(&p->cct);

		if ((uid >= 0 && p->uid != (uid_t)uid) || (p->cct.max_bytes && p->cct.max_bytes <= held))
			continue;
		cct_set_caps(&p->cct, p->cct.max_nodes, held);
		for (int k = 0; k < EVENT_TREE_COUNT; k++)
			if (p->events.tree[k])
				cct_set_caps(p->events.tree[k], p->events.tree[k]->max_nodes, cct_bytes(p->events.tree[k]));
		d->counters.trees_frozen++;
	}
}

void admission_memory_pressure(struct daemon *d)
{
	bool seen_over = false;

	for (size_t i = 0; i < d->processes.all.n; i++) {
		uid_t uid = d->processes.all.v[i]->uid;

		if (uid != 0 && !evict_while_over(d, uid, d->opt.max_user_bytes)) {
			freeze_trees(d, uid);
			seen_over = true;
		}
	}
	if (!evict_while_over(d, -1, d->opt.max_total_bytes)) {
		freeze_trees(d, -1);
		seen_over = true;
	}
	if (seen_over && !d->memory_pressure_logged) {
		log_warn("memory limits reached (--max-user-mb %zu, --max-total-mb %zu): trees over them grow no more",
			 d->opt.max_user_bytes >> 20, d->opt.max_total_bytes >> 20);
		d->memory_pressure_logged = true;
	}
}

/* Room for one more process of uid. */
bool admission_make_room(struct daemon *d, uid_t uid, char *why, size_t whylen)
{
	if (!evict_while_over(d, -1, d->opt.max_total_bytes)) {
		snprintf(why, whylen, "jsampled holds %zu MiB for its processes already (--max-total-mb)",
			 admission_user_memory(d, -1) >> 20);
		d->counters.processes_refused_limit++;
		return false;
	}
	if (uid != 0) {
		if (!evict_while_over(d, uid, d->opt.max_user_bytes)) {
			snprintf(why, whylen, "user %u's processes hold %zu MiB already (--max-user-mb)", (unsigned)uid,
				 admission_user_memory(d, uid) >> 20);
			d->counters.agents_refused_user_limit++;
			return false;
		}
		while (user_processes(d, uid) >= d->opt.max_processes_per_user)
			if (!evict_oldest_exited(d, uid)) {
				snprintf(why, whylen, "user %u has %u processes profiled already (--max-processes-per-user)",
					 (unsigned)uid, d->opt.max_processes_per_user);
				d->counters.agents_refused_user_limit++;
				return false;
			}
	}
	while (process_table_count(&d->processes) >= d->opt.max_processes)
		if (!evict_oldest_exited(d, -1)) {
			snprintf(why, whylen, "%u processes tracked already (--max-processes)", d->opt.max_processes);
			d->counters.processes_refused_limit++;
			return false;
		}
	return true;
}

struct process *admission_hello(struct daemon *d, struct agent_link *l, const char *vm_name, const char *vm_version,
				char *why, size_t whylen)
{
	const struct peer_identity *id = &l->peer;
	struct process *old = process_lookup(&d->processes, id->pid), *p;
	struct proc_creds creds;
	char vm[96];

	if (old && old->link) {
		snprintf(why, whylen, "a second agent for pid %d", (int)id->pid);
		d->counters.agents_refused++;
		return NULL;
	}
	/* Cheap, and keeps arbitrary local programs out of the process table. */
	if (procfs_maps_has(id->pid, "/libjvm.so") != 1) {
		snprintf(why, whylen, "pid %d is not a JVM (no libjvm.so mapped)", (int)id->pid);
		d->counters.agents_refused_not_jvm++;
		return NULL;
	}
	/* The same rules as for attaching: an -agentpath JVM obeys them too. */
	if (!process_rules_allow(&d->opt.rules, id->pid, id->uid, why, whylen)) {
		d->counters.agents_refused_by_rules++;
		return NULL;
	}
	snprintf(vm, sizeof(vm), "%s %s", vm_name, vm_version);
	/* The same instance, same user (it reconnected, or jsampled restarted
	 * and restored its profile): carry on in the same tree. */
	if (old && old->start_time && old->start_time == id->start_time && old->uid == id->uid) {
		if (old->early && old->state == PROCESS_LIVE) {
			/* Sampled since its exec: its held samples wait for this agent. */
			snprintf(old->vm, sizeof(old->vm), "%s", vm);
			old->link = l;
			old->agent_problem[0] = 0;
			process_agent_came(&d->processes, old, monotonic_ns());
			d->counters.startup_attached++;
			log_info("agent of pid %d is here, %.0f ms after its exec: decoding its %zu held samples",
				 (int)id->pid, (double)(old->agent_since_ns - old->early_since_ns) / 1e6,
				 sample_queue_len(&old->held));
			return old;
		}
		if (old->over_limit) {
			snprintf(why, whylen, "pid %d's agent sent more than its limit before", (int)id->pid);
			d->counters.agents_refused_user_limit++;
			return NULL;
		}
		process_revive(&d->processes, old);
		snprintf(old->vm, sizeof(old->vm), "%s", vm);
		old->link = l;
		old->agent_problem[0] = 0;
		log_info("agent of pid %d is back: continuing its profile (%llu samples so far)", (int)id->pid,
			 (unsigned long long)old->cct.samples);
		return old;
	}
	if (old)
		process_agent_gone(&d->processes, old, false, monotonic_ns()); /* superseded */
	if (!admission_make_room(d, id->uid, why, whylen))
		return NULL;
	p = process_create(&d->processes, id->pid, id->uid, vm);
	if (!p) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	p->start_time = id->start_time;
	if (proc_creds_read(id->pid, &creds) != 0 || creds.start_time != id->start_time || !proc_owner_may_read(&creds))
		p->root_only = true;
	procfs_comm(id->pid, p->comm, sizeof(p->comm));
	p->link = l;
	return p;
}
