/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * jsampled's sampler: on every cpu-clock tick of a target process, copy the
 * interrupted thread's user registers and the live part of its user stack
 * (from sp up to the end of the stack, at most fragment_bytes) into a ring
 * buffer. Decoding happens later, in user space (ICPE'14, Hofer &
 * Mössenböck, section 2.1).
 *
 * Costs measured on the project machines (docs/hotspot.md, section 4): the stack
 * copy dominates, so only the live part is copied; a ring-buffer wake-up per
 * record stalls the sampling timer, so records are submitted without one and
 * the consumer drains on a timer, with a forced wake-up past a watermark.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "sampler.h"

char LICENSE[] SEC("license") = "GPL";

/* Knobs, set by the loader before load. */
const volatile __u32 fragment_bytes = JS_DEFAULT_FRAGMENT_BYTES;
const volatile __u64 wakeup_watermark = 4u << 20;
const volatile __u32 fill_bytes = JS_DEFAULT_FILL_BYTES; /* 0: no gap-filling windows */
const volatile bool kernel_stacks = false; /* record the kernel stack of kernel-mode ticks */
/* Copy native frames too: from sp even where a frame anchor marks the
 * Java frames' start, and JVM-internal threads' stacks (up to
 * fragment_bytes): jsampled unwinds them with DWARF CFI. */
const volatile bool native_stacks = false;
/* Off-CPU samples: a tick every offcpu_period_ns of a thread's time off
 * CPU (0: none). Not a constant: it follows the sampling period, which a
 * reload may change. */
volatile __u64 offcpu_period_ns = 0;
/* Changes whenever the targets change (jsampled adds or removes one, this
 * program removes one at an exec or exit): a thread's cached answer to "is
 * its process a target" is checked again then. */
volatile __u64 targets_gen = 1;
/* Changes each time the off-CPU programs are attached: a wait that began
 * while they were not is of unknown length, and forgotten. */
volatile __u64 offcpu_epoch = 1;
const volatile __u32 nr_cpus = 1; /* possible CPUs */
const volatile __u32 stash_slots = 1; /* entries of the stash map */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64u << 20); /* resized by the loader */
} samples SEC(".maps");

/* tgid -> struct js_target: the processes to sample. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, JS_MAX_TARGETS);
	__type(key, __u32);
	__type(value, struct js_target);
} targets SEC(".maps");

/* tid -> stack bounds and JavaThread anchor (see sampler.h). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, JS_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct js_thread_info);
} threads SEC(".maps");

/* One record under construction per CPU and program kind. A plain array
 * indexed by CPU (off-CPU samples: + nr_cpus at system calls' returns, + 2 nr_cpus at switches, since a timer tick's
 * sample may interrupt one on the same CPU), because per-CPU map values
 * are limited to 32 KiB. The extra page lets the
 * page-wise copy below use a masked offset the verifier can bound. */
#define JS_SCRATCH_BYTES (sizeof(struct js_sample) + JS_MAX_FRAGMENT_BYTES + JS_PAGE_SIZE)
struct scratch {
	__u8 buf[JS_SCRATCH_BYTES];
};
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1); /* set to twice the number of possible CPUs by the loader */
	__type(key, __u32);
	__type(value, struct scratch);
} scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256u << 10);
} execs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct js_counters);
} counters SEC(".maps");

/* A page of zeros (array maps start zeroed; nothing writes it): what a
 * stack page the thread never touched would read as. */
struct zero_page {
	__u8 bytes[JS_PAGE_SIZE];
};
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct zero_page);
} zeros SEC(".maps");

struct vma_bounds {
	__u64 start;
	__u64 end;
};

static long vma_bounds_cb(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct vma_bounds *b = data;

	b->start = BPF_CORE_READ(vma, vm_start);
	b->end = BPF_CORE_READ(vma, vm_end);
	return 0;
}

/* The thread's stack bounds: from the thread cache when sp lies inside the
 * cached range, else from the VMA holding sp (bpf_find_vma takes the mmap
 * lock with a trylock and defers the unlock to irq_work in this context, so
 * it runs once per thread, not per sample). */
static __always_inline struct js_thread_info *thread_info(struct task_struct *task, __u32 tgid, __u32 tid,
							  __u64 sp, struct js_counters *cnt)
{
	struct js_thread_info *ti = bpf_map_lookup_elem(&threads, &tid);
	struct vma_bounds b = {};

	/* An entry is trusted only for the process that owns it: tids are
	 * reused, and jsampled writes entries on an agent's word. */
	if (ti && ti->tgid == tgid && sp >= ti->stack_low && sp < ti->stack_end)
		return ti;
	if (cnt)
		cnt->vma_lookups++;
	if (bpf_find_vma(task, sp, vma_bounds_cb, &b, 0) != 0 || b.end <= sp) {
		if (cnt)
			cnt->vma_lookup_failed++;
		return NULL;
	}
	struct js_thread_info fresh = {
		.stack_end = b.end,
		.stack_low = b.start,
		.tgid = tgid,
		.ticked = ti && ti->tgid == tgid ? ti->ticked : 0,
	};
	bpf_map_update_elem(&threads, &tid, &fresh, BPF_ANY);
	return bpf_map_lookup_elem(&threads, &tid);
}

/* JavaFrameAnchor is three words (last_Java_sp, _pc, _fp in some order,
 * offsets from vmStructs): one read of all of it, each user-memory read
 * being the main cost of a sample after the stack copy. Only the offsets
 * 0, 8 and 16 exist (jsampled checks the layout too). */
