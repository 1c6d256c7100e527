/* SPDX-License-Identifier: GPL-2.0-only */
/* The per-sample path of the process table (process.h): a sample is
 * decoded, completed from its thread's stack image, put in context and
 * into the tree; or held until the agent's records catch up, and retried. */
#include "process.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/decode/decoder.h"
#include "daemon/decode/syscall_names.h"
#include "daemon/decode/thread_roles.h"
#include "daemon/record/recording.h"
#include "daemon/support/clock.h"
#include "daemon/support/log.h"
#include "process_internal.h"
#include "wait_states.h"
#include "userspace/profile/safe_text.h"
#include "userspace/profile/thread_pools.h"

/* A decoded trace with a calling frame not at an invoke instruction is
 * impossible: the decoder followed a wrong frame. Counted as `wrong`, and
 * logged with --verbose, so decoder bugs show up in the stats. */
static void log_impossible(const struct process *p, const struct js_sample *s, const struct trace *tr, int at)
{
	static uint32_t logged;
	char caller[256], callee[256];

	if (logged++ >= 50)
		return;
	method_table_name(&p->jvm.methods, tr->frames[at].method_id, caller, sizeof(caller));
	method_table_name(&p->jvm.methods, tr->frames[at + 1].method_id, callee, sizeof(callee));
	log_debug("pid %d tid %u: impossible trace (rule %s): %s (type %u, bci %d) calls %s (type %u), frame %d of %u",
		  (int)p->pid, s->tid, decode_rule_name(tr->top_rule), caller, tr->frames[at].type,
		  tr->frames[at].bci, callee, tr->frames[at + 1].type, at, tr->n);
	{
		/* What the check compared: the caller's call sites around the bci
		 * with the name hash each names, and the callee's own. */
		const struct method_info *m = method_table_get(&p->jvm.methods, tr->frames[at].method_id);
		const struct method_info *c = method_table_get(&p->jvm.methods, tr->frames[at + 1].method_id);
		char sites[256] = "";
		size_t len = 0;

		for (int32_t i = 0; m && method_calls(m) && i < m->body->ncalls && len + 32 < sizeof(sites); i++)
			len += (size_t)snprintf(sites + len, sizeof(sites) - len, " %u:%08x", method_calls(m)[i],
						method_targets(m) ? method_targets(m)[i] : 0);
		log_debug("  caller call sites (bci:target)%s; callee %s hash %08x", sites, c && method_signature(c) ? method_signature(c) : "?",
			  c ? c->body->name_hash : 0);
	}
}

/* A virtual thread's trace (root first) that goes on into its carrier's
 * frames below Continuation.enterSpecial gets a [virtual thread] frame
 * between the two: views move that node to the root (cct_view.h), so a
 * virtual thread's methods add up wherever it was mounted, and --view
 * carrier shows where. Returns the index of the new frame; 0 if it is not
 * one. */
static uint32_t mark_virtual_thread(const struct process *p, struct trace *tr)
{
	uint32_t id = p->enter_special.method_id, k = tr->n;

	if (!id)
		return 0;
	for (uint32_t i = tr->n; i-- > 0;)
		if (tr->frames[i].method_id == id && tr->frames[i].type != FRAME_PSEUDO && tr->frames[i].type != FRAME_KERNEL &&
		    tr->frames[i].type != FRAME_C) {
			k = i;
			break;
		}
	if (k + 1 >= tr->n)
		return 0;
	/* No room for the marker: the carrier's outermost frame gives way. */
	if (tr->n == TRACE_MAX_FRAMES) {
		memmove(&tr->frames[0], &tr->frames[1], (tr->n - 1) * sizeof(tr->frames[0]));
		tr->n--;
		k--;
	}
	memmove(&tr->frames[k + 2], &tr->frames[k + 1], (tr->n - k - 1) * sizeof(tr->frames[0]));
	tr->frames[k + 1] = (struct trace_frame){.method_id = PSEUDO_VTHREAD, .type = FRAME_PSEUDO, .bci = -1};
	tr->n++;
	/* The carrier's crossings are not the virtual thread's. */
	for (uint32_t i = 0; i < tr->n; i++)
		tr->frames[i].flags &= (uint8_t)~(0xfu << FRAME_CROSSING_SHIFT);
	tr->n_crossings = 0;
	return k + 1;
}

/* A decoded trace's place in its thread's context, in decoding order: a
 * resolved one is remembered, an incomplete one gets the remembered
 * context's frames below it (truncated_context.h). Done when the trace is
 * decoded, before any native frames come (they may come later: the
 * context is the Java one, the same live and replayed). Returns how many
 * frames went in at the front. */
