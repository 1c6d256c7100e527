/* SPDX-License-Identifier: GPL-2.0-only */
#include "sampler_bpf.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "daemon/support/log.h"
#include "daemon/jvm/procfs.h"
#include "sampler.skel.h"

struct sampler {
	struct sampler_bpf *skel;
	struct sampler_events *events;
	int ncpus;
	/* Off-CPU programs: loaded (cfg->offcpu), wanted (sampler_set_offcpu)
	 * and not paused (sampler_enable): attached only when all three. */
	bool offcpu_loaded, offcpu_wanted, paused;
};

/* Attaches or detaches the off-CPU programs as the state says. */
static int offcpu_links(struct sampler *s)
{
	bool on = s->offcpu_loaded && s->offcpu_wanted && !s->paused;
	struct bpf_link **sw = &s->skel->links.note_switch, **ex = &s->skel->links.sample_offcpu;

	if (!on) {
		bpf_link__destroy(*sw);
		bpf_link__destroy(*ex);
		*sw = NULL;
		*ex = NULL;
		return 0;
	}
	/* Both: the switches measure the time, the system calls' returns
	 * take the stack. Waits begun while detached are forgotten. */
	if (!*sw)
		__sync_fetch_and_add(&s->skel->data->offcpu_epoch, 1);
	if (!*sw)
		*sw = bpf_program__attach(s->skel->progs.note_switch);
	if (*sw && !*ex)
		*ex = bpf_program__attach(s->skel->progs.sample_offcpu);
	if (*sw && *ex)
		return 0;
	int e = -errno;
	bpf_link__destroy(*sw);
	bpf_link__destroy(*ex);
	*sw = NULL;
	*ex = NULL;
	return e ? e : -EINVAL;
}

static int libbpf_to_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char line[1024];
	int prio = level == LIBBPF_WARN ? LOG_WARNING : LOG_DEBUG;
	size_t n;

	if (prio > log_level())
		return 0;
	vsnprintf(line, sizeof(line), fmt, ap);
	n = strlen(line);
	while (n && line[n - 1] == '\n')
		line[--n] = 0;
	log_msg(prio, "%s", line);
	return 0;
}

static const char *privilege_hint(int e)
{
	FILE *f;
	int paranoid = 0;

	if (e == EPERM)
		return " (jsampled needs CAP_BPF and CAP_PERFMON, or root)";
	if (e == EACCES) {
		f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
		if (f) {
			if (fscanf(f, "%d", &paranoid) != 1)
				paranoid = 0;
			fclose(f);
		}
		/* Debian's kernels add level 3: no perf events without CAP_SYS_ADMIN. */
		if (paranoid >= 3)
			return " (kernel.perf_event_paranoid is 3: perf events need CAP_SYS_ADMIN)";
		return " (jsampled needs CAP_PERFMON, or root)";
	}
	return "";
}