static __always_inline int read_anchor_words(struct js_sample *s, __u64 anchor, __u16 sp_off, __u16 fp_off,
					     __u16 pc_off)
{
	__u64 v[3] = {};

	if ((sp_off | fp_off | pc_off) & 7 || sp_off > 16 || fp_off > 16 || pc_off > 16)
		return -1;
	if (bpf_probe_read_user(v, sizeof(v), (void *)anchor))
		return -1;
	s->anchor_sp = v[sp_off >> 3];
	s->anchor_fp = v[fp_off >> 3];
	s->anchor_pc = v[pc_off >> 3];
	s->flags |= JS_SAMPLE_HAS_ANCHOR;
	return 0;
}

/* Reads an object field holding a reference: a narrow oop or a full one. */
static __always_inline __u64 read_oop_field(const struct js_target *tg, __u64 obj, __u32 off)
{
	__u64 v = 0;

	if (tg->narrow_oops) {
		__u32 n = 0;

		if (bpf_probe_read_user(&n, 4, (void *)(obj + off)) || !n)
			return 0;
		return tg->narrow_base + ((__u64)n << (tg->narrow_shift & 7));
	}
	if (bpf_probe_read_user(&v, 8, (void *)(obj + off)))
		return 0;
	return v;
}

/* An off-CPU sample of a Java thread: its java.lang.Thread status, what
 * the JVM says the thread waits for (sleeping, parked, in Object.wait, on
 * a monitor), three or four more reads only for these samples. */
static __always_inline void read_thread_status(struct js_sample *s, __u64 thread, const struct js_target *tg)
{
	__u64 handle = 0, obj = 0;
	__u32 status = 0;

	if (!(s->flags & JS_SAMPLE_OFFCPU) || !(s->flags & JS_SAMPLE_HAS_STATE) || !tg || !tg->thread_status_off ||
	    !tg->threadobj_off || !thread)
		return;
	if (bpf_probe_read_user(&handle, 8, (void *)(thread + tg->threadobj_off)) || !handle ||
	    bpf_probe_read_user(&obj, 8, (void *)handle) || !obj)
		return;
	if (tg->thread_holder_off && !(obj = read_oop_field(tg, obj, tg->thread_holder_off)))
		return;
	if (bpf_probe_read_user(&status, 4, (void *)(obj + tg->thread_status_off)))
		return;
	s->thread_state = JS_JVM_STATE(s->thread_state) | (status & 0xffff) << 16;
	s->flags |= JS_SAMPLE_HAS_STATUS;
}

static __always_inline void read_anchor(struct js_sample *s, const struct js_thread_info *ti,
					const struct js_target *tg)
{
	if (!ti->anchor_addr || read_anchor_words(s, ti->anchor_addr, ti->anchor_sp_off, ti->anchor_fp_off,
						  ti->anchor_pc_off))
		return;
	if (ti->state_addr && bpf_probe_read_user(&s->thread_state, 4, (void *)ti->state_addr) == 0) {
		s->flags |= JS_SAMPLE_HAS_STATE;
		/* The JavaThread, from its state's address. */
		if (tg && tg->state_off)
			read_thread_status(s, ti->state_addr - (tg->state_off & 0xffff), tg);
	}
}

/* A thread jsampled has not registered (yet): find its JavaThread through
 * HotSpot's thread-local Thread::_thr_current (x86-64 glibc: the TCB at
 * fsbase holds the DTV pointer at +8; the DTV has a 16-byte entry per TLS
 * module). The Thread* of a JVM-internal thread that is not a JavaThread
 * yields an anchor and state the decoder does not trust blindly: it
 * validates the anchor against the stack and the state against the
 * JavaThreadState values. */
static __always_inline void read_anchor_tls(struct js_sample *s, struct task_struct *task,
					    const struct js_target *tg)
{
	__u64 fsbase = BPF_CORE_READ(task, thread.fsbase);
	__u64 dtv, block, thread;

	if (!tg->tls_modid || !fsbase)
		return;
	if (bpf_probe_read_user(&dtv, 8, (void *)(fsbase + 8)) || !dtv ||
	    bpf_probe_read_user(&block, 8, (void *)(dtv + 16 * (__u64)(tg->tls_modid & 0xffff))) ||
	    !block || block == ~0ull ||
	    bpf_probe_read_user(&thread, 8, (void *)(block + (tg->tls_offset & 0xffff))) || !thread)
		return;
	if (read_anchor_words(s, thread + (tg->anchor_off & 0xffff), tg->anchor_sp_off, tg->anchor_fp_off,
			      tg->anchor_pc_off))
		return;
	s->flags |= JS_SAMPLE_THREAD_FROM_TLS;
	if (tg->state_off &&
	    bpf_probe_read_user(&s->thread_state, 4, (void *)(thread + (tg->state_off & 0xffff))) == 0) {
		s->flags |= JS_SAMPLE_HAS_STATE;
		read_thread_status(s, thread, tg);
	}
}

/* The state of a page-by-page copy (copy_stack), passed to copy_page. */
struct page_copy {
	__u8 *dst;
	__u64 sp;
	__u32 len, copied;
	const struct zero_page *zero; /* NULL: an unreadable page ends the copy */
	struct js_sample *s;
	struct js_counters *cnt;
};

/* One page of a copy (a bpf_loop callback: verified once, not per page).
 * 1 ends the loop. */
