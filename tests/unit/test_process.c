/* SPDX-License-Identifier: GPL-2.0-only */
/* The per-process sample path: decode at once when the model covers a
 * sample, hold it while the model lags, release it when a batch arrives,
 * give up after the hold time or when the agent is gone, and keep an
 * exited process for the retention time. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "userspace/profile/cct_view.h"
#include "userspace/profile/kernel_symbols.h"
#include "daemon/process/process.h"
#include "daemon/process/wait_states.h"
#include "check.h"
#include "model_builder.h"

#define CODE 0x10010000ull
#define SP 0x7ffe0000ull

static struct js_sample *leaf_sample(uint64_t t)
{
	/* A compiled frame of 2 words whose caller is the call stub's return
	 * address with an empty anchor: a complete one-frame trace. */
	struct js_sample *s = calloc(1, sizeof(*s) + 256);
	uint64_t ret = 0x10000080, fp = SP + 64, wrapper = SP + 128, zero = 0;

	s->time_ns = t;
	s->pid = 77;
	s->regs[JS_REG_IP] = CODE + 0x10;
	s->regs[JS_REG_SP] = SP;
	s->stack_addr = SP;
	s->stack_len = 256;
	s->stack_end = SP + 256;
	memcpy(s->stack + 8, &ret, 8);
	memcpy(s->stack + 0, &fp, 8);
	memcpy(s->stack + 64 - 48, &wrapper, 8);
	memcpy(s->stack + 128 + 32, &zero, 8);
	return s;
}

static void add_code(struct process *p)
{
	const struct test_code stub = {.id = 1, .kind = JS_CODE_CALL_STUB, .start = 0x10000000, .size = 0x100,
				       .frame_complete = -1};
	const struct test_code nm = {.id = 2, .kind = JS_CODE_NMETHOD, .start = CODE, .size = 0x100,
				     .frame_size = 2, .frame_complete = 0, .method_id = 1};

	CHECK(tb_apply_code(&p->jvm, &stub) == 0);
	CHECK(tb_apply_code(&p->jvm, &nm) == 0);
}