static uint32_t contextualize(struct process *p, const struct js_sample *s, enum decode_status st, struct trace *tr)
{
	struct trace_frame prefix[CONTEXT_FRAMES];
	uint32_t k;

	if (st == DECODE_RESOLVED) {
		/* A virtual thread's, through its frozen frames: no context of
		 * its carrier's. */
		if (!tr->via_chunk)
			context_remember(&p->contexts, s->tid, tr);
		return 0;
	}
	if (st != DECODE_INCOMPLETE)
		return 0;
	/* A virtual thread's: the carrier's last context is another thread's. */
	k = tr->frozen ? 0 : context_graft(&p->contexts, s->tid, tr, prefix, CONTEXT_FRAMES);
	if (k == 0 && tr->frozen) {
		prefix[0] = (struct trace_frame){.method_id = PSEUDO_VTHREAD_FROZEN, .type = FRAME_PSEUDO, .bci = -1};
		k = 1;
	}
	if (k == 0) {
		prefix[0] = (struct trace_frame){.method_id = PSEUDO_TRUNCATED, .type = FRAME_PSEUDO, .bci = -1};
		k = 1;
	}
	/* The context's frames name no crossing of this trace. */
	for (uint32_t i = 0; i < k; i++)
		prefix[i].flags &= (uint8_t)~(0xfu << FRAME_CROSSING_SHIFT);
	if (tr->n + k > TRACE_MAX_FRAMES)
		tr->n = TRACE_MAX_FRAMES - k;
	memmove(&tr->frames[k], &tr->frames[0], tr->n * sizeof(tr->frames[0]));
	memcpy(tr->frames, prefix, k * sizeof(prefix[0]));
	tr->n += k;
	return k;
}

static bool has_java_frame(const struct trace *tr)
{
	for (uint32_t i = 0; i < tr->n; i++)
		if (tr->frames[i].type != FRAME_PSEUDO && !frame_named_by_symbol(tr->frames[i].type))
			return true;
	return false;
}

/* An off-CPU trace goes below the [off-CPU] node at the root, which
 * every view but offcpu and wall leaves out (cct_view.h), and ends in the
 * system call it waited in, a kernel frame, then what it waited for
 * (wait_states.h). When the trace is full, its innermost frame gives way
 * to the marker. */
static void mark_off_cpu(struct process *p, const struct js_sample *s, struct trace *tr,
			 const struct off_cpu_weight *w)
{
	uint32_t state = wait_state_frame(&p->jvm.layout, s->flags, s->thread_state, w->runnable, has_java_frame(tr));
	char name[32];
	uint32_t id;

	if (tr->n == TRACE_MAX_FRAMES)
		tr->n--;
	memmove(&tr->frames[1], &tr->frames[0], tr->n * sizeof(tr->frames[0]));
	tr->frames[0] = (struct trace_frame){.method_id = PSEUDO_OFFCPU, .type = FRAME_PSEUDO, .bci = -1};
	tr->n++;
	/* No system call: preempted in user code. */
	if (w->syscall != UINT32_MAX && tr->n < TRACE_MAX_FRAMES - 1) {
		syscall_frame_name(w->syscall, name, sizeof(name));
		if ((id = kernel_symbols_intern_for(&p->names, name)))
			tr->frames[tr->n++] = (struct trace_frame){.method_id = id, .type = FRAME_KERNEL, .bci = -1};
	}
	if (tr->n == TRACE_MAX_FRAMES)
		tr->n--;
	tr->frames[tr->n++] = (struct trace_frame){.method_id = state, .type = FRAME_PSEUDO, .bci = -1};
}

/* Every path starts at its thread's pool (thread_pools.h), after the
 * [off-CPU] root of an off-CPU one: the name the agent reported for the
 * thread, else the kernel's (15 bytes). Names are escaped at interning. */