static long copy_page(__u32 i, void *arg)
{
	struct page_copy *c = arg;
	__u32 copied = c->copied;
	__u64 chunk;
	__u8 *to;

	(void)i;
	if (copied >= c->len || copied >= JS_MAX_FRAGMENT_BYTES)
		return 1;
	chunk = JS_PAGE_SIZE - ((c->sp + copied) & (JS_PAGE_SIZE - 1));
	if (chunk > c->len - copied)
		chunk = c->len - copied;
	/* Keep the bound visible to the verifier. */
	asm volatile("" : "+r"(chunk));
	if (chunk > JS_PAGE_SIZE || chunk == 0)
		return 1;
	to = c->dst + (copied & (JS_MAX_FRAGMENT_BYTES - 1));
	if (bpf_probe_read_user(to, chunk, (void *)(c->sp + copied)) != 0) {
		if (!(c->s->flags & JS_SAMPLE_STACK_FAULT) && c->cnt)
			c->cnt->copy_fault++;
		c->s->flags |= JS_SAMPLE_STACK_FAULT;
		if (!c->zero || bpf_probe_read_kernel(to, chunk, c->zero->bytes) != 0)
			return 1;
		c->s->flags |= JS_SAMPLE_STACK_HOLE;
	}
	c->copied = copied + (__u32)chunk;
	return 0;
}

/* Copy [sp, sp+len) into dst. One read when every page is readable, else
 * page by page. A page that cannot be read (a BPF program cannot fault one
 * in) ends the copy, unless holes is set (the range lies within the
 * thread's stack): then it is copied as zeros and the copy goes on. A
 * function with a frame larger than a page can leave a page of the stack
 * untouched, which reads as zeros once touched; the words beyond it are
 * the older frames (HotSpot 25's main thread starting the VM had such a
 * hole under its first Java frames). Returns the number of bytes copied. */
static __always_inline __u32 copy_stack(__u8 *dst, __u64 sp, __u32 len, bool holes, struct js_sample *s,
					struct js_counters *cnt)
{
	__u32 zero_key = 0;
	struct page_copy c = {.dst = dst, .sp = sp, .s = s, .cnt = cnt};
	__u64 n = len;

	/* Keep the bound visible to the verifier (clang may fold it away). */
	asm volatile("" : "+r"(n));
	if (n > JS_MAX_FRAGMENT_BYTES)
		n = JS_MAX_FRAGMENT_BYTES;
	if (n == 0)
		return 0;
	if (bpf_probe_read_user(dst, n, (void *)sp) == 0)
		return (__u32)n;
	c.len = (__u32)n;
	c.zero = holes ? bpf_map_lookup_elem(&zeros, &zero_key) : NULL;
	bpf_loop(JS_MAX_FRAGMENT_BYTES / JS_PAGE_SIZE + 1, copy_page, &c, 0);
	return c.copied;
}

/* A deep thread's copies cover its stack from ti->covered up to the end
 * without a gap, as long as each new copy reaches that part: jsampled joins
 * a copy to the thread's earlier ones. A copy that ends below it (the
 * thread went deeper since its last sample than a copy holds, or none
 * reached the end yet) leaves a gap nothing can be joined across: the rest
 * of the stack, from the top of what is ever read down into the copy, is
 * written first, in windows of their own records (the topmost flagged),
 * if it fits in fill_bytes. Called with the sample's header filled in and
 * the copy [from, from + want) planned; the scratch after the header is
 * free. */
static __always_inline void fill_gap(struct js_sample *s, __u8 *stack, struct js_thread_info *ti, __u64 from,
				     __u64 want, struct js_counters *cnt)
{
	__u64 end = from + want, cov = ti->covered, top, lo, hi, n;
	__u32 flags = s->flags;

	if (!(flags & JS_SAMPLE_STACK_CAPPED) || (flags & JS_SAMPLE_COPY_TRIMMED) ||
	    (cov && cov <= ti->stack_end && end >= cov)) {
		ti->covered = from; /* the copy reaches the end, or what was covered */
		return;
	}
	top = ti->copy_end > end && ti->copy_end < ti->stack_end ? ti->copy_end : ti->stack_end;
	ti->covered = 0;
	if (top <= end || top - end > fill_bytes) {
		if (cnt)
			cnt->fills_skipped++;
		return;
	}
	hi = top;
	for (int i = 0; i < JS_MAX_FILL_WINDOWS && hi > end; i++) {
		/* Each window reaches down into the copy, or overlaps the one
		 * above: jsampled checks that the records join. */
		lo = hi - end > JS_FILL_WINDOW_BYTES ? hi - JS_FILL_WINDOW_BYTES
			: end - JS_FILL_OVERLAP > from ? end - JS_FILL_OVERLAP : from;
		n = (hi == top ? top : hi + JS_FILL_OVERLAP) - lo;
		asm volatile("" : "+r"(n)); /* keep the bound visible to the verifier */
		/* One read: the window lies in the live stack, above sp (a
		 * page-wise copy like the sample's would multiply the
		 * verifier's work). */
		if (n == 0 || n > JS_MAX_FRAGMENT_BYTES || bpf_probe_read_user(stack, n, (void *)lo) != 0)
			break;
		s->flags = flags | JS_SAMPLE_FILL | (hi == top ? JS_SAMPLE_FILL_TOP : 0);
		s->stack_addr = lo;
		s->stack_len = (__u32)n;
		if (bpf_ringbuf_output(&samples, s, sizeof(struct js_sample) + n, BPF_RB_NO_WAKEUP) != 0)
			break;
		if (cnt) {
			cnt->fills++;
			cnt->fill_bytes += n;
		}
		hi = lo;
	}
	if (hi <= end)
		ti->covered = from;
	s->flags = flags;
	s->stack_addr = from;
}

/* A tick in the kernel: its kernel stack goes out as a record of its own
 * just before the sample (JS_SAMPLE_KSTACK), so samples keep one layout.
 * bpf_get_stack with flags 0 walks the interrupted kernel context. */
static __always_inline void emit_kernel_stack(struct bpf_perf_event_data *ctx, struct js_sample *s, __u8 *stack,
					      struct js_counters *cnt)
{
	__u32 flags = s->flags;
	long n = bpf_get_stack(ctx, stack, JS_KSTACK_MAX * 8, 0);