static void test_hold_and_release(void)
{
	struct process_limits lim = {.cct_max_nodes = 100, .held_max_bytes = 1 << 20, .hold_ns = 1000};
	struct process_table t;
	struct process *p;
	struct js_sample *s;

	process_table_init(&t, &lim);
	p = process_create(&t, 77, 0, "");
	CHECK(p != NULL);
	if (!p)
		return;
	/* No layout yet: held. */
	s = leaf_sample(100);
	process_take_sample(&t, p, s, s->time_ns);
	free(s);
	CHECK_EQ(sample_queue_len(&p->held), 1);
	CHECK(p->wants_fetch);
	/* The layout arrives but the code does not: still held. */
	CHECK(tb_apply_layout(&p->jvm, 0x10000080, 0x10000000, 0x20000000) == 0);
	process_retry_held(&t, p, 10000);
	CHECK_EQ(sample_queue_len(&p->held), 1);
	/* The code arrives: decoded. */
	add_code(p);
	process_retry_held(&t, p, 10000);
	CHECK_EQ(sample_queue_len(&p->held), 0);
	CHECK_EQ(p->stats.resolved, 1);
	CHECK_EQ(p->cct.samples, 1);
	CHECK(!p->wants_fetch);
	/* A deep copy is held against its thread's stack base, and read back
	 * through the queue's view buffer; the queue, once empty, frees that
	 * buffer (up to 256 KiB a process). */
	s = leaf_sample(200);
	s = realloc(s, sizeof(*s) + 16384);
	CHECK(s != NULL);
	if (!s)
		return;
	memset(s->stack + 256, 0, 16384 - 256);
	s->stack_len = 16384;
	s->stack_end = SP + 16384;
	s->regs[JS_REG_IP] = 0x10080010; /* code not reported yet: held */
	s->tid = 4321;
	process_take_sample(&t, p, s, s->time_ns);
	free(s);
	CHECK_EQ(sample_queue_len(&p->held), 1);
	const struct test_code late = {.id = 3, .kind = JS_CODE_NMETHOD, .start = 0x10080000, .size = 0x100,
				       .frame_size = 2, .frame_complete = 0, .method_id = 1};
	CHECK(tb_apply_code(&p->jvm, &late) == 0);
	process_retry_held(&t, p, 10000);
	CHECK_EQ(sample_queue_len(&p->held), 0);
	CHECK_EQ(p->stats.resolved, 2);
	CHECK(p->held.view == NULL);

	/* A sample in code the agent never reports: held until the agent's
	 * clock passes its time plus hold_ns, then counted as a failure. */
	s = leaf_sample(5000);
	s->regs[JS_REG_IP] = 0x10090000;
	process_take_sample(&t, p, s, s->time_ns);
	CHECK_EQ(sample_queue_len(&p->held), 1);
	p->agent_cut_ns = 5500;
	process_retry_held(&t, p, 10000);
	CHECK_EQ(sample_queue_len(&p->held), 1);
	p->agent_cut_ns = 6001;
	process_retry_held(&t, p, 10000);
	CHECK_EQ(sample_queue_len(&p->held), 0);
	CHECK_EQ(p->stats.failed, 1);
	CHECK_EQ(p->stats.reasons[DECODE_FAIL_UNKNOWN_CODE], 1);

	/* A sample already older than the agent's clock plus hold_ns does not
	 * wait at all. */
	process_take_sample(&t, p, s, s->time_ns);
	CHECK_EQ(sample_queue_len(&p->held), 0);
	CHECK_EQ(p->stats.failed, 2);

	/* Held samples of a process that exits are settled at once; its
	 * method table keeps only what the tree names, names and lines. */
	s->time_ns = 9000;
	process_take_sample(&t, p, s, s->time_ns);
	CHECK_EQ(sample_queue_len(&p->held), 1);
	{
		char before[256], after[256];
		size_t methods = p->jvm.methods.methods.n;
		uint32_t id = 0;
		int line;

		for (size_t i = 1; i < p->cct.nodes.n && !id; i++)
			if (p->cct.nodes.v[i].type <= FRAME_NATIVE)
				id = p->cct.nodes.v[i].method_id;
		CHECK(id != 0);
		method_table_name(&p->jvm.methods, id, before, sizeof(before));
		line = method_table_line(&p->jvm.methods, id, 3);
		process_agent_gone(&t, p, false, 1000000000ull);
		method_table_name(&p->jvm.methods, id, after, sizeof(after));
		CHECK(strcmp(before, after) == 0);
		CHECK_EQ(method_table_line(&p->jvm.methods, id, 3), line);
		CHECK(p->jvm.methods.methods.n <= methods);
	}
	CHECK_EQ(sample_queue_len(&p->held), 0);
	CHECK_EQ(p->stats.failed, 3);
	CHECK_EQ(p->stats.samples, 5);
	free(s);

	/* Retention: still there before it ends, gone after. */
	CHECK_EQ(process_table_expire(&t, 1000000000ull + 299ull * 1000000000, 300ull * 1000000000), 0);
	CHECK(process_lookup(&t, 77) == p);
	CHECK_EQ(process_table_expire(&t, 1000000000ull + 301ull * 1000000000, 300ull * 1000000000), 1);
	CHECK(process_lookup(&t, 77) == NULL);
	CHECK_EQ(t.retired.samples, 5);
	process_table_free(&t);
}

/* Making room forgets exactly the process chosen: the other exited ones
 * keep their retention. */
static void test_forget_one(void)
{
	struct process_limits lim = {.cct_max_nodes = 100, .held_max_bytes = 1 << 20, .hold_ns = 1000};
	struct process_table t;
	struct process *p[3];

	process_table_init(&t, &lim);
	for (int i = 0; i < 3; i++) {
		p[i] = process_create(&t, 100 + i, 0, "vm");
		CHECK(p[i] != NULL);
		if (!p[i])
			return;
		process_agent_gone(&t, p[i], false, 1000 + (uint64_t)i);
	}
	CHECK(process_table_forget(&t, p[1]));
	CHECK_EQ(process_table_count(&t), 2);
	CHECK(process_lookup(&t, 100) == p[0]);
	CHECK(process_lookup(&t, 101) == NULL);
	CHECK(process_lookup(&t, 102) == p[2]);
	CHECK_EQ(process_table_expire(&t, 2000, 1000000), 0);
	process_table_free(&t);
}

