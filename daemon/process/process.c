/* SPDX-License-Identifier: GPL-2.0-only */
/* The process table (process.h): processes by pid, their lifetime, and
 * the agent's batches applied to their model. The per-sample path is
 * process_samples.c. */
#include "process.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "userspace/common/agent_protocol.h"
#include "daemon/decode/decoder.h"
#include "daemon/record/recording.h"
#include "daemon/support/clock.h"
#include "daemon/support/log.h"
#include "process_internal.h"

void process_table_init(struct process_table *t, const struct process_limits *limits)
{
	memset(t, 0, sizeof(*t));
	u64_map_init(&t->by_pid);
	t->limits = *limits;
}

/* What a process knows from one agent connection (thread ids, copy sizes,
 * contexts, held samples): set up at creation and again when a restarted
 * jsampled's agent reconnects; the CCT outlives it. */
static void session_state_init(struct process *p, const struct process_table *t)
{
	pidns_map_init(&p->tids);
	u64_map_init(&p->copy_ends);
	u64_map_init(&p->max_copies);
	context_table_init(&p->contexts);
	stack_bottoms_init(&p->bottoms, STACK_BOTTOMS_PROCESS_BYTES);
	walk_reuse_init(&p->reuse, WALK_REUSE_PROCESS_BYTES);
	u64_map_init(&p->internal_threads);
	kernel_stacks_init(&p->kstacks);
	off_cpu_waits_init(&p->waits);
	frozen_chunks_init(&p->chunks);
	p->enter_special = (struct enter_special){0};
	u64_map_init(&p->carriers);
	sample_queue_init(&p->held, t->limits.held_max_bytes);
}

static void session_state_free(struct process *p)
{
	pidns_map_free(&p->tids);
	u64_map_free(&p->copy_ends);
	u64_map_free(&p->max_copies);
	context_table_free(&p->contexts);
	stack_bottoms_free(&p->bottoms);
	walk_reuse_free(&p->reuse);
	p->stats.stack_image_bytes = 0;
	p->stats.walk_memo_bytes = 0;
	u64_map_free(&p->internal_threads);
	kernel_stacks_free(&p->kstacks);
	off_cpu_waits_free(&p->waits);
	frozen_chunks_free(&p->chunks);
	u64_map_free(&p->carriers);
	if (p->native_state_free)
		p->native_state_free(p->native_state);
	p->native_state = NULL;
	p->native_state_free = NULL;
	sample_queue_free(&p->held);
}

void process_free(struct process *p)
{
	session_state_free(p);
	jvm_model_free(&p->jvm);
	cct_free(&p->cct);
	event_profiles_free(&p->events);
	name_refs_release(&p->names);
	free(p);
}

void process_table_free(struct process_table *t)
{
	free(t->trace);
	free(t->scratch);
	free(t->extended);
	t->trace = NULL;
	t->scratch = NULL;
	t->extended = NULL;
	t->extended_size = 0;
	for (size_t i = 0; i < t->all.n; i++)
		process_free(t->all.v[i]);
	vec_free(&t->all);
	u64_map_free(&t->by_pid);
}

struct process *process_lookup(const struct process_table *t, pid_t pid)
{
	uint64_t *p = u64_map_get(&t->by_pid, (uint64_t)pid);

	return p ? (struct process *)(uintptr_t)*p : NULL;
}

struct process *process_create(struct process_table *t, pid_t pid, uid_t uid, const char *vm)
{
	struct process *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->pid = pid;
	p->uid = uid;
	p->seen_ns = monotonic_ns();
	p->state = PROCESS_LIVE;
	p->hold_ns = t->limits.hold_ns;
	p->early = vm && strcmp(vm, PROCESS_VM_EARLY) == 0;
	p->early_since_ns = p->seen_ns;
	snprintf(p->vm, sizeof(p->vm), "%s", vm ? vm : "");
	jvm_model_init(&p->jvm);
	name_refs_init(&p->names);
	session_state_init(p, t);
	if (cct_init(&p->cct, t->limits.cct_max_nodes) != 0 || vec_push(&t->all, p) != 0 ||
	    u64_map_put(&t->by_pid, (uint64_t)pid, (uint64_t)(uintptr_t)p) != 0) {
		if (t->all.n && t->all.v[t->all.n - 1] == p)
			t->all.n--;
		process_free(p);
		return NULL;
	}
	cct_set_caps(&p->cct, t->limits.cct_max_nodes, t->limits.cct_max_bytes);
	/* A process profiled for hours keeps finding new paths (a deep
	 * interpreter's recursions fill the default cap in half a minute):
	 * its tree makes room by pruning its least-sampled nodes. */
	cct_enable_pruning(&p->cct);
	cct_slices_set_finest(&p->cct.slices, t->limits.slice_s);
	if (t->limits.slice_max_bytes)
		p->cct.slices.max_bytes = t->limits.slice_max_bytes;
	if (t->recording) {
		struct wbuf w;
		wbuf_init(&w);
		wbuf_u32(&w, (uint32_t)uid);
		wbuf_str(&w, p->vm);
		recording_write_at(t->recording, REC_PROCESS, pid, p->seen_ns, w.data, w.len);
		wbuf_free(&w);
	}
	return p;
}