	if (n <= 0)
		return;
	if (n > JS_KSTACK_MAX * 8)
		n = JS_KSTACK_MAX * 8;
	s->flags = flags | JS_SAMPLE_KSTACK;
	s->stack_addr = 0;
	s->stack_len = (__u32)n;
	if (bpf_ringbuf_output(&samples, s, sizeof(struct js_sample) + (__u32)n, BPF_RB_NO_WAKEUP) == 0 && cnt)
		cnt->kstacks++;
	s->flags = flags;
}

/* A thread preempted in user code: the sample of the wait to come,
 * copied as it leaves its CPU (its stack is readable only then), waits
 * here, in slot tid % stash_slots, until it is back and the wait's ticks
 * are known. A slot taken over by another thread meanwhile is counted. */
#define JS_STASH_BYTES JS_DEFAULT_FRAGMENT_BYTES
#define JS_STASH_CHUNK_BYTES 4096
struct stash {
	__u64 time_ns; /* the record's; 0: free */
	__u32 tid;
	__u32 len; /* of rec: the header and the stack */
	/* A carrier's: its mounted virtual thread's frozen-chunk record, sent
	 * just before rec (0: none). */
	__u32 chunk_len;
	__u32 reserved;
	__u8 rec[sizeof(struct js_sample) + JS_STASH_BYTES];
	__u8 chunk[sizeof(struct js_sample) + JS_STASH_CHUNK_BYTES];
};
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1); /* stash_slots, set by the loader */
	__type(key, __u32);
	__type(value, struct stash);
} stash SEC(".maps");

/* A carrier thread (JS_THREAD_CONTINUATIONS): when a virtual thread is
 * mounted on it (JavaThread::_vthread is not the carrier's own Thread),
 * the frames its continuation has not thawed yet lie in the tail stack
 * chunk on the Java heap; they go out as a record of their own just before
 * the sample (JS_SAMPLE_CHUNK), from the chunk's top frame to its bottom,
 * at most fragment_bytes. A chunk moves only at a GC safepoint, when the
 * thread is stopped. */
static __always_inline void emit_frozen_chunk(struct js_sample *s, __u8 *stack, const struct js_thread_info *ti,
					      const struct js_target *tg, struct stash *to, struct js_counters *cnt)
{
	__u64 jt, h[2] = {}, vt = 0, carrier = 0, cont, tail, frames, end, n, saved_sp = s->regs[JS_REG_SP];
	__s32 sp = 0, bottom = 0;
	__u32 flags = s->flags;

	if (!tg->chunk_stack_off || !ti->anchor_addr || ti->anchor_addr < tg->anchor_off)
		return;
	jt = ti->anchor_addr - tg->anchor_off;
	if (bpf_probe_read_user(&h[0], 8, (void *)(jt + tg->vthread_off)) ||
	    bpf_probe_read_user(&h[1], 8, (void *)(jt + tg->threadobj_off)) || !h[0] || !h[1] ||
	    bpf_probe_read_user(&vt, 8, (void *)h[0]) || bpf_probe_read_user(&carrier, 8, (void *)h[1]) || !vt ||
	    vt == carrier)
		return; /* no virtual thread mounted */
	cont = read_oop_field(tg, vt, tg->vt_cont_off);
	tail = cont ? read_oop_field(tg, cont, tg->cont_tail_off) : 0;
	/* A tail chunk the last thaw emptied stays until the next thaw: the
	 * frames are then in its parent. */
	for (int i = 0; i < 2 && tail; i++) {
		if (bpf_probe_read_user(&sp, 4, (void *)(tail + tg->chunk_sp_off)) ||
		    bpf_probe_read_user(&bottom, 4, (void *)(tail + tg->chunk_bottom_off))) {
			tail = 0;
			break;
		}
		if (bottom > sp)
			break;
		tail = read_oop_field(tg, tail, tg->chunk_parent_off);
	}
	if (!tail || sp < 2 || bottom <= sp || bottom > (1 << 24)) {
		if (cnt)
			cnt->chunks_unread++;
		return;
	}
	frames = tail + tg->chunk_stack_off + (__u64)sp * 8;
	end = tail + tg->chunk_stack_off + (__u64)bottom * 8;
	n = end - (frames - 16);
	if (n > fragment_bytes)
		n = fragment_bytes;
	asm volatile("" : "+r"(n)); /* keep the bound visible to the verifier */
	if (n == 0 || n > JS_MAX_FRAGMENT_BYTES || bpf_probe_read_user(stack, n, (void *)(frames - 16)) != 0) {
		if (cnt)
			cnt->chunks_unread++;
		return;
	}
	s->flags = flags | JS_SAMPLE_CHUNK;
	s->stack_addr = frames - 16;
	s->stack_len = (__u32)n;
	/* A bottom frame's arguments lie above its end: the decoder takes
	 * the chunk's end from anchor_sp, what it may read from stack_end. */
	s->stack_end = end + JS_CHUNK_ARGS_SLACK;
	s->anchor_sp = end;
	s->regs[JS_REG_SP] = frames;
	s->anchor_pc = tail;
	s->anchor_fp = read_oop_field(tg, tail, tg->chunk_parent_off);
	if (to) {
		/* A preempted carrier's: kept with its stashed sample (the heap
		 * is readable only now, in the carrier's own context). */
		if (n <= JS_STASH_CHUNK_BYTES &&
		    bpf_probe_read_kernel(to->chunk, sizeof(struct js_sample) + n, s) == 0)
			to->chunk_len = sizeof(struct js_sample) + (__u32)n; /* counted when sent */
		else if (cnt)
			cnt->chunks_unread++;
	} else if (bpf_ringbuf_output(&samples, s, sizeof(struct js_sample) + n, BPF_RB_NO_WAKEUP) == 0 && cnt) {
		cnt->chunks++;
	}
	s->flags = flags;
	s->regs[JS_REG_SP] = saved_sp;
	s->stack_end = ti->stack_end;
}


