/* SPDX-License-Identifier: GPL-2.0-only */
/* Java threads -> THREAD records: each thread's JavaThread*, its stack
 * bounds and name, so jsampled can have the BPF program read the thread's
 * frame anchor at sample time (the last Java frame of a thread in native or
 * VM code) and copy only the thread's real stack.
 *
 * ThreadStart/ThreadEnd run on the thread itself. The JavaThread* is found
 * from the thread's JNIEnv, which HotSpot embeds at a fixed distance inside
 * JavaThread; that distance is not exported, so it is measured once by
 * finding the current thread in the VM's thread list (matched by tid) and
 * re-validated for every thread. */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "userspace/common/agent_protocol.h"
#include "agent.h"
#include "libc_baseline.h"
#include "safe_read.h"

static atomic_long jni_env_offset; /* JNIEnv* - JavaThread*, 0 until measured */

static uint32_t current_tid(void)
{
	return (uint32_t)syscall(SYS_gettid);
}

static int thread_tid(uint64_t java_thread, uint32_t *tid)
{
	const struct hs_layout *L = &g_agent.layout;
	uint64_t osthread;
	int64_t v;

	if (vm_read_ptr(&L->thread_osthread, java_thread, &osthread) != 0 || !osthread ||
	    vm_read_int(&L->osthread_tid, osthread, &v) != 0 || v <= 0)
		return -1;
	*tid = (uint32_t)v;
	return 0;
}

/* Calls fn for every JavaThread in the VM's current thread list. The list
 * can be freed while we read it (no SMR hazard pointer is held), which is
 * why every read is a safe read and every value is validated. */
static void for_each_java_thread(void (*fn)(uint64_t java_thread, void *ctx), void *ctx)
{
	const struct hs_layout *L = &g_agent.layout;
	uint64_t list, threads;
	int64_t n;

	/* JDK 11: Threads::_thread_list and JavaThread::_next (the SA's way
	 * there; its vmStructs export no ThreadsList), bounded against a
	 * list that changes, or loops, while we read it. */
	if (!L->threads_list.present && L->thread_list_head.present && L->thread_next.present) {
		uint64_t jt;
		if (vm_read_ptr(&L->thread_list_head, 0, &jt) != 0)
			return;
		for (int i = 0; jt && i < 100000; i++) {
			fn(jt, ctx);
			if (vm_read_ptr(&L->thread_next, jt, &jt) != 0)
				return;
		}
		return;
	}
	if (vm_read_ptr(&L->threads_list, 0, &list) != 0 || !list ||
	    vm_read_int(&L->list_length, list, &n) != 0 || n <= 0 || n > 1000000 ||
	    vm_read_ptr(&L->list_threads, list, &threads) != 0 || !threads)
		return;
	for (int64_t i = 0; i < n; i++) {
		uint64_t jt;
		if (safe_read_u64(threads + 8 * (uint64_t)i, &jt) == 0 && jt)
			fn(jt, ctx);
	}
}

struct find_ctx {
	uint32_t tid;
	uint64_t found;
};

static void match_tid(uint64_t jt, void *ctx)
{
	struct find_ctx *f = ctx;
	uint32_t tid;

	if (!f->found && thread_tid(jt, &tid) == 0 && tid == f->tid)
		f->found = jt;
}

/* The current thread's JavaThread*, or 0. */
static uint64_t current_java_thread(JNIEnv *jni)
{
	uint32_t tid = current_tid(), got;
	long off = atomic_load(&jni_env_offset);
	struct find_ctx f = {.tid = tid};

	if (off) {
		uint64_t jt = (uint64_t)(uintptr_t)jni - (uint64_t)off;
		if (thread_tid(jt, &got) == 0 && got == tid)
			return jt;
	}
	for_each_java_thread(match_tid, &f);
	if (f.found && jni) {
		long measured = (long)((uint64_t)(uintptr_t)jni - f.found);
		if (measured > 0 && measured < 1 << 16)
			atomic_store(&jni_env_offset, measured);
	}
	return f.found;
}

static void record_thread(uint32_t tid, uint64_t jt, const char *name, int alive)
{
	const struct hs_layout *L = &g_agent.layout;
	uint64_t base = 0, size = 0;
	struct wbuf w;

	if (alive && jt) {
		if (vm_read_ptr(&L->thread_stack_base, jt, &base) != 0)
			base = 0;
		if (vm_read_ptr(&L->thread_stack_size, jt, &size) != 0 || size > base)
			size = 0;
	}
	wbuf_init(&w);
	wbuf_u32(&w, tid);
	wbuf_u8(&w, (uint8_t)alive);
	wbuf_u64(&w, jt);
	wbuf_u64(&w, base);
	wbuf_u64(&w, size);
	wbuf_u64(&w, agent_now_ns());
	wbuf_str(&w, name);
	store_lock(&g_agent.store);
	if (!w.oom)
		store_append_locked(&g_agent.store, JS_REC_THREAD, tid, !alive, w.data, w.len);
	store_unlock(&g_agent.store);
	wbuf_free(&w);
}