static void mark_thread(struct process *p, const struct js_sample *s, struct trace *tr)
{
	const struct jvm_thread *t = jvm_model_thread(&p->jvm, s->tid);
	char comm[sizeof(s->comm) + 1], pool[THREAD_POOL_NAME_MAX];
	uint32_t at = tr->n && tr->frames[0].type == FRAME_PSEUDO && tr->frames[0].method_id == PSEUDO_OFFCPU;
	uint32_t id;
	const char *from;
	struct thread_pool_slot *slot = &p->pool_slots[s->tid % PROCESS_POOL_SLOTS];

	_Static_assert(sizeof(slot->from) >= sizeof(t->name) && sizeof(slot->from) > sizeof(s->comm),
		       "a pool slot holds the names it is made from");
	memcpy(comm, s->comm, sizeof(s->comm));
	comm[sizeof(s->comm)] = 0;
	from = t && t->name[0] ? t->name : comm;
	if (slot->id && slot->tid == s->tid && strncmp(slot->from, from, sizeof(slot->from)) == 0) {
		id = slot->id;
	} else {
		thread_pool_name(from, pool, sizeof(pool));
		if (!pool[0] || !(id = kernel_symbols_intern_for(&p->names, pool)))
			return;
		slot->tid = s->tid;
		slot->id = id;
		snprintf(slot->from, sizeof(slot->from), "%s", from);
	}
	if (tr->n == TRACE_MAX_FRAMES)
		tr->n--;
	memmove(&tr->frames[at + 1], &tr->frames[at], (tr->n - at) * sizeof(tr->frames[0]));
	tr->frames[at] = (struct trace_frame){.method_id = id, .type = FRAME_THREAD, .bci = -1};
	tr->n++;
}

/* Inserts a decoded trace into the process's tree: a CPU sample stands
 * for one sampling period, an off-CPU one for the ticks of its wait. */
static void into_tree(struct process_table *t, struct process *p, const struct js_sample *s, struct trace *tr)
{
	struct off_cpu_weight w = {.ticks = 1};
	bool off = s->flags & JS_SAMPLE_OFFCPU;

	if (off) {
		if (!off_cpu_waits_use(&p->waits, s, &w)) {
			p->stats.offcpu_unweighed++;
			return;
		}
		mark_off_cpu(p, s, tr, &w);
	}
	mark_thread(p, s, tr);
	if (cct_add_samples(&p->cct, tr->frames, tr->n, w.ticks,
			    (int64_t)((s->time_ns + t->wall_offset_ns) / 1000000000u), s->tid) != 0) {
		p->stats.dropped++;
		p->stats.dropped_no_memory++;
		return;
	}
	if (off) {
		p->stats.offcpu_ticks += w.ticks;
		p->offcpu_ns += (uint64_t)w.ticks * t->period_ns;
	} else {
		p->profiled_ns += t->period_ns;
	}
}


/* With --verbose, the first failures of each reason are logged with where
 * the walk stopped, for diagnosis. */
static void log_failure(struct process *p, const struct js_sample *s, const struct trace *tr, int reason)
{
	static uint32_t logged[DECODE_FAILURE_COUNT];
	const struct code_blob *b;

	if (reason <= 0 || reason >= DECODE_FAILURE_COUNT || logged[reason]++ >= 100000)
		return;
	b = codemap_find(&p->jvm.code, tr->stop_pc, s->time_ns);
	log_debug("pid %d tid %u [%.16s] flags %#x state %u %s: ip %#llx sp %#llx bp %#llx; stopped at pc %#llx sp %#llx "
		  "fp %#llx after %u frames, in %s blob %s (start %#llx size %u frame %d)",
		  (int)p->pid, s->tid, s->comm, s->flags, s->thread_state, decode_failure_name(reason),
		  (unsigned long long)s->regs[JS_REG_IP], (unsigned long long)s->regs[JS_REG_SP],
		  (unsigned long long)s->regs[JS_REG_BP], (unsigned long long)tr->stop_pc,
		  (unsigned long long)tr->stop_sp, (unsigned long long)tr->stop_fp,
		  tr->n, b ? "a" : "no", b && b->name ? b->name : "",
		  (unsigned long long)(b ? b->start : 0), b ? b->size : 0, b ? b->frame_size_words : 0);
}

/* Slack above the highest word a complete walk read: call_helper's frame
 * around the JavaCallWrapper varies a little between calls. */
#define COPY_END_SLACK 256

/* Learns how far up a thread's stack the decoder ever needs to read (its
 * bottom Java frame is the same for the thread's whole life), so the BPF
 * program can stop copying there; a trimmed copy that turns out too short
 * switches trimming off for that thread. */
static void learn_copy_end(struct process_table *t, struct process *p, const struct js_sample *s,
			   enum decode_status st, const struct trace *tr)
{
	uint64_t *known = u64_map_get(&p->copy_ends, s->tid);
	uint64_t end;