/* Copies the thread's registers, frame anchor and stack into the sample
 * record and writes it (or, to set, keeps it there), with the records that go before it: its kernel
 * stack (ctx set: a tick in the kernel), its off-CPU weight (wait set), its
 * virtual thread's frozen frames and gap-filling windows. */
static __always_inline int emit_sample(struct bpf_perf_event_data *ctx, const struct js_wait *wait,
				       struct stash *to, struct task_struct *task, const struct js_target *tg,
				       struct js_thread_info *ti, const struct pt_regs *regs, __u32 flags,
				       struct js_counters *cnt)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 cpu = bpf_get_smp_processor_id(), slot = to ? cpu + 2 * nr_cpus : wait ? cpu + nr_cpus : cpu;
	struct scratch *sc = bpf_map_lookup_elem(&scratch, &slot);
	if (!sc)
		return 0;
	struct js_sample *s = (struct js_sample *)sc->buf;
	__u8 *stack = sc->buf + sizeof(struct js_sample);

	s->time_ns = bpf_ktime_get_ns();
	s->pid = pid_tgid >> 32;
	s->tid = (__u32)pid_tgid;
	s->cpu = cpu;
	s->regs[JS_REG_IP] = regs->ip;
	s->regs[JS_REG_SP] = regs->sp;
	s->regs[JS_REG_BP] = regs->bp;
	s->regs[JS_REG_AX] = regs->ax;
	s->regs[JS_REG_BX] = regs->bx;
	s->regs[JS_REG_CX] = regs->cx;
	s->regs[JS_REG_DX] = regs->dx;
	s->regs[JS_REG_SI] = regs->si;
	s->regs[JS_REG_DI] = regs->di;
	s->regs[JS_REG_R8] = regs->r8;
	s->regs[JS_REG_R9] = regs->r9;
	s->regs[JS_REG_R10] = regs->r10;
	s->regs[JS_REG_R11] = regs->r11;
	s->regs[JS_REG_R12] = regs->r12;
	s->regs[JS_REG_R13] = regs->r13;
	s->regs[JS_REG_R14] = regs->r14;
	s->regs[JS_REG_R15] = regs->r15;
	s->anchor_sp = 0;
	s->anchor_fp = 0;
	s->anchor_pc = 0;
	s->thread_state = 0;
	bpf_get_current_comm(s->comm, sizeof(s->comm));

	__u64 sp = regs->sp;
	__u64 from = sp;
	__u64 want = fragment_bytes;
	s->stack_end = ti ? ti->stack_end : 0;
	s->flags = flags;
	if (ti && ti->anchor_addr)
		read_anchor(s, ti, tg);
	else
		read_anchor_tls(s, task, tg);
	/* Outside Java code with a frame anchor, the native/VM frames between
	 * sp and the anchor are of no use to the decoder: copy from just below
	 * the anchor (the return address may sit at anchor_sp - 8). */
	__u64 native_part = 0;
	if (s->anchor_sp > sp + 64 && (s->anchor_sp & 7) == 0 && s->stack_end && s->anchor_sp < s->stack_end &&
	    (regs->ip < tg->code_low || regs->ip >= tg->code_high)) {
		if (!native_stacks) {
			from = s->anchor_sp - 16;
			s->flags |= JS_SAMPLE_FROM_ANCHOR;
		} else {
			/* Native frames are wanted too: they come on top of the
			 * bytes the Java frames get, so deep Java stacks stay as
			 * complete as without them. */
			native_part = s->anchor_sp - 16 - sp;
		}
	}
	if (ctx && kernel_stacks && (flags & JS_SAMPLE_KERNEL_MODE))
		emit_kernel_stack(ctx, s, stack, cnt);
	if (wait) {
		__u32 kept = s->flags;

		s->flags = JS_SAMPLE_WAIT;
		s->stack_addr = 0;
		s->stack_len = sizeof(*wait);
		__builtin_memcpy(stack, wait, sizeof(*wait));
		if (bpf_ringbuf_output(&samples, s, sizeof(struct js_sample) + sizeof(*wait), BPF_RB_NO_WAKEUP) != 0) {
			if (cnt)
				cnt->ringbuf_full++;
			return 0;
		}
		s->flags = kept;
	}
	if (ti && (ti->thread_flags & JS_THREAD_CONTINUATIONS)) {
		__u64 asp = s->anchor_sp, afp = s->anchor_fp, apc = s->anchor_pc;

		emit_frozen_chunk(s, stack, ti, tg, to, cnt);
		s->anchor_sp = asp;
		s->anchor_fp = afp;
		s->anchor_pc = apc;
	}
	s->stack_addr = from;
	if (ti) {
		if (ti->from_jvm)
			s->flags |= JS_SAMPLE_STACK_END_FROM_JVM;
		if (ti->max_copy)
			want = ti->max_copy;
		if (ti->thread_flags & JS_THREAD_NO_STACK)
			want = native_stacks && want > fragment_bytes ? fragment_bytes : native_stacks ? want : 0;
		else if (native_part)
			want = want + native_part < JS_MAX_FRAGMENT_BYTES ? want + native_part : JS_MAX_FRAGMENT_BYTES;
		if (ti->stack_end - from <= want)
			want = ti->stack_end - from;
		else
			s->flags |= JS_SAMPLE_STACK_CAPPED;
		if (ti->copy_end > from && ti->copy_end - from < want) {
			want = ti->copy_end - from;
			s->flags |= JS_SAMPLE_COPY_TRIMMED;
		}
	} else {
		s->flags |= JS_SAMPLE_STACK_END_UNKNOWN;
	}
	if (!to && ti && fill_bytes && (ti->thread_flags & JS_THREAD_FILL_GAPS))
		fill_gap(s, stack, ti, from, want, cnt);
	if (to && want > JS_STASH_BYTES) {
		want = JS_STASH_BYTES;
		s->flags |= JS_SAMPLE_STACK_CAPPED;
	}

	/* Holes are zero-filled only where the stack's end is known: the
	 * copy then ends within the thread's stack. */
	__u64 len = copy_stack(stack, from, (__u32)want, ti && ti->stack_end, s, cnt);
	/* Keep the bound visible to the verifier (it comes back from bpf_loop
	 * through the stack). */
	asm volatile("" : "+r"(len));
	if (len > JS_MAX_FRAGMENT_BYTES)
		len = JS_MAX_FRAGMENT_BYTES;
	s->stack_len = (__u32)len;
	if (to) {
		if (len > JS_STASH_BYTES)
			return 0;
		if (bpf_probe_read_kernel(to->rec, sizeof(struct js_sample) + len, s) != 0)
			return 0;
		to->len = sizeof(struct js_sample) + (__u32)len;
		to->tid = s->tid;
		to->time_ns = s->time_ns;
		return 1;
	}

	__u64 avail = bpf_ringbuf_query(&samples, BPF_RB_AVAIL_DATA);
	__u64 rb_flags = BPF_RB_NO_WAKEUP;
	if (avail >= wakeup_watermark) {
		rb_flags = BPF_RB_FORCE_WAKEUP;
		if (cnt)
			cnt->wakeups++;
	}
	if (bpf_ringbuf_output(&samples, s, sizeof(struct js_sample) + len, rb_flags) != 0) {
		if (cnt)
			cnt->ringbuf_full++;
		return 0;
	}
	if (cnt) {
		cnt->emitted++;
		cnt->bytes += len;
	}
	return 1;
}

