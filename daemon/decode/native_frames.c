/* SPDX-License-Identifier: GPL-2.0-only */
#include "native_frames.h"

#include <string.h>

bool native_plan_make(const struct process *p, const struct js_sample *s, struct trace *tr, uint32_t java_n,
		      struct native_plan *plan)
{
	const struct vm_layout *L = &p->jvm.layout;
	uint64_t pc = s->regs[JS_REG_IP];

	memset(plan, 0, sizeof(*plan));
	plan->leaf_at = java_n;
	if (p->native_only) { /* no JVM: the whole stack is native */
		plan->leaf = true;
		return true;
	}
	if (java_n == 0 || !L->valid || (s->flags & JS_SAMPLE_HELD_TRIMMED))
		return false;
	plan->stop_lo = L->code_low;
	plan->stop_hi = L->code_high;
	/* Only a trace with crossings has frames that name one. */
	for (uint32_t i = 0; tr->n_crossings && i < java_n; i++) {
		unsigned k = FRAME_CROSSING(tr->frames[i].flags);

		if (!k || k > tr->n_crossings)
			continue;
		tr->frames[i].flags &= (uint8_t)~(0xfu << FRAME_CROSSING_SHIFT);
		if (plan->n_cross < TRACE_MAX_CROSSINGS)
			plan->cross[plan->n_cross++] = (struct native_crossing){
				.after = i,
				.pc = tr->crossings[k - 1].pc,
				.sp = tr->crossings[k - 1].sp,
				.fp = tr->crossings[k - 1].fp,
			};
	}
	/* In generated code (Java, stubs): no native frame above it. */
	plan->leaf = !(pc >= L->code_low && pc < L->code_high) && !(s->flags & JS_SAMPLE_FROM_ANCHOR);
	return plan->leaf || plan->n_cross;
}

/* Puts the frames of ids (innermost first, n of them) at tr->frames[at],
 * outermost first, moving the frames from at on up; as many as fit, the
 * outermost kept. Returns how many went in. */
static uint32_t put_frames(struct trace *tr, uint32_t at, const uint32_t *ids, unsigned n)
{
	uint32_t m = n;

	if (m > TRACE_MAX_FRAMES - tr->n)
		m = TRACE_MAX_FRAMES - tr->n;
	memmove(&tr->frames[at + m], &tr->frames[at], (tr->n - at) * sizeof(tr->frames[0]));
	for (uint32_t j = 0; j < m; j++)
		tr->frames[at + j] = (struct trace_frame){.method_id = ids[n - 1 - j], .type = FRAME_C, .bci = -1};
	tr->n += m;
	return m;
}

void native_plan_apply(const struct native_plan *plan, const struct native_found *found, struct trace *tr)
{
	uint32_t moved = 0; /* frames put in before the next position */
	unsigned list = 0;

	/* Below each upcall (frames are root first): right after the native
	 * method, in the order the crossings come. */
	for (unsigned i = 0; i < plan->n_cross && list < found->n_lists; i++, list++)
		moved += put_frames(tr, plan->cross[i].after + 1 + moved, found->id[list], found->n[list]);
	/* The outermost native frame follows the Java leaf. */
	if (plan->leaf && list < found->n_lists)
		put_frames(tr, plan->leaf_at + moved, found->id[list], found->n[list]);
}