int sampler_open(struct sampler **out, const struct sampler_config *cfg, char *err, size_t errlen)
{
	struct sampler *s = calloc(1, sizeof(*s));
	int e = 0;

	*out = NULL;
	if (!s)
		return -ENOMEM;
	libbpf_set_print(libbpf_to_log);

	s->ncpus = libbpf_num_possible_cpus();
	if (s->ncpus <= 0) {
		e = s->ncpus ? s->ncpus : -EINVAL;
		snprintf(err, errlen, "cannot count possible CPUs: %s", strerror(-e));
		goto cleanup;
	}
	if (cfg->frequency_hz < SAMPLER_MIN_HZ || cfg->frequency_hz > SAMPLER_MAX_HZ) {
		e = -EINVAL;
		snprintf(err, errlen, "frequency %u Hz out of range (%u..%u)", cfg->frequency_hz, SAMPLER_MIN_HZ,
			 SAMPLER_MAX_HZ);
		goto cleanup;
	}
	if (cfg->fragment_bytes > JS_MAX_FRAGMENT_BYTES) {
		e = -EINVAL;
		snprintf(err, errlen, "fragment size %u exceeds the maximum %u", cfg->fragment_bytes,
			 JS_MAX_FRAGMENT_BYTES);
		goto cleanup;
	}

	s->skel = sampler_bpf__open();
	if (!s->skel) {
		e = -errno;
		snprintf(err, errlen, "cannot open the BPF object: %s", strerror(-e));
		goto cleanup;
	}
	s->skel->rodata->fragment_bytes = cfg->fragment_bytes;
	s->skel->rodata->fill_bytes = cfg->fill_bytes;
	s->skel->rodata->kernel_stacks = cfg->kernel_stacks;
	s->skel->rodata->native_stacks = cfg->native_stacks;
	s->skel->rodata->wakeup_watermark = cfg->wakeup_watermark;
	s->skel->bss->offcpu_period_ns = cfg->offcpu ? 1000000000ull / cfg->frequency_hz : 0;
	bpf_program__set_autoload(s->skel->progs.note_switch, cfg->offcpu);
	bpf_program__set_autoload(s->skel->progs.sample_offcpu, cfg->offcpu);
	s->skel->rodata->nr_cpus = (__u32)s->ncpus;
	/* Off-CPU samples have two more slots per CPU: the system calls'
	 * returns, the switches (bpf/sampler.bpf.c). */
	bpf_map__set_max_entries(s->skel->maps.scratch, (cfg->offcpu ? 3 : 1) * (__u32)s->ncpus);
	s->skel->rodata->stash_slots = cfg->offcpu ? (s->ncpus * 4 > 64 ? (__u32)s->ncpus * 4 : 64) : 1;
	bpf_map__set_max_entries(s->skel->maps.stash, s->skel->rodata->stash_slots);
	bpf_map__set_max_entries(s->skel->maps.samples, (__u32)cfg->ringbuf_bytes);

	e = sampler_bpf__load(s->skel);
	if (e) {
		snprintf(err, errlen, "cannot load the BPF program: %s%s", strerror(-e),
			 privilege_hint(-e));
		goto cleanup;
	}
	/* The exit tracepoint keeps the thread cache honest; sampling works
	 * without it, so a failure is only a warning. */
	s->skel->links.forget_thread = bpf_program__attach(s->skel->progs.forget_thread);
	if (!s->skel->links.forget_thread)
		log_warn("cannot attach sched_process_exit: %s", strerror(errno));

	if (cfg->watch_exec) {
		s->skel->links.note_exec = bpf_program__attach(s->skel->progs.note_exec);
		if (!s->skel->links.note_exec)
			log_warn("cannot attach sched_process_exec: %s (new JVMs are found by the periodic scan)",
				 strerror(errno));
	}

	s->offcpu_loaded = s->offcpu_wanted = cfg->offcpu;
	e = offcpu_links(s);
	if (e) {
		snprintf(err, errlen, "cannot attach the off-CPU programs (sched_switch, sys_exit): %s", strerror(-e));
		goto cleanup;
	}

	e = sampler_events_open(&s->events, cfg->events, bpf_program__fd(s->skel->progs.sample_stack),
				cfg->frequency_hz, err, errlen);
	if (e) {
		size_t n = strlen(err);
		snprintf(err + n, errlen - n, "%s", privilege_hint(-e));
		goto cleanup;
	}
	*out = s;
	return 0;

cleanup:
	sampler_close(s);
	return e ? e : -EINVAL;
}

void sampler_close(struct sampler *s)
{
	if (!s)
		return;
	sampler_events_close(s->events);
	sampler_bpf__destroy(s->skel);
	free(s);
}

int sampler_ringbuf_fd(const struct sampler *s)
{
	return bpf_map__fd(s->skel->maps.samples);
}

int sampler_exec_ringbuf_fd(const struct sampler *s)
{
	return s->skel->links.note_exec ? bpf_map__fd(s->skel->maps.execs) : -1;
}