SEC("perf_event")
int sample_stack(struct bpf_perf_event_data *ctx)
{
	__u32 zero = 0;
	struct js_counters *cnt = bpf_map_lookup_elem(&counters, &zero);
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32;
	__u32 tid = (__u32)pid_tgid;

	if (cnt)
		cnt->events++;
	struct js_target *tg = bpf_map_lookup_elem(&targets, &tgid);
	if (!tg)
		return 0;
	if (cnt)
		cnt->target++;

	struct task_struct *task = bpf_get_current_task_btf();
	if (!BPF_CORE_READ(task, mm)) {
		if (cnt)
			cnt->no_user_regs++;
		return 0;
	}

	struct pt_regs regs;
	__u32 flags = 0;
	/* ctx fields only allow full 8-byte loads: copy, then test the mode. */
	__builtin_memcpy(&regs, &ctx->regs, sizeof(regs));
	if (!(regs.cs & 3)) {
		/* Kernel mode: the user registers were saved on kernel entry. */
		struct pt_regs *ur = (struct pt_regs *)bpf_task_pt_regs(task);
		if (!ur || bpf_probe_read_kernel(&regs, sizeof(regs), ur) != 0) {
			if (cnt)
				cnt->no_user_regs++;
			return 0;
		}
		flags |= JS_SAMPLE_KERNEL_MODE;
	}

	struct js_thread_info *ti = thread_info(task, tgid, tid, regs.sp, cnt);
	/* A thread created while its process's events were being opened may
	 * run a second one (daemon/ingest/sampler_events.h): those have an odd
	 * period, the first events an even one. The second's ticks count
	 * until the first's show up, so every thread is sampled once. */
	if (ctx->sample_period & 1) {
		if (ti && ti->ticked) {
			if (cnt)
				cnt->doubled++;
			return 0;
		}
	} else if (ti && !ti->ticked) {
		ti->ticked = 1;
	}
	emit_sample(ctx, NULL, NULL, task, tg, ti, &regs, flags, cnt);
	return 0;
}

/* Off-CPU sampling (offcpu_period_ns 0: off; jsampled attaches these
 * programs only then). A target thread's time off CPU is measured at the
 * scheduler's switches; the stack it waited with is copied when the
 * system call it waited in returns, in the thread's own context, with the
 * ticks that fell in the wait as its weight. Waits that end with no
 * system call's return (a page fault, a preemption in user code) are only
 * counted: their user stack cannot be told apart from a later one's. */
/* Task storage: a switch finds a thread's state (or that it is none of a
 * target's) without a hash lookup; it goes with the thread. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct js_offcpu_thread);
} offcpu SEC(".maps");

#define JS_TASK_RUNNING 0

/* The ticks of the thread's off-CPU clock that fall in a wait of d ns. */
static __always_inline __u32 ticks_in(struct js_offcpu_thread *st, __u64 d)
{
	__u64 period = offcpu_period_ns, past;

	if (!period)
		return 0;
	if (d < st->to_tick) {
		st->to_tick -= d;
		return 0;
	}
	past = d - st->to_tick;
	st->to_tick = period - past % period;
	return (__u32)(1 + past / period);
}