void JNICALL on_thread_start(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
	jvmtiThreadInfo info;
	uint64_t jt;

	if (atomic_load(&g_agent.disabled))
		return;
	jt = current_java_thread(jni);
	memset(&info, 0, sizeof(info));
	if ((*jvmti)->GetThreadInfo(jvmti, thread, &info) != JVMTI_ERROR_NONE)
		info.name = NULL;
	record_thread(current_tid(), jt, info.name ? info.name : "", 1);
	if (info.name)
		(*jvmti)->Deallocate(jvmti, (unsigned char *)info.name);
	if (info.thread_group)
		(*jni)->DeleteLocalRef(jni, info.thread_group);
	if (info.context_class_loader)
		(*jni)->DeleteLocalRef(jni, info.context_class_loader);
}

void JNICALL on_thread_end(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
	(void)jvmti;
	(void)jni;
	(void)thread;
	if (atomic_load(&g_agent.disabled))
		return;
	record_thread(current_tid(), 0, "", 0);
}

static void record_existing(uint64_t jt, void *ctx)
{
	uint32_t tid;
	char name[16] = "", path[64];
	FILE *f;

	(void)ctx;
	if (thread_tid(jt, &tid) != 0)
		return;
	snprintf(path, sizeof(path), "/proc/self/task/%u/comm", tid);
	f = fopen(path, "r");
	if (f) {
		if (fgets(name, sizeof(name), f))
			name[strcspn(name, "\n")] = 0;
		fclose(f);
	}
	record_thread(tid, jt, name, 1);
}

void register_existing_threads(void)
{
	if (atomic_load(&g_agent.disabled) || !g_agent.layout.threads_list.present)
		return;
	for_each_java_thread(record_existing, NULL);
}

/* Finds Thread::_thr_current: libjvm's TLS module id from the dynamic
 * linker, and the offset in the calling thread's TLS block of the one word
 * that holds this thread's JavaThread*. Measured rather than looked up in
 * the symbol table, which a stripped libjvm does not have. Leaves the
 * layout's fields at -1 if anything is ambiguous. */
#ifdef __GLIBC__
struct tls_size_ctx {
	size_t modid;
	size_t size; /* 0 until found */
};

static int find_tls_size(struct dl_phdr_info *info, size_t len, void *arg)
{
	struct tls_size_ctx *c = arg;

	(void)len;
	if (info->dlpi_tls_modid != c->modid)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_TLS)
			c->size = info->dlpi_phdr[i].p_memsz;
	return 1;
}
#endif

void measure_thread_tls(JNIEnv *jni)
{
#ifndef __GLIBC__
	/* musl: no TLS module ids, and not glibc's DTV that the BPF program
	 * follows. The fields stay -1. */
	(void)jni;
	agent_log(1, "this libc has no dlinfo(RTLD_DI_TLS_MODID): Thread::_thr_current not located");
}
#else
	struct hs_layout *L = &g_agent.layout;
	void *lib = dlopen("libjvm.so", RTLD_NOW | RTLD_NOLOAD);
	size_t modid = 0;
	void *block = NULL;
	uint64_t jt = current_java_thread(jni), word;
	int found = -1, matches = 0;
	struct tls_size_ctx size = {0};

	if (!lib)
		return;
	if (dlinfo(lib, RTLD_DI_TLS_MODID, &modid) != 0 || modid == 0 ||
	    dlinfo(lib, RTLD_DI_TLS_DATA, &block) != 0 || !block || !jt) {
		agent_log(1, "no TLS block of libjvm to find Thread::_thr_current in (modid %zu, block %p, thread %#lx)",
			  modid, block, (unsigned long)jt);
		dlclose(lib);
		return;
	}
	dlclose(lib);
	/* Only libjvm's own block (PT_TLS's size, tens of bytes): past it lie
	 * other modules' thread-locals, which may hold the same pointer (seen
	 * on JDK 25, at an offset that moved with the length of the command
	 * line). At most 512 bytes. */
	size.modid = modid;
	dl_iterate_phdr(find_tls_size, &size);
	if (!size.size || size.size > 512)
		size.size = 512;
	for (int i = 0; 8 * (size_t)i + 8 <= size.size; i++) {
		if (safe_read_u64((uint64_t)(uintptr_t)block + 8 * (uint64_t)i, &word) != 0)
			break;
		if (word == jt) {
			found = i;
			matches++;
		}
	}
	if (matches != 1) {
		agent_log(1, "Thread::_thr_current not found in libjvm's TLS block (%d matches)", matches);
		return;
	}
	L->tls_modid = (int64_t)modid;
	L->tls_thread_offset = found * 8;
	agent_log(1, "Thread::_thr_current at TLS module %zu offset %d", modid, found * 8);
}
#endif