	/* A stack deeper than the copy: copy more of this thread from now on
	 * (doubling, up to the maximum). Only such threads pay for it. */
	if (st == DECODE_INCOMPLETE && (s->flags & JS_SAMPLE_STACK_CAPPED) &&
	    !(s->flags & JS_SAMPLE_HELD_TRIMMED) && t->hooks.on_max_copy &&
	    t->max_fragment_bytes) {
		uint64_t *cur = u64_map_get(&p->max_copies, s->tid);
		uint32_t now = cur ? (uint32_t)*cur : t->fragment_bytes, next = now * 2;

		if (next > t->max_fragment_bytes)
			next = t->max_fragment_bytes;
		if (next > now) {
			u64_map_put(&p->max_copies, s->tid, next);
			t->hooks.on_max_copy(t->hooks.ctx, p, s->tid, next);
		}
	}
	if (!t->hooks.on_copy_end || !(s->flags & JS_SAMPLE_STACK_END_FROM_JVM))
		return;
	if (st == DECODE_INCOMPLETE && (s->flags & JS_SAMPLE_COPY_TRIMMED)) {
		if (known && *known != COPY_END_DISABLED) {
			u64_map_put(&p->copy_ends, s->tid, COPY_END_DISABLED);
			t->hooks.on_copy_end(t->hooks.ctx, p, s->tid, 0);
		}
		return;
	}
	if (st != DECODE_RESOLVED || !tr->max_read || (known && *known == COPY_END_DISABLED))
		return;
	end = (tr->max_read + COPY_END_SLACK + 63) & ~63ull;
	if (s->stack_end && end > s->stack_end)
		end = s->stack_end;
	if (known && *known >= end)
		return;
	u64_map_put(&p->copy_ends, s->tid, end);
	t->hooks.on_copy_end(t->hooks.ctx, p, s->tid, end);
}

/* The table's working memory for decoding, made on first use. */
static bool decode_memory(struct process_table *t)
{
	if (!t->trace)
		t->trace = calloc(1, sizeof(*t->trace));
	if (!t->scratch)
		t->scratch = calloc(1, sizeof(*t->scratch));
	return t->trace && t->scratch;
}

/* A sample taken before the agent came that points at code or a method
 * the agent did not report: unloaded before the attach, gone for good. */
static bool gone_before_agent(const struct process *p, const struct js_sample *s, int reason)
{
	if (!p->early || (p->agent_since_ns && s->time_ns >= p->agent_since_ns))
		return false;
	return reason == DECODE_FAIL_UNKNOWN_CODE || reason == DECODE_FAIL_BAD_RETURN_ADDRESS ||
	       reason == DECODE_FAIL_INTERP_BAD_METHOD || reason == DECODE_FAIL_UNKNOWN_FRAME_SIZE;
}

/* A trace the call-site check rejects (at: the first impossible call from
 * the root) is not put in the tree as decoded: the walk went wrong at the
 * impossible call nearest the top, most often at a return address into
 * code the agent had not reported yet (a method compiled over an old
 * one's place, running before its load event came). Either frame of that
 * call may be the wrong one, so the frames above it are kept, as an
 * incomplete trace placed like a truncated one; none above it: failed. */
static enum decode_status cut_impossible(struct process *p, struct trace *tr, int at, int *reason)
{
	uint32_t callee = (uint32_t)at + 1, keep;

	for (int next; callee + 1 < tr->n &&
		       (next = trace_bad_caller(&p->jvm.methods, tr->frames + callee, tr->n - callee, true)) >= 0;)
		callee += (uint32_t)next + 1;
	keep = tr->n - callee - 1;
	memmove(tr->frames, tr->frames + callee + 1, keep * sizeof(tr->frames[0]));
	tr->n = keep;
	tr->complete = false;
	tr->from_image = false;
	tr->bad_call_known = true;
	tr->bad_call = -1;
	tr->cut_impossible = true;
	if (keep == 0) {
		*reason = DECODE_FAIL_IMPOSSIBLE_CALL;
		return DECODE_FAILED;
	}
	p->stats.wrong_cut++;
	return DECODE_INCOMPLETE;
}

/* What becomes of a decoded sample: counted, checked, handed to the hook,
 * put in the tree. */
static void finish_sample(struct process_table *t, struct process *p, const struct js_sample *s,
			  enum decode_status st, int reason, struct trace *tr)
{
	uint32_t java_n, n_before;