static __always_inline void offcpu_leave(struct task_struct *prev, unsigned int prev_state, __u64 now)
{
	__u64 gen = targets_gen;
	__u32 tgid, tid, zero = 0;
	struct js_offcpu_thread *st;
	struct js_counters *cnt;
	struct pt_regs *ur;
	__u64 ip, sp;
	__s64 orig_ax;

	if (!prev->mm)
		return; /* a kernel thread */
	st = bpf_task_storage_get(&offcpu, prev, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!st)
		return;
	tgid = prev->tgid;
	if (st->gen != gen) {
		bool target = bpf_map_lookup_elem(&targets, &tgid) != NULL;

		st->gen = gen;
		if (target && (!st->target || st->tgid != tgid)) {
			/* A new target's thread (or its thread since an exec). */
			__builtin_memset(st, 0, sizeof(*st));
			st->gen = gen;
			st->tgid = tgid;
			st->to_tick = offcpu_period_ns ? bpf_get_prandom_u32() % offcpu_period_ns + 1 : 1;
		}
		st->target = target;
	}
	if (!st->target)
		return;
	if (st->epoch != offcpu_epoch) {
		st->epoch = offcpu_epoch;
		st->waited_ns = 0;
		st->runnable_ns = 0;
	}
	ur = (struct pt_regs *)bpf_task_pt_regs(prev);
	if (!ur)
		return;
	ip = BPF_CORE_READ(ur, ip);
	sp = BPF_CORE_READ(ur, sp);
	orig_ax = (__s64)BPF_CORE_READ(ur, orig_ax);
	cnt = bpf_map_lookup_elem(&counters, &zero);
	if (cnt)
		cnt->switches++;
	if (st->waited_ns && (st->ip != ip || st->sp != sp)) {
		/* The wait seen so far ended where no system call returned. */
		if (cnt)
			cnt->offcpu_unplaced_ns += st->waited_ns;
		st->waited_ns = 0;
		st->runnable_ns = 0;
	}
	st->ip = ip;
	st->sp = sp;
	st->left_ns = now;
	st->preempted = prev_state == JS_TASK_RUNNING;
	st->stashed = 0;
	/* Preempted in user code (not in a system call: orig_ax is
	 * negative): no system call's return will take its sample, so it is
	 * taken now, kept until the wait's length is known. */
	if (st->preempted && orig_ax < 0 && offcpu_period_ns) {
		struct js_target *tg = bpf_map_lookup_elem(&targets, &tgid);
		__u32 slot;
		struct stash *to;
		struct js_thread_info *ti;
		struct pt_regs regs;

		tid = prev->pid;
		slot = tid % stash_slots;
		to = bpf_map_lookup_elem(&stash, &slot);
		if (!to || !tg || bpf_probe_read_kernel(&regs, sizeof(regs), ur) != 0)
			return;
		if (to->time_ns && to->tid != tid && cnt)
			cnt->offcpu_stash_taken++;
		to->time_ns = 0;
		to->chunk_len = 0;
		ti = thread_info(prev, tgid, tid, regs.sp, cnt);
		if (emit_sample(NULL, NULL, to, prev, tg, ti, &regs, JS_SAMPLE_OFFCPU, cnt))
			st->stashed = 1;
	}
}

/* A thread preempted in user code is back: its kept sample goes out if
 * the wait held a tick, after its weight. */
static __always_inline void offcpu_unstash(struct js_offcpu_thread *st, __u32 tid, __u64 d)
{
	__u32 zero = 0, slot = tid % stash_slots, cpu = bpf_get_smp_processor_id() + 2 * nr_cpus, len;
	struct js_counters *cnt = bpf_map_lookup_elem(&counters, &zero);
	struct stash *from = bpf_map_lookup_elem(&stash, &slot);
	struct scratch *sc = bpf_map_lookup_elem(&scratch, &cpu);
	struct js_wait w = {.waited_ns = d, .runnable_ns = d, .syscall = (__u32)-1};
	struct js_sample *s;

	w.ticks = ticks_in(st, d);
	if (!w.ticks) {
		if (from && from->tid == tid)
			from->time_ns = 0;
		if (cnt)
			cnt->offcpu_short++;
		return;
	}
	if (!from || !sc || from->tid != tid || !from->time_ns) {
		if (cnt)
			cnt->offcpu_unplaced_ns += d; /* another thread's now */
		return;
	}
	s = (struct js_sample *)sc->buf;
	if (bpf_probe_read_kernel(s, sizeof(*s), from->rec) != 0)
		return;
	s->flags = JS_SAMPLE_WAIT;
	s->stack_addr = 0;
	s->stack_len = sizeof(w);
	__builtin_memcpy(sc->buf + sizeof(*s), &w, sizeof(w));
	len = from->len;
	from->time_ns = 0;
	if (len > sizeof(from->rec) || bpf_ringbuf_output(&samples, s, sizeof(*s) + sizeof(w), BPF_RB_NO_WAKEUP) != 0 ||
	    (from->chunk_len && from->chunk_len <= sizeof(from->chunk) &&
	     bpf_ringbuf_output(&samples, from->chunk, from->chunk_len, BPF_RB_NO_WAKEUP) != 0) ||
	    bpf_ringbuf_output(&samples, from->rec, len, BPF_RB_NO_WAKEUP) != 0) {
		if (cnt)
			cnt->ringbuf_full++;
		return;
	}
	if (cnt) {
		cnt->emitted++;
		cnt->bytes += len - sizeof(*s);
		cnt->offcpu_samples++;
		cnt->offcpu_ticks += w.ticks;
		cnt->chunks += from->chunk_len != 0;
	}
}