int sampler_watch_sigquit(struct sampler *s, bool on)
{
	struct bpf_link **link = &s->skel->links.note_sigquit;

	if (!on) {
		bpf_link__destroy(*link);
		*link = NULL;
		return 0;
	}
	if (*link)
		return 0;
	*link = bpf_program__attach(s->skel->progs.note_sigquit);
	return *link ? 0 : -errno;
}

int sampler_set_frequency(struct sampler *s, unsigned frequency_hz)
{
	if (frequency_hz < SAMPLER_MIN_HZ || frequency_hz > SAMPLER_MAX_HZ)
		return -EINVAL;
	if (s->skel->bss->offcpu_period_ns)
		s->skel->bss->offcpu_period_ns = 1000000000ull / frequency_hz;
	return sampler_events_set_frequency(s->events, frequency_hz);
}

int sampler_enable(struct sampler *s, int on)
{
	s->paused = !on;
	offcpu_links(s);
	return sampler_events_enable(s->events, on);
}

int sampler_set_offcpu(struct sampler *s, bool on)
{
	if (!s->offcpu_loaded)
		return on ? -EOPNOTSUPP : 0;
	s->offcpu_wanted = on;
	return offcpu_links(s);
}

bool sampler_offcpu(const struct sampler *s)
{
	return s->offcpu_loaded && s->offcpu_wanted;
}

void sampler_read_events(const struct sampler *s, struct sampler_events_counters *c)
{
	sampler_events_read(s->events, c);
}

void sampler_sweep(struct sampler *s)
{
	sampler_events_sweep(s->events);
}

const char *sampler_events_name(const struct sampler *s)
{
	return sampler_events_mode(s->events) == SAMPLE_EVENTS_CPUS ? "cpus" : "threads";
}

int sampler_add_target(struct sampler *s, pid_t pid, const struct js_target *tg)
{
	__u32 key = (__u32)pid;
	int e = bpf_map__update_elem(s->skel->maps.targets, &key, sizeof(key), tg, sizeof(*tg), BPF_ANY);

	if (e)
		return e;
	__sync_fetch_and_add(&s->skel->data->targets_gen, 1);
	/* The entry first: the events' first ticks find it. */
	e = sampler_events_add(s->events, pid);
	if (e < 0) {
		log_warn("pid %d: no perf event could be opened on its threads: %s; not sampled", (int)pid,
			 strerror(-e));
		bpf_map__delete_elem(s->skel->maps.targets, &key, sizeof(key), 0);
		return e;
	}
	return 0;
}

int sampler_remove_target(struct sampler *s, pid_t pid)
{
	__u32 key = (__u32)pid;
	int e = bpf_map__delete_elem(s->skel->maps.targets, &key, sizeof(key), 0);

	__sync_fetch_and_add(&s->skel->data->targets_gen, 1);
	sampler_events_remove(s->events, pid);
	return e == -ENOENT ? 0 : e;
}

int sampler_set_thread(struct sampler *s, pid_t pid, pid_t tid, const struct js_thread_info *ti)
{
	struct js_thread_info v = *ti, cur;
	__u32 key = (__u32)tid;

	v.tgid = (__u32)pid;
	/* What the BPF program learnt of the thread's events stays. */
	if (bpf_map__lookup_elem(s->skel->maps.threads, &key, sizeof(key), &cur, sizeof(cur), 0) == 0 &&
	    cur.tgid == v.tgid)
		v.ticked = cur.ticked;
	return bpf_map__update_elem(s->skel->maps.threads, &key, sizeof(key), &v, sizeof(v), BPF_ANY);
}

/* Read-modify-write of one thread's entry (the BPF program may have made
 * it), only while it belongs to process pid. */
static int update_thread(struct sampler *s, pid_t pid, pid_t tid, const uint64_t *copy_end,
			 const uint32_t *max_copy, const uint32_t *flags, const uint64_t *covered, uint32_t add_flags)
{
	struct js_thread_info ti;
	__u32 key = (__u32)tid;
	int e = bpf_map__lookup_elem(s->skel->maps.threads, &key, sizeof(key), &ti, sizeof(ti), 0);

	if (e)
		return e;
	if (ti.tgid != (__u32)pid)
		return -ESRCH;
	if (copy_end)
		ti.copy_end = *copy_end;
	if (max_copy)
		ti.max_copy = *max_copy;
	if (flags)
		ti.thread_flags = *flags;
	if (covered)
		ti.covered = *covered;
	ti.thread_flags |= add_flags;
	return bpf_map__update_elem(s->skel->maps.threads, &key, sizeof(key), &ti, sizeof(ti), BPF_EXIST);
}