/* A process sampled since its exec: its samples wait for the agent however
 * long it takes (no hold time, no grace), and are decoded once it came. */
static void test_early_samples_wait_for_the_agent(void)
{
	struct process_limits lim = {.cct_max_nodes = 100, .held_max_bytes = 1 << 20, .hold_ns = 1000};
	struct process_table t;
	struct process *p;
	struct js_sample *s = leaf_sample(5000);
	const uint64_t sec = 1000000000ull;

	process_table_init(&t, &lim);
	p = process_create(&t, 78, 0, PROCESS_VM_EARLY);
	CHECK(p && p->early);
	if (!p) {
		free(s);
		return;
	}
	process_take_sample(&t, p, s, s->time_ns);
	process_retry_held(&t, p, 100 * sec); /* far past hold and grace */
	CHECK_EQ(sample_queue_len(&p->held), 1);
	process_agent_came(&t, p, 100 * sec);
	CHECK(tb_apply_layout(&p->jvm, 0x10000080, 0x10000000, 0x20000000) == 0);
	add_code(p);
	process_retry_held(&t, p, 100 * sec);
	CHECK_EQ(sample_queue_len(&p->held), 0);
	CHECK_EQ(p->stats.resolved, 1);
	free(s);
	process_table_free(&t);
}

/* An agent that never reports a complete state (its cut time stays put)
 * does not keep samples held for ever: by jsampled's own clock they are
 * settled 30 s past their hold time. */
static void test_hold_ends_without_the_agent(void)
{
	struct process_limits lim = {.cct_max_nodes = 100, .held_max_bytes = 1 << 20, .hold_ns = 1000};
	struct process_table t;
	struct process *p;
	struct js_sample *s = leaf_sample(5000);
	const uint64_t sec = 1000000000ull;

	process_table_init(&t, &lim);
	p = process_create(&t, 79, 0, "");
	CHECK(tb_apply_layout(&p->jvm, 0x10000080, 0x10000000, 0x20000000) == 0);
	s->regs[JS_REG_IP] = 0x10090000; /* code never reported */
	process_take_sample(&t, p, s, 5000);
	CHECK_EQ(sample_queue_len(&p->held), 1);
	process_retry_held(&t, p, 5000 + 29 * sec);
	CHECK_EQ(sample_queue_len(&p->held), 1);
	process_retry_held(&t, p, 5000 + 1000 + 30 * sec);
	CHECK_EQ(sample_queue_len(&p->held), 0);
	CHECK_EQ(p->stats.reasons[DECODE_FAIL_UNKNOWN_CODE], 1);
	free(s);
	process_table_free(&t);
}

static void test_held_queue_overflow_is_counted(void)
{
	struct process_limits lim = {.cct_max_nodes = 100, .held_max_bytes = 3 * (sizeof(struct js_sample) + 256),
				     .hold_ns = 1000};
	struct process_table t;
	struct process *p;

	process_table_init(&t, &lim);
	p = process_create(&t, 78, 0, "");
	for (int i = 0; i < 5; i++) {
		struct js_sample *s = leaf_sample(100 + (uint64_t)i);
		process_take_sample(&t, p, s, s->time_ns);
		free(s);
	}
	CHECK_EQ(sample_queue_len(&p->held), 3);
	CHECK_EQ(p->stats.dropped, 2);
	CHECK_EQ(p->stats.dropped_queue_full, 2);
	/* A newer process with the same pid replaces it for lookups. */
	struct process *q = process_create(&t, 78, 0, "");
	CHECK(process_lookup(&t, 78) == q);
	process_table_free(&t);
}

/* A held copy of a thread that has a base, but whose range wraps past the
 * top of the address space (a crafted or corrupt record): counted as
 * malformed, never compared chunk by chunk. */
