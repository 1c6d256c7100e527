#include "native_frames.h"

#include <stdio.h>

#include "kernel_symbols.h"
#include "native_unwind.h"

/* Symbol names per pc stay the same while the process lives: the
 * unwinder caches them; the name ids come from the table kernel frames
 * use too (kernel_symbols.h interns any name). */
static uint32_t name_id(struct native_unwinder *u, uint64_t pc)
{
	char buf[512];

	return kernel_symbols_intern(native_symbolize(u, pc, buf, sizeof(buf)));
}

static void release(void *u)
{
	native_unwinder_free(u);
}

void native_frames_apply(void *ctx, struct process *p, const struct js_sample *s, struct trace *tr)
{
	struct native_unwinder *u;
	const struct vm_layout *L = &p->jvm.layout;
	uint64_t pcs[NATIVE_FRAMES_MAX], pc = s->regs[JS_REG_IP];
	int n;

	/* In generated code (Java, stubs): no native frame above it. */
	if (tr->n == 0 || !L->valid || (pc >= L->code_low && pc < L->code_high) ||
	    (s->flags & (JS_SAMPLE_FROM_ANCHOR | JS_SAMPLE_HELD_TRIMMED)))
		return;
	(void)ctx;
	if (!p->native_state && !p->native_failed) {
		p->native_state = native_unwinder_new(p->pid);
		p->native_state_free = release;
		p->native_failed = p->native_state == NULL; /* not tried again */
	}
	if (!(u = p->native_state))
		return;
	n = native_unwind(u, s, L->code_low, L->code_high, pcs, NATIVE_FRAMES_MAX);
	/* Root first: the outermost native frame follows the Java leaf. */
	for (int i = n; i-- > 0 && tr->n < TRACE_MAX_FRAMES;)
		tr->frames[tr->n++] = (struct trace_frame){.method_id = name_id(u, pcs[i]), .type = FRAME_C,
							   .bci = -1};
}