	if (st == DECODE_FAILED && gone_before_agent(p, s, reason))
		reason = DECODE_FAIL_BEFORE_AGENT;
	tr->cut_impossible = false;
	if (st == DECODE_RESOLVED || st == DECODE_INCOMPLETE) {
		/* The walk checked its own resolved trace (and the walk on over
		 * a stack image its completed one), with what the thread's memo
		 * had checked before (walk_reuse.h). */
		int at = st == DECODE_RESOLVED && tr->bad_call_known
				 ? tr->bad_call
				 : trace_bad_caller(&p->jvm.methods, tr->frames, tr->n, true);
		if (at >= 0) {
			p->stats.wrong++;
			if (log_level() >= LOG_DEBUG)
				log_impossible(p, s, tr, at);
			st = cut_impossible(p, tr, at, &reason);
		}
	}
	decode_stats_account(&p->stats, st, reason, tr->top_rule);
	if (st == DECODE_FAILED && log_level() >= LOG_DEBUG)
		log_failure(p, s, tr, reason);
	if (t->hooks.on_decoded)
		t->hooks.on_decoded(t->hooks.ctx, p, s, st, reason, tr);
	/* After the checks and the hook: those see the Java trace only. The
	 * kernel frames now, in sample order; native frames go below them. */
	java_n = tr->n;
	frozen_chunks_release(&p->chunks, s);
	kernel_stacks_apply(&p->kstacks, s, tr, st != DECODE_FAILED);
	if (st == DECODE_FAILED) {
		struct off_cpu_weight unused;

		if (s->flags & JS_SAMPLE_OFFCPU)
			off_cpu_waits_use(&p->waits, s, &unused);
		return;
	}
	n_before = tr->n;
	if (st == DECODE_RESOLVED && mark_virtual_thread(p, tr)) {
		java_n += tr->n - n_before; /* the marker, unless it took the outermost frame's place */
		p->stats.vthread_rooted++;
	} else {
		java_n += contextualize(p, s, st, tr);
	}
	if (t->hooks.add_native_frames && p->state == PROCESS_LIVE &&
	    t->hooks.add_native_frames(t->hooks.ctx, t->recording, p, s, st, tr, java_n))
		return;
	into_tree(t, p, s, tr);
}

/* A non-Java process's trace, native frames and all: none at all is a
 * failure (an empty stack). */
static void finish_native_only(struct process_table *t, struct process *p, const struct js_sample *s, struct trace *tr)
{
	if (tr->n == 0) {
		decode_stats_account(&p->stats, DECODE_FAILED, DECODE_FAIL_EMPTY_STACK, DECODE_RULE_NONE);
		return;
	}
	decode_stats_account(&p->stats, DECODE_NOT_JAVA, DECODE_FAILURE_NONE, DECODE_RULE_NONE);
	into_tree(t, p, s, tr);
}


void process_finish_deferred(struct process_table *t, struct process *p, const struct js_sample *s,
			     enum decode_status st, struct trace *tr)
{
	if (st == DECODE_NOT_JAVA)
		finish_native_only(t, p, s, tr);
	else
		into_tree(t, p, s, tr); /* its context was taken when it was decoded */
}

/* Counts what the thread's stack image did with an incomplete trace;
 * false if the trace waits (BOTTOM_DEFERRED). */
static bool count_completion(struct process *p, enum bottom_outcome how, bool waited)
{
	switch (how) {
	case BOTTOM_COMPLETED:
		p->stats.completed++;
		if (waited)
			p->stats.completed_later++;
		break;
	case BOTTOM_NO_IMAGE:
		p->stats.completion_no_image++;
		break;
	case BOTTOM_MISMATCH:
		p->stats.completion_mismatch++;
		break;
	case BOTTOM_WALK_FAILED:
		p->stats.completion_walk_failed++;
		break;
	case BOTTOM_DEFERRED:
		return false;
	default:
		break;
	}
	return true;
}

static void note_bottoms(struct process *p)
{
	p->stats.stack_images_refused = p->bottoms.refused;
	p->stats.stack_images_idled = p->bottoms.idled;
	p->stats.stack_image_bytes = p->bottoms.bytes;
	p->stats.held_extended = p->bottoms.extended;
	p->stats.completion_pending = p->bottoms.pending;
}

/* A trace that waited for its thread's stack image is settled. */
struct settle_ctx {
	struct process_table *t;
	struct process *p;
};

static void settle_waited(void *ctx, const struct js_sample *s, enum bottom_outcome how, struct trace *tr)
{
	struct settle_ctx *c = ctx;

	count_completion(c->p, how, true);
	finish_sample(c->t, c->p, s, how == BOTTOM_COMPLETED ? DECODE_RESOLVED : DECODE_INCOMPLETE, 0, tr);
}

#define BOTTOM_SINK(T, P) (&(struct bottom_sink){.settle = settle_waited, .ctx = &(struct settle_ctx){(T), (P)}})