size_t process_table_adopt(struct process_table *t, struct process_table *from)
{
	size_t moved = 0;

	for (size_t i = 0; i < from->all.n; i++) {
		struct process *p = from->all.v[i];
		struct process *cur = process_lookup(t, p->pid);

		if (vec_push(&t->all, p) != 0) {
			process_free(p);
			continue;
		}
		if (!cur || cur->state != PROCESS_LIVE)
			u64_map_put(&t->by_pid, (uint64_t)p->pid, (uint64_t)(uintptr_t)p);
		moved++;
	}
	from->all.n = 0;
	process_table_free(from);
	return moved;
}

void process_revive(struct process_table *t, struct process *p)
{
	struct jvm_model fresh;

	process_settle_waiting(t, p);
	/* The tree's method names stay known until the agent sends them again
	 * (with the same ids: it is the same agent, in the same JVM). */
	jvm_model_init(&fresh);
	for (size_t i = 1; i < p->cct.nodes.n; i++) {
		const struct cct_node *n = &p->cct.nodes.v[i];
		const struct method_info *m = n->type == FRAME_PSEUDO ? NULL : method_table_get(&p->jvm.methods, n->method_id);
		const struct method_table *mt = &p->jvm.methods;
		if (m && m->body->named)
			method_table_put_restored(&fresh.methods, n->method_id, m->class_id,
						  method_table_class_name(mt, m->class_id) ? method_table_class_name(mt, m->class_id)
											  : "[unknown class]",
						  method_name(m));
	}
	jvm_model_free(&p->jvm);
	p->jvm = fresh;
	session_state_free(p);
	session_state_init(p, t);
	p->state = PROCESS_LIVE;
	p->exited_ns = 0;
	p->agent_cut_ns = 0;
	p->wants_fetch = false;
	p->sampled = false;
	p->seen_ns = monotonic_ns();
}

size_t process_table_count(const struct process_table *t)
{
	return t->all.n;
}

/* Drops p from the lookups and frees it, keeping its counters in the
 * table's retired ones (the caller takes it out of t->all). */
static void forget(struct process_table *t, struct process *p, const char *why)
{
	if (process_lookup(t, p->pid) == p)
		u64_map_del(&t->by_pid, (uint64_t)p->pid);
	decode_stats_add(&t->retired, &p->stats);
	log_info("forgetting process %d (%s)", (int)p->pid, why);
	process_free(p);
}

size_t process_table_expire(struct process_table *t, uint64_t now_ns, uint64_t retention_ns)
{
	size_t out = 0, gone = 0;

	for (size_t i = 0; i < t->all.n; i++) {
		struct process *p = t->all.v[i];
		char why[64];

		if (p->state == PROCESS_LIVE || now_ns - p->exited_ns < retention_ns || p->link) {
			t->all.v[out++] = p;
			continue;
		}
		snprintf(why, sizeof(why), "exited %llu s ago", (unsigned long long)((now_ns - p->exited_ns) / 1000000000u));
		forget(t, p, why);
		gone++;
	}
	t->all.n = out;
	return gone;
}

bool process_table_forget(struct process_table *t, struct process *p)
{
	for (size_t i = 0; i < t->all.n; i++) {
		if (t->all.v[i] != p)
			continue;
		memmove(&t->all.v[i], &t->all.v[i + 1], (t->all.n - i - 1) * sizeof(t->all.v[0]));
		t->all.n--;
		forget(t, p, "evicted to make room");
		return true;
	}
	return false;
}

void process_memory(const struct process *p, struct process_memory *m)
{
	size_t shared = method_table_shared_bytes(&p->jvm.methods);

	*m = (struct process_memory){
		/* with its per-thread maps */
		.record = sizeof(*p) + u64_map_bytes(&p->copy_ends) + u64_map_bytes(&p->max_copies) +
			  u64_map_bytes(&p->internal_threads) + u64_map_bytes(&p->carriers) + u64_map_bytes(&p->tids.host),
		.code_map = jvm_model_code_bytes(&p->jvm),
		.methods = method_table_bytes(&p->jvm.methods) - shared,
		.shared = shared,
		.threads = jvm_model_thread_bytes(&p->jvm),
		.trees = cct_bytes(&p->cct),
		.event_trees = event_profiles_bytes(&p->events),
		.held = p->held.bytes,
		.images = p->bottoms.bytes + p->reuse.bytes + context_table_bytes(&p->contexts),
		.native = p->names.bytes + p->native_bytes,
	};
}