static __always_inline void offcpu_enter(struct task_struct *next, __u64 now)
{
	struct js_offcpu_thread *st = bpf_task_storage_get(&offcpu, next, 0, 0);
	__u32 tid;
	__u64 d;

	if (!st || !st->left_ns)
		return;
	if (st->epoch != offcpu_epoch) {
		/* It left before the programs were attached. */
		st->left_ns = 0;
		st->stashed = 0;
		return;
	}
	tid = next->pid;
	d = now > st->left_ns ? now - st->left_ns : 0;
	st->left_ns = 0;
	if (st->stashed) {
		st->stashed = 0;
		offcpu_unstash(st, tid, d);
		return;
	}
	st->waited_ns += d;
	if (st->preempted)
		st->runnable_ns += d;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(note_switch, bool preempt, struct task_struct *prev, struct task_struct *next, unsigned int prev_state)
{
	__u64 now = bpf_ktime_get_ns();

	offcpu_leave(prev, prev_state, now);
	offcpu_enter(next, now);
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(sample_offcpu, struct pt_regs *uregs, long ret)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid, tgid = pid_tgid >> 32, zero = 0;
	struct task_struct *task = bpf_get_current_task_btf();
	struct js_offcpu_thread *st = bpf_task_storage_get(&offcpu, task, 0, 0);
	struct js_counters *cnt;
	struct js_target *tg;
	struct pt_regs regs;
	struct js_wait w;

	if (!st || !st->waited_ns)
		return 0;
	if (st->epoch != offcpu_epoch) {
		st->waited_ns = 0;
		st->runnable_ns = 0;
		return 0;
	}
	cnt = bpf_map_lookup_elem(&counters, &zero);
	if (bpf_probe_read_kernel(&regs, sizeof(regs), uregs) != 0 || st->tgid != tgid)
		return 0;
	w.waited_ns = st->waited_ns;
	w.runnable_ns = st->runnable_ns;
	w.syscall = (__u32)regs.orig_ax;
	st->waited_ns = 0;
	st->runnable_ns = 0;
	if (regs.ip != st->ip || regs.sp != st->sp) {
		if (cnt)
			cnt->offcpu_unplaced_ns += w.waited_ns;
		return 0;
	}
	w.ticks = ticks_in(st, w.waited_ns);
	if (!w.ticks) {
		if (cnt)
			cnt->offcpu_short++;
		return 0;
	}

	tg = bpf_map_lookup_elem(&targets, &tgid);
	if (!tg)
		return 0;
	struct js_thread_info *ti = thread_info(task, tgid, tid, regs.sp, cnt);
	if (emit_sample(NULL, &w, NULL, task, tg, ti, &regs, JS_SAMPLE_OFFCPU, cnt) && cnt) {
		cnt->offcpu_samples++;
		cnt->offcpu_ticks += w.ticks;
	}
	return 0;
}

/* A thread exits: forget its cached stack bounds and anchor, since the tid
 * (and often the stack memory) is reused by the next thread. When the last
 * thread of a target process exits, the process stops being a target here,
 * at once: its pid may be reused by another program before jsampled hears
 * of the exit. (signal->live has already been decremented for this thread
 * when the tracepoint fires: do_exit in kernel/exit.c.) */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(forget_thread, struct task_struct *task)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32;
	__u32 tid = (__u32)pid_tgid;
	struct task_struct *cur = bpf_get_current_task_btf();

	if (!bpf_map_lookup_elem(&targets, &tgid))
		return 0;
	bpf_map_delete_elem(&threads, &tid);
	if (BPF_CORE_READ(cur, signal, live.counter) == 0) {
		bpf_map_delete_elem(&targets, &tgid);
		__sync_fetch_and_add(&targets_gen, 1);
	}
	return 0;
}

static __always_inline int count_exec_lost(void)
{
	__u32 zero = 0;
	struct js_counters *cnt = bpf_map_lookup_elem(&counters, &zero);

	if (cnt)
		cnt->exec_events_lost++;
	return 0;
}

/* A new program image: maybe a JVM to attach to (jsampled decides). A target
 * that execs is no longer the program its agent described (a setuid binary,
 * say): it stops being sampled here, before anything of the new image runs,
 * and jsampled ends its agent's authority. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(note_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u32 flags = 0;
	struct js_exec_event *e;

	if (bpf_map_lookup_elem(&targets, &tgid)) {
		bpf_map_delete_elem(&targets, &tgid);
		__sync_fetch_and_add(&targets_gen, 1);
		flags |= JS_EXEC_WAS_TARGET;
	}
	e = bpf_ringbuf_reserve(&execs, sizeof(*e), 0);
	if (!e)
		return count_exec_lost(); /* counted: jsampled then checks every agent's process at once */
	e->pid = tgid;
	e->flags = flags;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

/* A target installs a SIGQUIT handler: a starting JVM's signal dispatcher
 * is up, so it can take an attach now (HotSpot starts its attach listener
 * on SIGQUIT). jsampled attaches this program only while a JVM it samples
 * from its exec waits for that moment, so other syscalls pay for it only
 * then; it is the first check below. */
#define JS_NR_RT_SIGACTION 13 /* x86-64 */
#define JS_SIGQUIT 3

SEC("tp_btf/sys_enter")
int BPF_PROG(note_sigquit, struct pt_regs *regs, long id)
{
	__u32 tgid;
	__u64 handler = 0, act;
	struct js_exec_event *e;

	if (id != JS_NR_RT_SIGACTION || BPF_CORE_READ(regs, di) != JS_SIGQUIT)
		return 0;
	tgid = bpf_get_current_pid_tgid() >> 32;
	act = BPF_CORE_READ(regs, si);
	if (!act || !bpf_map_lookup_elem(&targets, &tgid))
		return 0;
	/* struct sigaction starts with the handler: SIG_DFL 0, SIG_IGN 1. */
	if (bpf_probe_read_user(&handler, sizeof(handler), (void *)act) != 0 || handler <= 1)
		return 0;
	e = bpf_ringbuf_reserve(&execs, sizeof(*e), 0);
	if (!e)
		return count_exec_lost(); /* the periodic checks find it */
	e->pid = tgid;
	e->flags = JS_EXEC_SIGQUIT;
	bpf_ringbuf_submit(e, 0);
	return 0;
}