static void test_wrapping_copy_is_malformed(void)
{
	struct process_limits lim = {.cct_max_nodes = 100, .held_max_bytes = 1 << 20, .hold_ns = 1000};
	struct process_table t;
	struct process *p;
	struct js_sample *s = calloc(1, sizeof(*s) + 4096), *w;

	process_table_init(&t, &lim);
	p = process_create(&t, 79, 0, "");
	s->pid = 79;
	s->tid = 5;
	s->time_ns = 100;
	s->regs[JS_REG_IP] = CODE + 0x10; /* no code yet: held, the thread's base */
	s->regs[JS_REG_SP] = s->stack_addr = SP;
	s->stack_len = 4096;
	process_take_sample(&t, p, s, s->time_ns);
	CHECK_EQ(sample_queue_len(&p->held), 1);
	w = calloc(1, sizeof(*w) + 4096);
	memcpy(w, s, sizeof(*w) + 4096);
	w->time_ns = 101;
	w->stack_addr = UINT64_MAX - 100;
	process_take_sample(&t, p, w, w->time_ns);
	CHECK_EQ(t.malformed_samples, 1);
	CHECK_EQ(sample_queue_len(&p->held), 1);
	free(w);
	free(s);
	process_table_free(&t);
}

/* A kernel stack record before its sample: the frames go above the Java
 * frame once the sample is decoded, even after it was held; the java view
 * hides them, with the samples. */
static void test_kernel_stack_follows_a_held_sample(void)
{
	struct process_limits lim = {.cct_max_nodes = 100, .held_max_bytes = 1 << 20, .hold_ns = 1000};
	struct process_table t;
	struct process *p;
	struct js_sample *s, *k;
	struct cct java, mixed;
	uint64_t addrs[2] = {0xffffffff81000010ull, 0xffffffff81000110ull}; /* innermost first */
	char path[] = "/tmp/jsampled-kallsyms.XXXXXX";
	FILE *f;
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	f = fdopen(fd, "w");
	fprintf(f, "ffffffff81000000 T vfs_write\nffffffff81000100 T do_syscall_64\nffffffff81000200 T _etext\n");
	fclose(f);
	CHECK(kernel_symbols_load(path) == 0);
	unlink(path);

	process_table_init(&t, &lim);
	p = process_create(&t, 77, 0, "");
	if (!p)
		return;
	s = leaf_sample(100);
	s->flags |= JS_SAMPLE_KERNEL_MODE;
	k = calloc(1, sizeof(*k) + sizeof(addrs));
	*k = (struct js_sample){.time_ns = 100, .pid = 77, .flags = JS_SAMPLE_KSTACK | JS_SAMPLE_KERNEL_MODE,
				.stack_len = sizeof(addrs)};
	memcpy(k->stack, addrs, sizeof(addrs));
	process_take_sample(&t, p, k, 100);
	process_take_sample(&t, p, s, 100);
	CHECK_EQ(p->stats.samples, 1); /* the record is no sample */
	CHECK_EQ(sample_queue_len(&p->held), 1);
	CHECK(tb_apply_layout(&p->jvm, 0x10000080, 0x10000000, 0x20000000) == 0);
	add_code(p);
	process_retry_held(&t, p, 10000);
	CHECK_EQ(p->stats.resolved, 1);
	/* root, the Java method, then do_syscall_64 and vfs_write */
	CHECK_EQ(p->cct.nodes.n, 4);
	if (p->cct.nodes.n == 4) {
		CHECK_EQ(p->cct.nodes.v[2].type, FRAME_KERNEL);
		CHECK_STR(kernel_symbols_name(p->cct.nodes.v[2].method_id), "do_syscall_64");
		CHECK_STR(kernel_symbols_name(p->cct.nodes.v[3].method_id), "vfs_write");
		CHECK_EQ(p->cct.self.v[3], 1);
	}
	CHECK(cct_view_build(&p->cct, VIEW_MERGE_BCI, VIEW_JAVA, NULL, &java) == 0);
	CHECK(cct_view_build(&p->cct, VIEW_MERGE_BCI, VIEW_MIXED, NULL, &mixed) == 0);
	CHECK_EQ(java.nodes.n, 2);
	CHECK_EQ(java.self.v[1], 1);
	CHECK_EQ(mixed.nodes.n, 4);
	CHECK_EQ(java.samples, mixed.samples);
	cct_free(&java);
	cct_free(&mixed);
	CHECK_EQ(p->kstacks.by_sample.count, 0);
	free(s);
	free(k);
	process_table_free(&t);
	kernel_symbols_free();
}