size_t process_memory_add(struct process_memory *sum, const struct process_memory *m)
{
	sum->record += m->record;
	sum->code_map += m->code_map;
	sum->methods += m->methods;
	sum->shared += m->shared;
	sum->threads += m->threads;
	sum->trees += m->trees;
	sum->event_trees += m->event_trees;
	sum->held += m->held;
	sum->images += m->images;
	sum->native += m->native;
	return m->record + m->code_map + m->methods + m->shared + m->threads + m->trees + m->event_trees + m->held +
	       m->images + m->native;
}

size_t process_memory_bytes(const struct process *p)
{
	struct process_memory m, sum = {0};

	process_memory(p, &m);
	return process_memory_add(&sum, &m);
}

static int mark_used(void *ctx, uint32_t id)
{
	return id && u64_map_put(ctx, id, 1) != 0 ? -1 : 0;
}

static bool named_by_tree(void *ctx, uint32_t id)
{
	return u64_map_get(ctx, id) != NULL;
}

/* Puts the method of every Java frame of the tree into used; -1 if out of
 * memory. */
static int mark_methods_of(const struct cct *c, struct u64_map *used)
{
	for (size_t i = 1; i < c->nodes.n; i++) {
		const struct cct_node *n = &c->nodes.v[i];
		if ((n->type <= FRAME_NATIVE || n->type == FRAME_JAVA) && mark_used(used, n->method_id) != 0)
			return -1;
	}
	return 0;
}

static int mark_tree_methods(const struct process *p, struct u64_map *used)
{
	if (mark_methods_of(&p->cct, used) != 0)
		return -1;
	for (int i = 0; i < EVENT_TREE_COUNT; i++)
		if (p->events.tree[i] && mark_methods_of(p->events.tree[i], used) != 0)
			return -1;
	return 0;
}

/* The EVENTS records of a batch the model took (jvm_model.c leaves them):
 * into the process's allocation and lock trees. */
void process_event_caps(const struct process_limits *l, struct event_caps *caps)
{
	*caps = (struct event_caps){.max_nodes = l->cct_max_nodes / 4 ? l->cct_max_nodes / 4 : 1,
				    .max_bytes = l->cct_max_bytes / 4,
				    .slice_s = l->slice_s,
				    .slice_max_bytes = l->slice_max_bytes / 4};
}

static void take_events(const struct process_table *t, struct process *p, const void *payload, size_t len)
{
	struct event_caps caps;
	struct rbuf r;

	process_event_caps(&t->limits, &caps);
	rbuf_init(&r, payload, len);
	rbuf_u64(&r);
	rbuf_u64(&r);
	rbuf_u64(&r);
	rbuf_u8(&r);
	uint32_t count = rbuf_u32(&r);
	for (uint32_t i = 0; i < count && !r.err; i++) {
		uint16_t kind = rbuf_u16(&r);
		uint32_t rlen = rbuf_u32(&r);
		const void *body = rbuf_bytes(&r, rlen);

		if (!r.err && kind == JS_REC_EVENTS)
			event_profiles_apply(&p->events, &caps, &p->jvm.methods, &p->names, (int64_t)t->wall_offset_ns,
					     body, rlen);
	}
}

/* Unloaded classes whose records may go: reported at least this long ago
 * plus the drain period, and before the oldest held sample was taken, so
 * that every sample taken while they were loaded has been decoded (the
 * agent reports an unload after the GC that did it; a sample waits in the
 * ring until the next drain, then reaches the decoder within milliseconds
 * unless held). */
#define UNLOADED_GRACE_NS (250ull * 1000000)
#define UNLOADED_MIN 512 /* classes: below this, dropping is not worth a pass */

/* Drops the records of classes the JVM unloaded, keeping the names of the
 * methods the tree, the code map or a thread's context still name. Runs
 * when they are many (an eighth of the classes: the pass is linear), or
 * when the model nears its limit. Decided from the recorded batches and
 * their times alone, so a replay drops the same. */