/* A stack deeper than its copy: the thread's earlier copies may hold the
 * rest (stack_bottoms.h). A deep stack decoded completely feeds them.
 * false if the trace waits for a later sample. */
static bool complete_from_image(struct process_table *t, struct process *p, const struct decode_ctx *ctx,
				const struct js_sample *s, enum decode_status *st, struct trace *tr)
{
	uint64_t mismatched = p->bottoms.mismatched;
	enum bottom_outcome how;
	bool now;

	/* A virtual thread's frozen frames are in no image of its carrier's. */
	if (tr->frozen || tr->via_chunk) {
		if (tr->via_chunk)
			p->stats.vthread_chunk_walked++;
		if (tr->chunk_rejected)
			p->stats.vthread_chunk_rejected++;
		if (*st == DECODE_INCOMPLETE && tr->frozen)
			p->stats.vthread_frozen++;
		/* A carrier: its samples bring the frozen frames from now on. */
		if (t->hooks.on_carrier && !u64_map_get(&p->carriers, s->tid)) {
			u64_map_put(&p->carriers, s->tid, 1);
			t->hooks.on_carrier(t->hooks.ctx, p, s->tid);
		}
		if (*st == DECODE_INCOMPLETE || tr->via_chunk)
			return true;
	}
	how = stack_bottoms_take(&p->bottoms, ctx, s, *st, tr, &t->scratch->bottom, BOTTOM_SINK(t, p));
	now = count_completion(p, how, false);
	/* The image's words went: the BPF program sends the rest of the
	 * stack with the thread's next copy, to start it again. */
	if (p->bottoms.mismatched != mismatched && t->hooks.on_image_lost)
		t->hooks.on_image_lost(t->hooks.ctx, p, s->tid);

	if (how == BOTTOM_COMPLETED)
		*st = DECODE_RESOLVED;
	note_bottoms(p);
	return now;
}

static struct decode_ctx decode_ctx_of(struct process_table *t, struct process *p, bool final)
{
	return (struct decode_ctx){
		.layout = &p->jvm.layout,
		.code = &p->jvm.code,
		.methods = &p->jvm.methods,
		.scratch = t->scratch,
		.final = final,
		.chunks = &p->chunks,
		.enter_special = &p->enter_special,
	};
}

/* A gap-filling window (JS_SAMPLE_FILL) is no sample: it only extends its
 * thread's stack image, for the sample that follows it. */
static void take_fill(struct process_table *t, struct process *p, const struct js_sample *s)
{
	p->stats.fills++;
	if (decode_memory(t)) {
		struct decode_ctx ctx = decode_ctx_of(t, p, false);

		if (stack_bottoms_fill(&p->bottoms, &ctx, s, &t->scratch->bottom, BOTTOM_SINK(t, p)))
			p->stats.fills_used++;
		note_bottoms(p);
	}
}

/* s with only its own copy, the first fragment_len bytes (in malloc'd
 * memory); NULL if out of memory. */
static struct js_sample *own_fragment(const struct js_sample *s, uint32_t fragment_len)
{
	struct js_sample *own = malloc(sizeof(*s) + fragment_len);

	if (own) {
		memcpy(own, s, sizeof(*s) + fragment_len);
		own->stack_len = fragment_len;
	}
	return own;
}

/* Decodes s, of which the first fragment_len bytes are its own copy (the
 * rest its thread's image's words it took along when it was held); returns
 * false if it must wait for newer agent data. */
static bool try_decode(struct process_table *t, struct process *p, const struct js_sample *s, uint32_t fragment_len,
		       bool final)
{
	struct js_sample *own = NULL;
	struct trace *tr;
	enum decode_status st, walked;
	int reason;

	if (!decode_memory(t)) {
		p->stats.dropped++;
		p->stats.dropped_no_memory++;
		return true;
	}
	struct decode_ctx ctx = decode_ctx_of(t, p, final);
	tr = t->trace;
	if (!t->no_walk_reuse)
		ctx.memo = walk_reuse_of(&p->reuse, s->tid);
	st = decode_sample(&ctx, s, tr, &reason);
	if (st == DECODE_FAILED && fragment_len < s->stack_len && (own = own_fragment(s, fragment_len))) {
		/* The walk failed in the words taken along: as the sample
		 * would have without them (a completion that fails leaves the
		 * trace incomplete). */
		s = own;
		st = decode_sample(&ctx, s, tr, &reason);
	}
	if (st == DECODE_RETRY) {
		free(own);
		return false;
	}
	walked = st;
	learn_copy_end(t, p, s, walked, tr);
	/* JVM-internal threads need no stack copies from now on. */
	if (st == DECODE_NOT_JAVA && tr->n == 1 && tr->frames[0].method_id != PSEUDO_NATIVE &&
	    t->hooks.on_internal_thread && !u64_map_get(&p->internal_threads, s->tid)) {
		u64_map_put(&p->internal_threads, s->tid, 1);
		t->hooks.on_internal_thread(t->hooks.ctx, p, s->tid);
	}
	bool finish = complete_from_image(t, p, &ctx, s, &st, tr);
	/* The walk on over a stack image joins the thread's walks too. */
	if (tr->joined) {
		p->stats.walks_joined++;
		p->stats.frames_joined += tr->joined;
	}
	p->stats.walk_memo_bytes = p->reuse.bytes;
	if (finish)
		finish_sample(t, p, s, st, reason, tr);
	free(own);
	return true;
}