/* An off-CPU sample: its JS_SAMPLE_WAIT record's ticks are its weight,
 * its trace goes below the root's [off-CPU] node and ends in the system
 * call it waited in (a kernel frame: the mixed view's); the cpu view has
 * none of it, the offcpu and wall views all of it. A sample whose weight
 * never came is dropped, counted; a malformed record too. */
static void test_off_cpu_sample_weighed_by_its_wait(void)
{
	struct process_limits lim = {.cct_max_nodes = 100, .held_max_bytes = 1 << 20, .hold_ns = 1000};
	struct process_table t;
	struct process *p;
	struct js_sample *s, *w, *lone;
	struct js_wait wait = {.waited_ns = 35000000, .ticks = 3, .syscall = 202};
	struct cct cpu, off, wall, mixed;

	process_table_init(&t, &lim);
	t.period_ns = 10000000;
	p = process_create(&t, 77, 0, "");
	if (!p)
		return;
	CHECK(tb_apply_layout(&p->jvm, 0x10000080, 0x10000000, 0x20000000) == 0);
	add_code(p);
	w = calloc(1, sizeof(*w) + sizeof(wait));
	*w = (struct js_sample){.time_ns = 100, .pid = 77, .flags = JS_SAMPLE_WAIT, .stack_len = sizeof(wait)};
	memcpy(w->stack, &wait, sizeof(wait));
	s = leaf_sample(100);
	s->flags |= JS_SAMPLE_OFFCPU;
	process_take_sample(&t, p, w, 100);
	process_take_sample(&t, p, s, 100);
	/* and a CPU sample of the same path */
	free(s);
	s = leaf_sample(200);
	process_take_sample(&t, p, s, 200);
	CHECK_EQ(p->stats.samples, 2); /* the record is no sample */
	CHECK_EQ(p->stats.offcpu_samples, 1);
	CHECK_EQ(p->stats.offcpu_ticks, 3);
	CHECK_EQ(p->offcpu_ns, 30000000);
	CHECK_EQ(p->profiled_ns, 10000000);
	CHECK_EQ(p->cct.samples, 4);
	/* The weight is used up: a second sample of that tick weighs nothing. */
	free(s);
	lone = leaf_sample(100);
	lone->flags |= JS_SAMPLE_OFFCPU;
	process_take_sample(&t, p, lone, 300);
	CHECK_EQ(p->stats.offcpu_unweighed, 1);
	CHECK_EQ(p->cct.samples, 4);
	/* A record of the wrong size is counted, not read. */
	w->stack_len = 4;
	process_take_sample(&t, p, w, 300);
	CHECK_EQ(p->waits.malformed, 1);

	CHECK(cct_view_build(&p->cct, VIEW_MERGE_BCI, VIEW_JAVA, NULL, &cpu) == 0);
	CHECK(cct_view_build(&p->cct, VIEW_MERGE_BCI, VIEW_OFFCPU, NULL, &off) == 0);
	CHECK(cct_view_build(&p->cct, VIEW_MERGE_BCI, VIEW_WALL, NULL, &wall) == 0);
	CHECK(cct_view_build(&p->cct, VIEW_MERGE_BCI, VIEW_OFFCPU | VIEW_MIXED, NULL, &mixed) == 0);
	CHECK_EQ(cpu.samples, 1);
	CHECK_EQ(off.samples, 3);
	CHECK_EQ(wall.samples, 4);
	/* The same Java path in all three, no [off-CPU]; the waits end in
	 * [blocked] (the record says it was runnable for none of it). */
	CHECK_EQ(cpu.nodes.n, 2);
	CHECK_EQ(off.nodes.n, 3);
	CHECK_EQ(wall.nodes.n, 3);
	if (wall.nodes.n == 3) {
		CHECK_EQ(wall.self.v[1], 1);
		CHECK_EQ(wall.nodes.v[2].method_id, PSEUDO_BLOCKED);
		CHECK_EQ(wall.self.v[2], 3);
	}
	CHECK_EQ(mixed.nodes.n, 4);
	if (mixed.nodes.n == 4) {
		CHECK_EQ(mixed.nodes.v[2].type, FRAME_KERNEL);
		CHECK_STR(kernel_symbols_name(mixed.nodes.v[2].method_id), "sys_futex");
		CHECK_EQ(mixed.nodes.v[3].method_id, PSEUDO_BLOCKED);
		CHECK_EQ(mixed.self.v[3], 3);
	}
	cct_free(&cpu);
	cct_free(&off);
	cct_free(&wall);
	cct_free(&mixed);
	free(w);
	free(lone);
	process_table_free(&t);
}

