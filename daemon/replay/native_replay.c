/* SPDX-License-Identifier: GPL-2.0-only */
#include "native_replay.h"

#include <stdlib.h>
#include <string.h>

#include "userspace/profile/kernel_symbols.h"
#include "daemon/decode/native_frames.h"
#include "daemon/native/native_protocol.h"
#include "daemon/native/native_unwind.h"

struct waiting {
	struct process *p;
	enum decode_status st;
	struct native_plan plan;
	uint32_t n;
	struct trace_frame *frames;
	struct js_sample *s; /* with its stack */
};

static struct process_table *table;
static struct waiting *waiting;
static size_t nwaiting, waiting_cap;
static struct trace *scratch;

void native_replay_use(struct process_table *t)
{
	table = t;
}

static void release(void *u)
{
	native_unwinder_free(u);
}

/* The names as the helper gives them (NATIVE_NAME_MAX), interned. */
static unsigned named(struct process *p, struct native_unwinder *u, const uint64_t *pcs, int n, uint32_t *ids)
{
	char name[NATIVE_NAME_MAX];

	for (int i = 0; i < n; i++) {
		native_symbolize(u, pcs[i], name, sizeof(name));
		ids[i] = kernel_symbols_intern_for(&p->names, name[0] ? name : "[unknown]");
	}
	return n > 0 ? (unsigned)n : 0;
}

static void unwind_into(struct process *p, const struct js_sample *s, const struct native_plan *pl, struct trace *tr)
{
	struct native_unwinder *u = p->native_state;
	struct native_plan plan = *pl;
	struct native_found found;
	uint64_t pcs[NATIVE_FRAMES_MAX];

	if (!u)
		return;
	found.n_lists = 0;
	for (unsigned i = 0; i < plan.n_cross; i++) {
		const struct native_crossing *c = &plan.cross[i];
		int n = native_unwind_from(u, s, c->pc, c->sp, c->fp, plan.stop_lo, plan.stop_hi, pcs, NATIVE_FRAMES_MAX);

		found.n[found.n_lists] = named(p, u, pcs, n, found.id[found.n_lists]);
		found.n_lists++;
	}
	if (plan.leaf) {
		int n = native_unwind(u, s, plan.stop_lo, plan.stop_hi, pcs, NATIVE_FRAMES_MAX);

		found.n[found.n_lists] = named(p, u, pcs, n, found.id[found.n_lists]);
		found.n_lists++;
	}
	native_plan_apply(&plan, &found, tr);
}

bool native_replay_frames(void *ctx, struct recording *rec, struct process *p, const struct js_sample *s,
			  enum decode_status st, struct trace *tr, uint32_t java_n)
{
	struct native_plan plan;
	struct waiting *w;

	(void)ctx;
	(void)rec;
	if (!native_plan_make(p, s, tr, java_n, &plan))
		return false;
	if (p->native_state || p->native_failed || !table) {
		/* A recording made without native stacks has no maps to unwind
		 * with: the replay does no more than the live run did. */
		unwind_into(p, s, &plan, tr);
		return false;
	}
	if (nwaiting == waiting_cap) {
		size_t cap = waiting_cap ? waiting_cap * 2 : 64;
		struct waiting *v = realloc(waiting, cap * sizeof(*v));

		if (!v)
			return false;
		waiting = v;
		waiting_cap = cap;
	}
	w = &waiting[nwaiting];
	*w = (struct waiting){.p = p, .st = st, .plan = plan, .n = tr->n};
	w->frames = malloc(tr->n * sizeof(tr->frames[0]) + 1);
	w->s = malloc(sizeof(*s) + s->stack_len);
	if (!w->frames || !w->s) {
		free(w->frames);
		free(w->s);
		return false;
	}
	memcpy(w->frames, tr->frames, tr->n * sizeof(tr->frames[0]));
	memcpy(w->s, s, sizeof(*s) + s->stack_len);
	nwaiting++;
	return true;
}

void native_replay_settle(void)
{
	if (!nwaiting)
		return;
	if (!scratch && !(scratch = calloc(1, sizeof(*scratch))))
		return;
	for (size_t i = 0; i < nwaiting; i++) {
		struct waiting *w = &waiting[i];

		scratch->n = w->n;
		scratch->n_crossings = 0;
		memcpy(scratch->frames, w->frames, w->n * sizeof(w->frames[0]));
		unwind_into(w->p, w->s, &w->plan, scratch);
		process_finish_deferred(table, w->p, w->s, w->st, scratch);
		free(w->frames);
		free(w->s);
	}
	nwaiting = 0;
}

int native_replay_maps(struct process *p, const char *maps, size_t len)
{
	if (p->native_state)
		return native_unwinder_set_maps(p->native_state, maps, len);
	if (p->native_failed)
		return -1;
	p->native_state = native_unwinder_new(p->pid, maps, len, &native_files_host);
	p->native_state_free = release;
	p->native_failed = p->native_state == NULL;
	return p->native_state ? 0 : -1;
}

int native_replay_vdso(struct process *p, const void *image, size_t len)
{
	return native_unwinder_set_vdso(p->native_state, image, len);
}
