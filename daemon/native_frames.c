#include "native_frames.h"

#include <stdio.h>
#include <string.h>

#include "kernel_symbols.h"
#include "native_unwind.h"
#include "recording.h"

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

/* Live: each maps text the unwinder reads goes into the recording. */
static void record_maps(void *ctx, pid_t pid, const char *maps, size_t len)
{
	if (ctx)
		recording_write(ctx, REC_MAPS, pid, maps, len);
}

/* Live and recorded: the process's vDSO image, once (read from its memory
 * only for a recording). */
static void record_vdso(void *ctx, pid_t pid, const void *image, size_t len)
{
	if (ctx)
		recording_write(ctx, REC_VDSO, pid, image, len);
}

static struct native_unwinder *unwinder_of(struct process *p, struct recording *rec, bool live)
{
	if (live && !p->native_state && !p->native_failed) {
		p->native_state = native_unwinder_new(p->pid, record_maps, rec ? record_vdso : NULL, rec);
		p->native_state_free = release;
		p->native_failed = p->native_state == NULL; /* not tried again */
	}
	return p->native_state;
}

/* Puts the frames of pcs (innermost first, n of them) at tr->frames[at],
 * outermost first, moving the frames from at on up; as many as fit, the
 * outermost kept. */
static void put_frames(struct native_unwinder *u, struct trace *tr, uint32_t at, const uint64_t *pcs, int n)
{
	uint32_t m = n > 0 ? (uint32_t)n : 0;

	if (m > TRACE_MAX_FRAMES - tr->n)
		m = TRACE_MAX_FRAMES - tr->n;
	memmove(&tr->frames[at + m], &tr->frames[at], (tr->n - at) * sizeof(tr->frames[0]));
	for (uint32_t j = 0; j < m; j++)
		tr->frames[at + j] = (struct trace_frame){
			.method_id = name_id(u, pcs[n - 1 - (int)j]), .type = FRAME_C, .bci = -1};
	tr->n += m;
}

/* Below a JNI upcall (native -> JavaCalls -> call stub -> Java): the
 * VM/native frames between the older Java frame (the native method) and
 * the upcall's Java frames, unwound from the call stub's caller up to the
 * code cache, go right after that older frame (frames are root first). */
static void splice_crossings(struct native_unwinder *u, const struct vm_layout *L, const struct js_sample *s,
			     struct trace *tr)
{
	uint64_t pcs[NATIVE_FRAMES_MAX];

	for (uint32_t i = 0; i < tr->n; i++) {
		unsigned k = FRAME_CROSSING(tr->frames[i].flags);
		const struct trace_crossing *c;
		uint32_t before = tr->n;
		int n;

		if (!k || k > tr->n_crossings)
			continue;
		tr->frames[i].flags &= (uint8_t)~(0xfu << FRAME_CROSSING_SHIFT);
		c = &tr->crossings[k - 1];
		n = native_unwind_from(u, s, c->pc, c->sp, c->fp, L->code_low, L->code_high, pcs, NATIVE_FRAMES_MAX);
		put_frames(u, tr, i + 1, pcs, n);
		i += tr->n - before;
	}
}

static void apply(struct process *p, struct recording *rec, bool live, const struct js_sample *s,
		  struct trace *tr)
{
	struct native_unwinder *u;
	const struct vm_layout *L = &p->jvm.layout;
	uint64_t pcs[NATIVE_FRAMES_MAX], pc = s->regs[JS_REG_IP];
	bool leaf, crossed = false;
	int n;

	/* A replay of a recording made without native stacks has no maps to
	 * unwind with: it does no more than the live run did (no hook). */
	if (!live && !p->native_state)
		return;
	if (p->native_only) { /* no JVM: the whole stack is native */
		if (!(u = unwinder_of(p, rec, live)))
			return;
		n = native_unwind(u, s, 0, 0, pcs, NATIVE_FRAMES_MAX);
		put_frames(u, tr, tr->n, pcs, n);
		return;
	}
	if (tr->n == 0 || !L->valid || (s->flags & JS_SAMPLE_HELD_TRIMMED))
		return;
	/* Only a trace with crossings has frames that name one. */
	for (uint32_t i = 0; tr->n_crossings && i < tr->n && !crossed; i++)
		crossed = FRAME_CROSSING(tr->frames[i].flags) != 0;
	/* In generated code (Java, stubs): no native frame above it. */
	leaf = !(pc >= L->code_low && pc < L->code_high) && !(s->flags & JS_SAMPLE_FROM_ANCHOR);
	if ((!leaf && !crossed) || !(u = unwinder_of(p, rec, live)))
		return;
	if (crossed)
		splice_crossings(u, L, s, tr);
	if (!leaf)
		return;
	n = native_unwind(u, s, L->code_low, L->code_high, pcs, NATIVE_FRAMES_MAX);
	put_frames(u, tr, tr->n, pcs, n); /* the outermost native frame follows the Java leaf */
}

void native_frames_apply(void *ctx, struct recording *rec, struct process *p, const struct js_sample *s,
			 struct trace *tr)
{
	(void)ctx;
	apply(p, rec, true, s, tr);
}

void native_frames_apply_replay(void *ctx, struct recording *rec, struct process *p, const struct js_sample *s,
				struct trace *tr)
{
	(void)ctx;
	apply(p, rec, false, s, tr);
}

int native_frames_replay_maps(struct process *p, const char *maps, size_t len)
{
	if (p->native_state)
		return native_unwinder_set_maps(p->native_state, maps, len);
	if (p->native_failed)
		return -1;
	p->native_state = native_unwinder_new_replay(p->pid, maps, len);
	p->native_state_free = release;
	p->native_failed = p->native_state == NULL;
	return p->native_state ? 0 : -1;
}

int native_frames_replay_vdso(struct process *p, const void *image, size_t len)
{
	return native_unwinder_set_vdso(p->native_state, image, len);
}