/* A BATCH payload: the header, then each record of w (kind + length
 * framed already), count of them. */
static int apply_records(struct process_table *t, struct process *p, const struct wbuf *recs, uint32_t count,
			 uint64_t now)
{
	struct batch_info info;
	struct wbuf w;
	int r;

	wbuf_init(&w);
	wbuf_u64(&w, 0);
	wbuf_u64(&w, 1);
	wbuf_u64(&w, 0); /* the agent's clock stays: held samples wait */
	wbuf_u8(&w, 0);
	wbuf_u32(&w, count);
	wbuf_put(&w, recs->data, recs->len);
	r = process_apply_batch(t, p, w.data, w.len, &info, 0, now);
	wbuf_free(&w);
	return r;
}

static void record_class(struct wbuf *w, uint32_t id)
{
	char sig[32];
	struct wbuf body;

	snprintf(sig, sizeof(sig), "LHidden/0x%x;", id);
	wbuf_init(&body);
	wbuf_u32(&body, id);
	wbuf_str(&body, sig);
	wbuf_str(&body, "");
	wbuf_u16(w, JS_REC_CLASS);
	wbuf_u32(w, (uint32_t)body.len);
	wbuf_put(w, body.data, body.len);
	wbuf_free(&body);
}

static void record_method_ref(struct wbuf *w, uint32_t id, uint32_t class_id)
{
	wbuf_u16(w, JS_REC_METHOD_REF);
	wbuf_u32(w, 28);
	wbuf_u32(w, id);
	wbuf_u32(w, class_id);
	wbuf_u64(w, 0x7f0000000000ull + id * 64);
	wbuf_u64(w, 0x7f1000000000ull + id * 64);
	wbuf_u32(w, 10);
}

/* A process whose JVM's layout is known, and its classes 1..n, each with
 * one method, loaded at now. */
static struct process *process_with_classes(struct process_table *t, pid_t pid, struct wbuf *w, uint32_t n,
					    uint64_t now)
{
	struct process *p = process_create(t, pid, 0, "");

	CHECK(p != NULL);
	if (!p)
		return NULL;
	CHECK(tb_apply_layout(&p->jvm, 0x10000080, 0x10000000, 0x20000000) == 0);
	wbuf_reset(w);
	for (uint32_t c = 1; c <= n; c++) {
		record_class(w, c);
		record_method_ref(w, c, c);
	}
	CHECK_EQ(apply_records(t, p, w, 2 * n, now), BATCH_OK);
	return p;
}

/* Classes 1..n unloaded at when, the news applied at now. */
static void unload_classes(struct process_table *t, struct process *p, struct wbuf *w, uint32_t n, uint64_t when,
			   uint64_t now)
{
	wbuf_reset(w);
	wbuf_u16(w, JS_REC_CLASS_UNLOAD);
	wbuf_u32(w, 12 + 4 * n);
	wbuf_u64(w, when);
	wbuf_u32(w, n);
	for (uint32_t c = 1; c <= n; c++)
		wbuf_u32(w, c);
	CHECK_EQ(apply_records(t, p, w, 1, now), BATCH_OK);
}

