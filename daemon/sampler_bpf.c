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

#include "log.h"
#include "sampler.skel.h"

struct sampler {
	struct sampler_bpf *skel;
	struct bpf_link **links; /* one per possible CPU, NULL where offline */
	int *event_fds;
	int ncpus;
	unsigned attached;
};

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

/* Parses a CPU list such as "0-3,5" into a byte mask of ncpus entries. */
static int read_cpu_list(const char *path, unsigned char *mask, int ncpus)
{
	char buf[4096];
	FILE *f = fopen(path, "r");
	char *p;

	if (!f)
		return -errno;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	memset(mask, 0, ncpus);
	for (p = buf; *p && *p != '\n';) {
		char *end;
		long a = strtol(p, &end, 10), b;

		if (end == p)
			return -EINVAL;
		b = a;
		p = end;
		if (*p == '-') {
			b = strtol(p + 1, &end, 10);
			if (end == p + 1)
				return -EINVAL;
			p = end;
		}
		for (long c = a; c <= b && c < ncpus; c++)
			if (c >= 0)
				mask[c] = 1;
		if (*p == ',')
			p++;
	}
	return 0;
}

static int open_cpu_clock(int cpu, unsigned frequency_hz)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		/* cpu-clock counts nanoseconds: a fixed period gives the rate. */
		.sample_period = 1000000000ull / frequency_hz,
	};

	return (int)syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
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
	unsigned char *online = NULL;
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
	bpf_map__set_max_entries(s->skel->maps.scratch, (__u32)s->ncpus);
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

	online = calloc(s->ncpus, 1);
	s->links = calloc(s->ncpus, sizeof(*s->links));
	s->event_fds = calloc(s->ncpus, sizeof(*s->event_fds));
	if (!online || !s->links || !s->event_fds) {
		e = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto cleanup;
	}
	if (read_cpu_list("/sys/devices/system/cpu/online", online, s->ncpus) != 0)
		memset(online, 1, s->ncpus);
	for (int cpu = 0; cpu < s->ncpus; cpu++) {
		s->event_fds[cpu] = -1;
		if (!online[cpu])
			continue;
		int fd = open_cpu_clock(cpu, cfg->frequency_hz);
		if (fd < 0) {
			if (errno == ENODEV) { /* went offline meanwhile */
				log_info("CPU %d is offline, not sampled", cpu);
				continue;
			}
			e = -errno;
			snprintf(err, errlen, "perf_event_open(cpu-clock, cpu %d): %s%s", cpu,
				 strerror(-e), privilege_hint(-e));
			goto cleanup;
		}
		s->event_fds[cpu] = fd;
		s->links[cpu] = bpf_program__attach_perf_event(s->skel->progs.sample_stack, fd);
		if (!s->links[cpu]) {
			e = -errno;
			snprintf(err, errlen, "cannot attach to the perf event on cpu %d: %s", cpu,
				 strerror(-e));
			goto cleanup;
		}
		s->attached++;
	}
	if (!s->attached) {
		e = -ENODEV;
		snprintf(err, errlen, "no online CPU could be sampled");
		goto cleanup;
	}
	free(online);
	*out = s;
	return 0;

cleanup:
	free(online);
	sampler_close(s);
	return e ? e : -EINVAL;
}

void sampler_close(struct sampler *s)
{
	if (!s)
		return;
	for (int cpu = 0; s->links && cpu < s->ncpus; cpu++)
		bpf_link__destroy(s->links[cpu]);
	for (int cpu = 0; s->event_fds && cpu < s->ncpus; cpu++)
		if (s->event_fds[cpu] >= 0)
			close(s->event_fds[cpu]);
	sampler_bpf__destroy(s->skel);
	free(s->links);
	free(s->event_fds);
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
	__u64 period;

	if (frequency_hz < SAMPLER_MIN_HZ || frequency_hz > SAMPLER_MAX_HZ)
		return -EINVAL;
	period = 1000000000ull / frequency_hz;
	for (int cpu = 0; cpu < s->ncpus; cpu++)
		if (s->event_fds[cpu] >= 0 && ioctl(s->event_fds[cpu], PERF_EVENT_IOC_PERIOD, &period) != 0)
			return -errno;
	return 0;
}

int sampler_enable(struct sampler *s, int on)
{
	for (int cpu = 0; cpu < s->ncpus; cpu++)
		if (s->event_fds[cpu] >= 0 &&
		    ioctl(s->event_fds[cpu], on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0) != 0)
			return -errno;
	return 0;
}

unsigned sampler_cpus(const struct sampler *s)
{
	return s->attached;
}

int sampler_add_target(struct sampler *s, pid_t pid, const struct js_target *tg)
{
	__u32 key = (__u32)pid;

	return bpf_map__update_elem(s->skel->maps.targets, &key, sizeof(key), tg, sizeof(*tg), BPF_ANY);
}

int sampler_remove_target(struct sampler *s, pid_t pid)
{
	__u32 key = (__u32)pid;
	int e = bpf_map__delete_elem(s->skel->maps.targets, &key, sizeof(key), 0);

	return e == -ENOENT ? 0 : e;
}

int sampler_set_thread(struct sampler *s, pid_t pid, pid_t tid, const struct js_thread_info *ti)
{
	struct js_thread_info v = *ti;
	__u32 key = (__u32)tid;

	v.tgid = (__u32)pid;
	return bpf_map__update_elem(s->skel->maps.threads, &key, sizeof(key), &v, sizeof(v), BPF_ANY);
}

/* Read-modify-write of one thread's entry (the BPF program may have made
 * it), only while it belongs to process pid. */
static int update_thread(struct sampler *s, pid_t pid, pid_t tid, const uint64_t *copy_end,
			 const uint32_t *max_copy, const uint32_t *flags, uint32_t add_flags)
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
	ti.thread_flags |= add_flags;
	return bpf_map__update_elem(s->skel->maps.threads, &key, sizeof(key), &ti, sizeof(ti), BPF_EXIST);
}

int sampler_set_copy_end(struct sampler *s, pid_t pid, pid_t tid, uint64_t end)
{
	return update_thread(s, pid, tid, &end, NULL, NULL, 0);
}

int sampler_set_max_copy(struct sampler *s, pid_t pid, pid_t tid, uint32_t bytes)
{
	/* A thread deeper than its copies also gets gap-filling windows. */
	return update_thread(s, pid, tid, NULL, &bytes, NULL, JS_THREAD_FILL_GAPS);
}

int sampler_set_thread_flags(struct sampler *s, pid_t pid, pid_t tid, uint32_t flags)
{
	return update_thread(s, pid, tid, NULL, NULL, &flags, 0);
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

int sampler_prog_stats(struct sampler *s, uint64_t *run_time_ns, uint64_t *run_cnt)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);
	int e;

	memset(&info, 0, sizeof(info));
	e = bpf_obj_get_info_by_fd(bpf_program__fd(s->skel->progs.sample_stack), &info, &len);
	*run_time_ns = e ? 0 : info.run_time_ns;
	*run_cnt = e ? 0 : info.run_cnt;
	return e;
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