/* Traces waiting for stack images are settled as they are: no more
 * samples will come to complete them. */
void process_settle_waiting(struct process_table *t, struct process *p)
{
	stack_bottoms_flush(&p->bottoms, BOTTOM_SINK(t, p));
	note_bottoms(p);
}

/* Past this long after its hold time by jsampled's own clock, a sample
 * stops waiting whatever the agent says (one that never reports a newer
 * state would hold it forever). Generous: at a JVM's start its agent may
 * stream records for many seconds before its state is complete again. */
#define HOLD_GRACE_NS (30ull * 1000000000)

/* A held sample stops waiting once the agent has reported state from well
 * after it (hold_ns later), once no more agent data will come, or once it
 * has waited well past its time. */
static bool hold_expired(const struct process *p, const struct js_sample *s, uint64_t now)
{
	/* Sampled since its exec: everything waits for the agent's model. */
	if (p->early && !p->agent_since_ns && p->state == PROCESS_LIVE)
		return false;
	return p->state != PROCESS_LIVE || p->agent_cut_ns >= s->time_ns + p->hold_ns ||
	       now >= s->time_ns + p->hold_ns + HOLD_GRACE_NS;
}

/* A sample of a non-Java process: its native frames (the hook) and kernel
 * frames are the trace; none at all is a failure (an empty stack). */
static void take_native_only(struct process_table *t, struct process *p, const struct js_sample *s)
{
	struct trace *tr;

	if (!decode_memory(t)) {
		p->stats.dropped++;
		p->stats.dropped_no_memory++;
		return;
	}
	tr = t->trace;
	tr->n = 0;
	tr->n_crossings = 0;
	tr->complete = true;
	tr->top_rule = DECODE_RULE_NONE;
	kernel_stacks_apply(&p->kstacks, s, tr, true);
	if (t->hooks.add_native_frames && p->state == PROCESS_LIVE &&
	    t->hooks.add_native_frames(t->hooks.ctx, t->recording, p, s, DECODE_NOT_JAVA, tr, 0))
		return;
	finish_native_only(t, p, s, tr);
}

/* A JVM-internal thread's sample waiting for the VM layout (a JVM sampled
 * since its exec: the compiler threads are busy then) is attributed by its
 * thread's name alone: its stack need not be held, nor copied from now on.
 * Unless native frames are unwound, which need the stack. */
static bool held_without_stack(struct process_table *t, struct process *p, const struct js_sample *s)
{
	if (p->jvm.layout.valid || t->hooks.add_native_frames || !thread_role_of(s->comm))
		return false;
	if (t->hooks.on_internal_thread && !u64_map_get(&p->internal_threads, s->tid)) {
		u64_map_put(&p->internal_threads, s->tid, 1);
		t->hooks.on_internal_thread(t->hooks.ctx, p, s->tid);
	}
	return true;
}