int sampler_set_copy_end(struct sampler *s, pid_t pid, pid_t tid, uint64_t end)
{
	return update_thread(s, pid, tid, &end, NULL, NULL, NULL, 0);
}

int sampler_set_max_copy(struct sampler *s, pid_t pid, pid_t tid, uint32_t bytes)
{
	/* A thread deeper than its copies also gets gap-filling windows. */
	return update_thread(s, pid, tid, NULL, &bytes, NULL, NULL, JS_THREAD_FILL_GAPS);
}

int sampler_set_thread_flags(struct sampler *s, pid_t pid, pid_t tid, uint32_t flags)
{
	return update_thread(s, pid, tid, NULL, NULL, &flags, NULL, 0);
}

int sampler_add_thread_flags(struct sampler *s, pid_t pid, pid_t tid, uint32_t flags)
{
	return update_thread(s, pid, tid, NULL, NULL, NULL, NULL, flags);
}

int sampler_uncover_thread(struct sampler *s, pid_t pid, pid_t tid)
{
	const uint64_t none = 0;

	return update_thread(s, pid, tid, NULL, NULL, NULL, &none, 0);
}

int sampler_forget_thread(struct sampler *s, pid_t pid, pid_t tid)
{
	struct js_thread_info ti;
	__u32 key = (__u32)tid;
	int e = bpf_map__lookup_elem(s->skel->maps.threads, &key, sizeof(key), &ti, sizeof(ti), 0);

	if (e || ti.tgid != (__u32)pid)
		return 0; /* not this process's entry */
	e = bpf_map__delete_elem(s->skel->maps.threads, &key, sizeof(key), 0);
	return e == -ENOENT ? 0 : e;
}

static int prog_stats(const struct bpf_program *prog, uint64_t *run_time_ns, uint64_t *run_cnt)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);
	int fd = bpf_program__fd(prog), e;

	memset(&info, 0, sizeof(info));
	e = fd < 0 ? -EBADF : bpf_obj_get_info_by_fd(fd, &info, &len);
	*run_time_ns = e ? 0 : info.run_time_ns;
	*run_cnt = e ? 0 : info.run_cnt;
	return e;
}

int sampler_prog_stats(struct sampler *s, uint64_t *run_time_ns, uint64_t *run_cnt)
{
	return prog_stats(s->skel->progs.sample_stack, run_time_ns, run_cnt);
}

void sampler_offcpu_prog_stats(struct sampler *s, uint64_t *switch_ns, uint64_t *switch_cnt, uint64_t *exit_ns,
			       uint64_t *exit_cnt)
{
	prog_stats(s->skel->progs.note_switch, switch_ns, switch_cnt);
	prog_stats(s->skel->progs.sample_offcpu, exit_ns, exit_cnt);
}

int sampler_read_counters(struct sampler *s, struct js_counters *sum)
{
	struct js_counters *per = calloc(s->ncpus, sizeof(*per));
	__u32 key = 0;
	int e;

	memset(sum, 0, sizeof(*sum));
	if (!per)
		return -ENOMEM;
	e = bpf_map__lookup_elem(s->skel->maps.counters, &key, sizeof(key), per,
				 sizeof(*per) * s->ncpus, 0);
	if (e == 0) {
		for (int i = 0; i < s->ncpus; i++) {
			const __u64 *src = (const __u64 *)&per[i];
			__u64 *dst = (__u64 *)sum;

			for (size_t k = 0; k < sizeof(*sum) / sizeof(__u64); k++)
				dst[k] += src[k];
		}
	}
	free(per);
	return e;
}
