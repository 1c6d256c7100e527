#include "native_replay.h"

#include "../kernel_symbols.h"
#include "../native_frames.h"
#include "../native_protocol.h"
#include "../native_unwind.h"

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

bool native_replay_frames(void *ctx, struct recording *rec, struct process *p, const struct js_sample *s,
			  enum decode_status st, struct trace *tr, uint32_t java_n)
{
	struct native_unwinder *u = p->native_state;
	struct native_plan plan;
	struct native_found found;
	uint64_t pcs[NATIVE_FRAMES_MAX];

	(void)ctx;
	(void)rec;
	(void)st;
	/* A recording made without native stacks has no maps to unwind with:
	 * the replay does no more than the live run did. */
	if (!u || !native_plan_make(p, s, tr, java_n, &plan))
		return false;
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
	return false;
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
