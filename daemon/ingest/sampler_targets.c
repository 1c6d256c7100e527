/* SPDX-License-Identifier: GPL-2.0-only */
#include "sampler_targets.h"

#include "daemon/jvm/agent_link.h"
#include "daemon/service/daemon.h"
#include "daemon/support/log.h"
#include "daemon/jvm/procfs.h"
#include "sampler_bpf.h"

/* The BPF program reads a JavaFrameAnchor as three consecutive words: only
 * offsets 0, 8 and 16, each once, describe one. */
static bool anchor_fits(const struct vm_layout *L)
{
	int64_t o[3] = {L->anchor_sp, L->anchor_fp, L->anchor_pc};
	unsigned seen = 0;

	for (int i = 0; i < 3; i++) {
		if (o[i] < 0 || o[i] > 16 || (o[i] & 7) || (seen & (1u << (o[i] >> 3))))
			return false;
		seen |= 1u << (o[i] >> 3);
	}
	return true;
}

/* Whether the agent's process is still what connected (see peer_identity.h). */
static bool still_same(const struct process *p)
{
	return p->link && peer_identity_check(&p->link->peer) == PEER_SAME;
}

void sampler_targets_start(struct daemon *d, struct process *p)
{
	const struct vm_layout *L = &p->jvm.layout;
	struct js_target tg = {0};

	/* Sampled since its exec, the target has no JVM facts yet: replaced. */
	if ((p->sampled && !p->early_target) || !L->valid || !d->sampler)
		return;
	if (anchor_fits(L) && L->tls_modid > 0 && L->tls_modid < 0xffff && L->tls_thread_offset >= 0 &&
	    L->tls_thread_offset < 0xffff && L->thread_anchor > 0 && L->thread_anchor < 0xffff) {
		tg.tls_modid = (uint32_t)L->tls_modid;
		tg.tls_offset = (uint32_t)L->tls_thread_offset;
		tg.anchor_off = (uint32_t)L->thread_anchor;
		tg.anchor_sp_off = (uint16_t)L->anchor_sp;
		tg.anchor_fp_off = (uint16_t)L->anchor_fp;
		tg.anchor_pc_off = (uint16_t)L->anchor_pc;
		if (L->thread_state > 0 && L->thread_state < 0xffff)
			tg.state_off = (uint32_t)L->thread_state;
	}
	/* The thread status of off-CPU samples; registered threads find
	 * their JavaThread from state_addr. */
	if (L->thread_state > 0 && L->thread_state < 0xffff && L->threadobj_off > 0 && L->threadobj_off < 0xfff8 &&
	    L->thread_holder_off >= 0 && L->thread_holder_off < 0xfffc && L->thread_status_off > 0 &&
	    L->thread_status_off < 0xfffc && L->narrow_shift >= 0 && L->narrow_shift <= 7 &&
	    (L->narrow_oops == 0 || L->narrow_oops == 1)) {
		tg.state_off = (uint32_t)L->thread_state;
		tg.threadobj_off = (uint16_t)L->threadobj_off;
		tg.narrow_oops = (uint8_t)L->narrow_oops;
		tg.narrow_shift = (uint8_t)L->narrow_shift;
		tg.narrow_base = (uint64_t)L->narrow_base;
		tg.thread_holder_off = (uint16_t)L->thread_holder_off;
		tg.thread_status_off = (uint16_t)L->thread_status_off;
	}
	tg.code_low = L->code_low;
	tg.code_high = L->code_high;
	/* The mounted virtual thread's chunk is found from the JavaThread,
	 * which only a registered thread's anchor address gives. */
	if (L->cont_valid && tg.anchor_off) {
		tg.vthread_off = (uint16_t)L->vthread_off;
		tg.threadobj_off = (uint16_t)L->threadobj_off;
		tg.vt_cont_off = (uint16_t)L->vt_cont_off;
		tg.cont_tail_off = (uint16_t)L->cont_tail_off;
		tg.chunk_sp_off = (uint8_t)L->chunk_sp_off;
		tg.chunk_bottom_off = (uint8_t)L->chunk_bottom_off;
		tg.chunk_parent_off = (uint8_t)L->chunk_parent_off;
		tg.narrow_oops = (uint8_t)L->narrow_oops;
		tg.narrow_shift = (uint8_t)L->narrow_shift;
		tg.narrow_base = (uint64_t)L->narrow_base;
		tg.chunk_stack_off = (uint16_t)L->chunk_stack_off;
	}
	/* Checked before and after: an exec in between either happens before
	 * the target is added (the second check sees it) or after (the BPF
	 * program removes the target at the exec). */
	if (!still_same(p))
		return;
	if (sampler_add_target(d->sampler, p->pid, &tg) != 0) {
		log_err("cannot add pid %d to the sampler's targets (limit %d)", (int)p->pid, JS_MAX_TARGETS);
		return;
	}
	if (!still_same(p)) {
		sampler_remove_target(d->sampler, p->pid);
		p->sampled = p->early_target = false;
		return;
	}
	p->sampled = true;
	p->early_target = false;
	log_info("profiling pid %d (%s, uid %u, %s)", (int)p->pid, p->comm, (unsigned)p->uid, p->vm);
}