/* Classes the JVM unloaded leave the model once no held sample can need
 * them, except the methods the tree names. */
static void test_unloaded_classes_are_dropped(void)
{
	struct process_limits lim = {.cct_max_nodes = 100, .held_max_bytes = 1 << 20, .hold_ns = 1000};
	const uint64_t ms = 1000000, t0 = 1000 * ms;
	enum { N = 1000 };
	struct process_table t;
	struct process *p;
	struct js_sample *s;
	struct wbuf w;

	process_table_init(&t, &lim);
	wbuf_init(&w);
	if (!(p = process_with_classes(&t, 77, &w, N, t0))) {
		wbuf_free(&w);
		process_table_free(&t);
		return;
	}
	add_code(p); /* its nmethod runs method 1 */
	s = leaf_sample(t0 + ms);
	process_take_sample(&t, p, s, s->time_ns);
	CHECK_EQ(p->stats.resolved, 1);

	/* All unloaded; the code of method 1 too (it stays in the code map
	 * for a while, and its method with it). */
	unload_classes(&t, p, &w, N, t0 + 2 * ms, t0 + 3 * ms);
	CHECK_EQ(p->jvm.methods.unloaded_classes, N);
	CHECK_EQ(p->jvm.methods.methods.n, N); /* too recent to go */

	/* A held sample taken before they were unloaded keeps them all. */
	s->regs[JS_REG_IP] = 0x10090000; /* code not reported yet */
	s->time_ns = t0 + ms;
	process_take_sample(&t, p, s, s->time_ns);
	CHECK_EQ(sample_queue_len(&p->held), 1);
	wbuf_reset(&w);
	CHECK_EQ(apply_records(&t, p, &w, 0, t0 + 500 * ms), BATCH_OK);
	CHECK_EQ(p->jvm.methods.methods.n, N);

	/* Settled: the unnamed ones go; method 1 keeps its name. */
	p->agent_cut_ns = t0 + 600 * ms;
	process_retry_held(&t, p, t0 + 600 * ms);
	CHECK_EQ(sample_queue_len(&p->held), 0);
	CHECK_EQ(apply_records(&t, p, &w, 0, t0 + 900 * ms), BATCH_OK);
	CHECK_EQ(p->jvm.methods.methods.n, 1);
	CHECK_EQ(p->jvm.methods.dropped_methods, N - 1);
	CHECK_EQ(p->jvm.methods.dropped_classes, N - 1);
	CHECK_EQ(p->jvm.methods.unloaded_classes, 0);
	CHECK_STR(method_table_class_name(&p->jvm.methods, 1), "Hidden.0x1");
	CHECK_EQ(method_table_by_ptr(&p->jvm.methods, 0x7f0000000000ull + 64), 0);
	free(s);
	wbuf_free(&w);
	process_table_free(&t);
}

/* A sample waits in the ring until the next drain: an unloaded class's
 * records stay while a sample taken before its unload may still wait
 * there (the drain period on top of the grace), then go. */
static void test_unloaded_classes_wait_for_the_drain(void)
{
	struct process_limits lim = {
		.cct_max_nodes = 100, .held_max_bytes = 1 << 20, .hold_ns = 1000, .drain_ns = 500ull * 1000000};
	const uint64_t ms = 1000000, t0 = 1000 * ms, unloaded = t0 + 2 * ms;
	enum { N = 1000 };
	struct process_table t;
	struct process *p;
	struct wbuf w;

	process_table_init(&t, &lim);
	wbuf_init(&w);
	if (!(p = process_with_classes(&t, 78, &w, N, t0))) {
		wbuf_free(&w);
		process_table_free(&t);
		return;
	}
	unload_classes(&t, p, &w, N, unloaded, t0 + 3 * ms);
	wbuf_reset(&w);
	/* Past the grace alone, within grace and drain period: kept. */
	CHECK_EQ(apply_records(&t, p, &w, 0, unloaded + 300 * ms), BATCH_OK);
	CHECK_EQ(p->jvm.methods.methods.n, N);
	CHECK_EQ(apply_records(&t, p, &w, 0, unloaded + 800 * ms), BATCH_OK);
	CHECK_EQ(p->jvm.methods.methods.n, 0);
	CHECK_EQ(p->jvm.methods.dropped_classes, N);
	wbuf_free(&w);
	process_table_free(&t);
}