void process_take_sample(struct process_table *t, struct process *p, const struct js_sample *s, uint64_t now)
{
	uint32_t trimmed = 0;
	int dropped;

	if (t->recording)
		recording_write_at(t->recording, REC_SAMPLE, p->pid, now, s, sample_bytes(s));
	/* A copy running past the top of the address space is no thread's
	 * stack, and every range check below relies on addr + len not
	 * wrapping: counted, not taken. */
	if (s->stack_addr + s->stack_len < s->stack_addr) {
		t->malformed_samples++;
		return;
	}
	p->stats.stack_bytes += s->stack_len;
	if (s->flags & JS_SAMPLE_FILL) {
		take_fill(t, p, s);
		return;
	}
	if (s->flags & JS_SAMPLE_KSTACK) {
		kernel_stacks_take(&p->kstacks, s);
		return;
	}
	if (s->flags & JS_SAMPLE_CHUNK) {
		p->stats.vthread_chunks++;
		frozen_chunks_take(&p->chunks, s);
		return;
	}
	if (s->flags & JS_SAMPLE_WAIT) {
		off_cpu_waits_take(&p->waits, s);
		return;
	}
	p->stats.samples++;
	if (s->flags & JS_SAMPLE_OFFCPU)
		p->stats.offcpu_samples++;
	if (s->flags & JS_SAMPLE_KERNEL_MODE)
		p->stats.kernel_mode++;
	if (p->native_only) {
		take_native_only(t, p, s);
		return;
	}
	if (try_decode(t, p, s, s->stack_len, hold_expired(p, s, now)))
		return;
	p->stats.held_total++;
	if (log_level() >= LOG_DEBUG && p->stats.held_total % 100 == 1)
		log_debug("held: tid %u t %llu waits %u for %#llx", s->tid, (unsigned long long)s->time_ns,
			  t->trace->wait, (unsigned long long)t->trace->wait_key);
	if (t->trace->wait < 4)
		p->stats.held_for[t->trace->wait]++;
	p->wants_fetch = true;
	if (held_without_stack(t, p, s)) {
		struct js_sample head = *s;

		head.stack_len = 0;
		dropped = sample_queue_push(&p->held, &head, 0, t->trace->wait, t->trace->wait_key, &trimmed);
	} else {
		/* Decoded after newer samples of its thread, a deep sample
		 * could borrow nothing from its stack image then: it takes
		 * the image's words along now (stack_bottoms.h). */
		const struct js_sample *whole = stack_bottoms_extend(&p->bottoms, s, SAMPLE_QUEUE_MAX_COPY,
								     &t->extended, &t->extended_size);

		dropped = sample_queue_push(&p->held, whole, s->stack_len, t->trace->wait, t->trace->wait_key,
					    &trimmed);
		note_bottoms(p);
	}
	p->stats.held_trimmed += trimmed;
	if (dropped != 0) {
		uint64_t n = dropped < 0 ? 1 : (uint64_t)dropped;
		p->stats.dropped += n;
		p->stats.dropped_queue_full += n;
	}
}

/* Whether the model now has what a held sample waited for (cheap: a held
 * sample is only decoded again when this says it might succeed). */
static bool wait_over(const struct process *p, const struct held_sample *h)
{
	switch (h->wait) {
	case WAIT_LAYOUT:
		return p->jvm.layout.valid;
	case WAIT_CODE:
		return codemap_find((struct codemap *)&p->jvm.code, h->key, h->s->time_ns) != NULL;
	case WAIT_METHOD:
		return method_table_by_ptr(&p->jvm.methods, h->key) != 0;
	default:
		return true;
	}
}

/* Each held sample is looked at once; those still waiting go back in order. */
void process_samples_retry(struct process_table *t, struct process *p, bool final, uint64_t now)
{
	size_t n = sample_queue_len(&p->held);
	struct held_sample h;

	for (size_t i = 0; i < n && sample_queue_pop(&p->held, &h); i++) {
		bool expired = final || hold_expired(p, h.s, now);

		if (expired || wait_over(p, &h)) {
			const struct js_sample *whole = sample_queue_view(&p->held, &h);

			if (!whole || try_decode(t, p, whole, h.fragment_len, expired)) {
				if (!whole) {
					p->stats.dropped++;
					p->stats.dropped_no_memory++;
				}
				sample_queue_release(&p->held, &h);
				continue;
			}
			h.wait = t->trace->wait;
			h.key = t->trace->wait_key;
		}
		if (sample_queue_requeue(&p->held, &h) < 0) {
			p->stats.dropped++;
			p->stats.dropped_no_memory++;
			sample_queue_release(&p->held, &h);
		}
	}
	p->wants_fetch = sample_queue_len(&p->held) > 0;
	if (!p->wants_fetch)
		sample_queue_drop_view(&p->held);
}

void process_samples_forget_thread(struct process_table *t, struct process *p, uint32_t host)
{
	u64_map_del(&p->copy_ends, host);
	u64_map_del(&p->max_copies, host);
	u64_map_del(&p->internal_threads, host);
	u64_map_del(&p->carriers, host);
	context_forget(&p->contexts, host);
	stack_bottoms_forget(&p->bottoms, host, BOTTOM_SINK(t, p));
	walk_reuse_forget(&p->reuse, host);
}