static void drop_unloaded_classes(const struct process_table *t, struct process *p, size_t max_model_bytes,
				  size_t batch_len, uint64_t now)
{
	const struct method_table *mt = &p->jvm.methods;
	bool near_limit = max_model_bytes && jvm_model_bytes(&p->jvm) + 4 * batch_len > max_model_bytes;
	uint64_t grace = UNLOADED_GRACE_NS + t->limits.drain_ns;
	uint64_t before = now - grace, oldest_held = sample_queue_oldest_ns(&p->held);
	struct u64_map used;

	if (!mt->unloaded_classes || now < grace || now < p->unloads_dropped_ns + UNLOADED_GRACE_NS ||
	    (!near_limit && (mt->unloaded_classes < UNLOADED_MIN || mt->unloaded_classes * 8 < mt->classes.n)))
		return;
	if (oldest_held < before)
		before = oldest_held;
	p->unloads_dropped_ns = now;
	u64_map_init(&used);
	/* Out of memory: keep everything. */
	if (mark_tree_methods(p, &used) == 0 && codemap_each_method(&p->jvm.code, mark_used, &used) == 0 &&
	    context_each_method(&p->contexts, mark_used, &used) == 0)
		method_table_drop_unloaded(&p->jvm.methods, before, named_by_tree, &used);
	u64_map_free(&used);
}

int process_apply_batch(struct process_table *t, struct process *p, const void *payload, size_t len,
			struct batch_info *info, size_t max_model_bytes, uint64_t now)
{
	int r;

	if (t->recording)
		recording_write_at(t->recording, REC_BATCH, p->pid, now, payload, len);
	drop_unloaded_classes(t, p, max_model_bytes, len, now);
	r = jvm_model_apply_batch(&p->jvm, payload, len, info, max_model_bytes);
	if (r == BATCH_OK && !info->more && info->cut_ns > p->agent_cut_ns)
		p->agent_cut_ns = info->cut_ns;
	/* Threads changed by the records applied, also when the batch stopped
	 * early: the BPF thread map must match the model. */
	for (size_t i = 0; i < p->jvm.thread_changes.n; i++) {
		const struct jvm_thread *th = jvm_model_thread(&p->jvm, p->jvm.thread_changes.v[i]);
		if (!th)
			continue;
		if (t->hooks.on_thread)
			t->hooks.on_thread(t->hooks.ctx, p, th);
		/* Per-thread learning starts over for a new thread on the tid. */
		uint32_t host = t->hooks.host_tid ? t->hooks.host_tid(t->hooks.ctx, p, th->tid) : th->tid;
		process_samples_forget_thread(t, p, host);
		if (!th->alive)
			jvm_model_forget_thread(&p->jvm, th->tid);
	}
	p->jvm.thread_changes.n = 0;
	if (r != BATCH_OK)
		return r;
	take_events(t, p, payload, len);
	process_samples_retry(t, p, false, now);
	drop_unloaded_classes(t, p, max_model_bytes, 0, now);
	return BATCH_OK;
}

void process_agent_came(struct process_table *t, struct process *p, uint64_t now)
{
	if (t->recording)
		recording_write_at(t->recording, REC_AGENT, p->pid, now, NULL, 0);
	p->agent_since_ns = now;
}

void process_retry_held(struct process_table *t, struct process *p, uint64_t now)
{
	if (!sample_queue_len(&p->held))
		return;
	if (t->recording)
		recording_write_at(t->recording, REC_RETRY, p->pid, now, NULL, 0);
	process_samples_retry(t, p, false, now);
}

/* The method table shrinks to the methods of the tree's Java frames. */
static void keep_tree_methods(struct process *p)
{
	struct u64_map used;

	u64_map_init(&used);
	if (mark_tree_methods(p, &used) == 0) /* out of memory: keep everything */
		method_table_keep(&p->jvm.methods, named_by_tree, &used);
	u64_map_free(&used);
}

void process_agent_gone(struct process_table *t, struct process *p, bool agent_lost, uint64_t now_ns)
{
	uint8_t lost = agent_lost;

	if (p->state != PROCESS_LIVE)
		return;
	if (t->recording)
		recording_write_at(t->recording, REC_EXIT, p->pid, now_ns, &lost, 1);
	p->state = agent_lost ? PROCESS_AGENT_LOST : PROCESS_EXITED;
	p->exited_ns = now_ns;
	process_samples_retry(t, p, true, now_ns);
	process_settle_waiting(t, p);
	walk_reuse_free(&p->reuse); /* no walk will join them */
	p->stats.walk_memo_bytes = 0;
	/* Nothing will be decoded any more: the code map can go, and of the
	 * methods only those the tree names stay (a JVM reports thousands of
	 * methods; a retained profile names a few hundred). */
	codemap_free(&p->jvm.code);
	keep_tree_methods(p);
}