int sampler_targets_start_bare(struct daemon *d, struct process *p)
{
	struct js_target none = {0};

	if (!d->sampler || sampler_add_target(d->sampler, p->pid, &none) != 0)
		return -1;
	p->sampled = true;
	return 0;
}

void sampler_targets_stop(struct daemon *d, struct process *p)
{
	if (p->sampled && d->sampler)
		sampler_remove_target(d->sampler, p->pid);
	p->sampled = false;
	/* Its samples still in the ring (up to a drain period's, main.c) are
	 * taken while it is still live: whatever ends it comes next. */
	if (d->drain.rb)
		ringbuf_drain_run(&d->drain, 0);
}

uint32_t sampler_targets_host_tid(void *ctx, struct process *p, uint32_t ns_tid)
{
	(void)ctx;
	return pidns_host_tid(&p->tids, p->pid, ns_tid);
}

void sampler_targets_on_thread(void *ctx, struct process *p, const struct jvm_thread *t)
{
	struct daemon *d = ctx;
	const struct vm_layout *L = &p->jvm.layout;
	uint32_t host = sampler_targets_host_tid(ctx, p, t->tid);
	struct js_thread_info ti = {0};

	if (!host)
		return;
	/* Only the process's own entry goes (the call checks whose it is). */
	if (!t->alive || !t->stack_base || !t->stack_size) {
		sampler_forget_thread(d->sampler, p->pid, (pid_t)host);
		return;
	}
	/* An agent speaks for its own threads only (in another pid namespace,
	 * pidns_host_tid already maps only the process's own). */
	if (!procfs_task_of(p->pid, host)) {
		p->foreign_threads++;
		return;
	}
	ti.stack_end = t->stack_base;
	ti.stack_low = t->stack_base - t->stack_size;
	if (L->valid && anchor_fits(L) && L->thread_anchor > 0 && t->java_thread) {
		ti.anchor_addr = t->java_thread + (uint64_t)L->thread_anchor;
		ti.anchor_sp_off = (uint16_t)L->anchor_sp;
		ti.anchor_fp_off = (uint16_t)L->anchor_fp;
		ti.anchor_pc_off = (uint16_t)L->anchor_pc;
	}
	if (L->valid && L->thread_state > 0 && t->java_thread)
		ti.state_addr = t->java_thread + (uint64_t)L->thread_state;
	ti.from_jvm = 1;
	if (sampler_set_thread(d->sampler, p->pid, (pid_t)host, &ti) != 0)
		log_debug("cannot register thread %u of pid %d", host, (int)p->pid);
}

void sampler_targets_on_copy_end(void *ctx, struct process *p, uint32_t tid, uint64_t end)
{
	struct daemon *d = ctx;

	sampler_set_copy_end(d->sampler, p->pid, (pid_t)tid, end);
}

void sampler_targets_on_max_copy(void *ctx, struct process *p, uint32_t tid, uint32_t bytes)
{
	struct daemon *d = ctx;

	log_debug("pid %d thread %u: stack deeper than the copy, now copying up to %u bytes", (int)p->pid, tid, bytes);
	sampler_set_max_copy(d->sampler, p->pid, (pid_t)tid, bytes);
}

void sampler_targets_on_image_lost(void *ctx, struct process *p, uint32_t tid)
{
	struct daemon *d = ctx;

	sampler_uncover_thread(d->sampler, p->pid, (pid_t)tid);
}

void sampler_targets_on_carrier(void *ctx, struct process *p, uint32_t tid)
{
	struct daemon *d = ctx;

	sampler_add_thread_flags(d->sampler, p->pid, (pid_t)tid, JS_THREAD_CONTINUATIONS);
}

void sampler_targets_on_internal_thread(void *ctx, struct process *p, uint32_t tid)
{
	struct daemon *d = ctx;

	sampler_set_thread_flags(d->sampler, p->pid, (pid_t)tid, JS_THREAD_NO_STACK);
}