/* What an off-CPU sample waited for: the JVM's thread state, and for a
 * blocked thread its java.lang.Thread status (JVMTI bits), as the trace's
 * last frame; nothing is believed without a Java frame or the flags that
 * say the BPF program read them. */
static void test_wait_states(void)
{
	struct vm_layout L = {.state_in_native = 4, .state_in_vm = 6, .state_in_java = 8, .state_blocked = 10};
	const uint32_t has = JS_SAMPLE_OFFCPU | JS_SAMPLE_HAS_STATE, all = has | JS_SAMPLE_HAS_STATUS;
	static const struct {
		uint32_t flags, state;
		bool runnable, java;
		uint32_t want;
	} cases[] = {
		{.flags = all, .state = 0x2a1u << 16 | 10, .runnable = true, .java = true, .want = PSEUDO_RUNNABLE},
		{.flags = JS_SAMPLE_OFFCPU, .state = 10, .java = true, .want = PSEUDO_BLOCKED},
		{.flags = all, .state = 0x2a1u << 16 | 10, .java = false, .want = PSEUDO_BLOCKED},
		{.flags = has, .state = 4, .java = true, .want = PSEUDO_BLOCKED_NATIVE},
		{.flags = has, .state = 5, .java = true, .want = PSEUDO_BLOCKED_NATIVE}, /* _thread_in_native_trans */
		{.flags = has, .state = 6, .java = true, .want = PSEUDO_BLOCKED_VM},
		{.flags = has, .state = 10, .java = true, .want = PSEUDO_BLOCKED_VM}, /* no status read */
		{.flags = all, .state = 0x401u << 16 | 10, .java = true, .want = PSEUDO_BLOCKED_MONITOR},
		{.flags = all, .state = 0x291u << 16 | 10, .java = true, .want = PSEUDO_BLOCKED_PARKED},
		{.flags = all, .state = 0x1a1u << 16 | 11, .java = true, .want = PSEUDO_BLOCKED_WAITING},
		{.flags = all, .state = 0x0e1u << 16 | 10, .java = true, .want = PSEUDO_BLOCKED_SLEEPING},
		{.flags = all, .state = 0x005u << 16 | 10, .java = true, .want = PSEUDO_BLOCKED_VM},
		/* The status bits alone never make a thread in native blocked. */
		{.flags = all, .state = 0x401u << 16 | 4, .java = true, .want = PSEUDO_BLOCKED_NATIVE},
		{.flags = all, .state = 0x401u << 16 | 8, .java = true, .want = PSEUDO_BLOCKED},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint32_t got = wait_state_frame(&L, cases[i].flags, cases[i].state, cases[i].runnable, cases[i].java);
		if (got != cases[i].want)
			fprintf(stderr, "case %zu: %s, want %s\n", i, pseudo_frame_name(got),
				pseudo_frame_name(cases[i].want));
		CHECK_EQ(got, cases[i].want);
	}
	/* A JVM whose agent reported no states: only blocked or runnable. */
	L.state_blocked = L.state_in_native = L.state_in_vm = -1;
	CHECK_EQ(wait_state_frame(&L, all, 0x401u << 16 | 10, false, true), PSEUDO_BLOCKED);
}

int main(void)
{
	RUN(test_hold_and_release);
	RUN(test_hold_ends_without_the_agent);
	RUN(test_early_samples_wait_for_the_agent);
	RUN(test_forget_one);
	RUN(test_held_queue_overflow_is_counted);
	RUN(test_wrapping_copy_is_malformed);
	RUN(test_kernel_stack_follows_a_held_sample);
	RUN(test_off_cpu_sample_weighed_by_its_wait);
	RUN(test_wait_states);
	RUN(test_unloaded_classes_are_dropped);
	RUN(test_unloaded_classes_wait_for_the_drain);
	return CHECK_DONE();
}
