/* SPDX-License-Identifier: GPL-2.0-only */
#include "sampler_events.h"

#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "userspace/common/u64_map.h"
#include "userspace/common/vec.h"
#include "daemon/support/log.h"
#include "daemon/jvm/procfs.h"

/* Listings of a process's threads while its events are opened: each finds
 * the threads the last one's threads created before they had an event.
 * Past this many (a process creating threads faster than events open),
 * the last listing's threads are all there is. */
#define MAX_LISTINGS 16

struct thread_event {
	pid_t tid;
	int fd;
};

/* One target process's own events (inherited copies have none). */
struct process_events {
	pid_t pid;
	uint64_t start_time; /* the instance (procfs_start_time) */
	VEC(struct thread_event) threads;
	struct u64_map tids; /* the threads' tids (a JVM may have thousands) */
};

struct sampler_events {
	enum sample_events mode;
	int prog_fd;
	unsigned frequency_hz;
	bool enabled;
	int ncpus;
	int *cpu_fds;                /* mode cpus: per possible CPU, -1 offline */
	struct u64_map by_pid;       /* mode threads: pid -> struct process_events * */
	struct sampler_events_counters c;
	bool warned_open;
	/* Test hook (tests/integration/test_sample_events.sh): every thread
	 * gets a second event, as a thread created during the listings may. */
	bool double_all;
};

/* cpu-clock counts nanoseconds: a fixed period gives the rate. An even
 * one, or for a thread's possibly second event the odd one after it (see
 * sampler_events.h). Opened disabled, and enabled once the program is on
 * it (a tick before would go to perf's own buffer, which nobody reads). */
static uint64_t period_of(unsigned frequency_hz, bool second)
{
	return (1000000000ull / frequency_hz & ~1ull) | second;
}

static int open_cpu_clock(pid_t tid, int cpu, unsigned frequency_hz, bool inherit, bool second)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = period_of(frequency_hz, second),
		.disabled = 1,
		.inherit = inherit,
		/* A child process that execs another program drops the copy
		 * it inherited: a JVM's subprocesses are not sampled. */
		.remove_on_exec = inherit,
	};

	return (int)syscall(SYS_perf_event_open, &attr, tid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static int attach_prog(struct sampler_events *e, int fd)
{
	if (ioctl(fd, PERF_EVENT_IOC_SET_BPF, e->prog_fd) != 0)
		return -errno;
	if (e->enabled && ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) != 0)
		return -errno;
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

static int open_cpus(struct sampler_events *e, char *err, size_t errlen)
{
	unsigned char *online = calloc(e->ncpus, 1);
	int r = 0;

	e->cpu_fds = malloc(e->ncpus * sizeof(*e->cpu_fds));
	if (!online || !e->cpu_fds) {
		free(online);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (read_cpu_list("/sys/devices/system/cpu/online", online, e->ncpus) != 0)
		memset(online, 1, e->ncpus);
	for (int cpu = 0; cpu < e->ncpus; cpu++) {
		int fd;

		e->cpu_fds[cpu] = -1;
		if (!online[cpu])
			continue;
		fd = open_cpu_clock(-1, cpu, e->frequency_hz, false, false);
		if (fd < 0) {
			if (errno == ENODEV) { /* went offline meanwhile */
				log_info("CPU %d is offline, not sampled", cpu);
				continue;
			}
			r = -errno;
			snprintf(err, errlen, "perf_event_open(cpu-clock, cpu %d): %s", cpu, strerror(-r));
			break;
		}
		e->cpu_fds[cpu] = fd;
		if ((r = attach_prog(e, fd)) != 0) {
			snprintf(err, errlen, "cannot attach the BPF program to the perf event on cpu %d: %s", cpu,
				 strerror(-r));
			break;
		}
		e->c.cpus++;
		e->c.events++;
	}
	free(online);
	if (r == 0 && !e->c.cpus) {
		snprintf(err, errlen, "no online CPU could be sampled");
		r = -ENODEV;
	}
	return r;
}

int sampler_events_open(struct sampler_events **out, enum sample_events mode, int prog_fd, unsigned frequency_hz,
			char *err, size_t errlen)
{
	struct sampler_events *e = calloc(1, sizeof(*e));
	int r = 0;

	*out = NULL;
	if (!e)
		return -ENOMEM;
	e->mode = mode;
	e->prog_fd = prog_fd;
	e->frequency_hz = frequency_hz;
	e->enabled = true;
	e->double_all = getenv("JSAMPLED_TEST_DOUBLE_EVENTS") != NULL;
	u64_map_init(&e->by_pid);
	e->ncpus = (int)sysconf(_SC_NPROCESSORS_CONF);
	if (e->ncpus <= 0)
		e->ncpus = 1;
	if (mode == SAMPLE_EVENTS_CPUS && (r = open_cpus(e, err, errlen)) != 0) {
		sampler_events_close(e);
		return r;
	}
	*out = e;
	return 0;
}

static void close_process(struct sampler_events *e, struct process_events *pe)
{
	for (size_t i = 0; i < pe->threads.n; i++)
		close(pe->threads.v[i].fd);
	e->c.events -= pe->threads.n;
	vec_free(&pe->threads);
	u64_map_free(&pe->tids);
	free(pe);
}

void sampler_events_close(struct sampler_events *e)
{
	if (!e)
		return;
	for (int cpu = 0; e->cpu_fds && cpu < e->ncpus; cpu++)
		if (e->cpu_fds[cpu] >= 0)
			close(e->cpu_fds[cpu]);
	free(e->cpu_fds);
	for (size_t i = 0; i < e->by_pid.cap; i++)
		if (e->by_pid.slots[i].key)
			close_process(e, (struct process_events *)(uintptr_t)e->by_pid.slots[i].val);
	u64_map_free(&e->by_pid);
	free(e);
}

enum sample_events sampler_events_mode(const struct sampler_events *e)
{
	return e->mode;
}

/* Opens an event for each thread of pe's process that has none of its
 * own (again: for each thread); later is true from the second listing on
 * (see sampler_events.h). The number opened, or -errno if the process
 * cannot be listed. */
static int open_listed(struct sampler_events *e, struct process_events *pe, bool later, bool again, int *failed)
{
	char path[64];
	struct dirent *de;
	DIR *dir;
	int opened = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pe->pid);
	if (!(dir = opendir(path)))
		return errno == ENOENT ? -ESRCH : -errno;
	while ((de = readdir(dir))) {
		char *end;
		long tid = strtol(de->d_name, &end, 10);
		struct thread_event te;

		if (tid <= 0 || *end || (!again && u64_map_get(&pe->tids, (uint64_t)tid)))
			continue;
		te.tid = (pid_t)tid;
		te.fd = open_cpu_clock(te.tid, -1, e->frequency_hz, true, later);
		if (te.fd < 0) {
			if (errno == ESRCH)
				continue; /* the thread has just exited */
			(*failed)++;
			if (!e->warned_open)
				log_warn("cannot open a perf event on thread %ld of pid %d: %s (such threads are not "
					 "sampled; counted as events_failed)",
					 tid, (int)pe->pid, strerror(errno));
			e->warned_open = true;
			continue;
		}
		if (attach_prog(e, te.fd) != 0 || vec_push(&pe->threads, te) != 0 ||
		    u64_map_put(&pe->tids, (uint64_t)tid, 1) != 0) {
			if (pe->threads.n && pe->threads.v[pe->threads.n - 1].fd == te.fd)
				pe->threads.n--;
			close(te.fd);
			(*failed)++;
			continue;
		}
		e->c.events++;
		e->c.doubled += later;
		opened++;
	}
	closedir(dir);
	return opened;
}

int sampler_events_add(struct sampler_events *e, pid_t pid)
{
	struct process_events *pe;
	int failed = 0, n, total = 0;

	if (e->mode != SAMPLE_EVENTS_THREADS || pid <= 0 || u64_map_get(&e->by_pid, (uint64_t)pid))
		return 0;
	if (!(pe = calloc(1, sizeof(*pe))))
		return -ENOMEM;
	pe->pid = pid;
	pe->start_time = procfs_start_time(pid);
	u64_map_init(&pe->tids);
	for (int listing = 0; listing < MAX_LISTINGS; listing++) {
		n = open_listed(e, pe, listing > 0, false, &failed);
		if (n < 0) {
			total = n;
			break;
		}
		total += n;
		if (n == 0)
			break; /* every thread listed has its event, or inherited one */
	}
	if (e->double_all && total > 0)
		open_listed(e, pe, true, true, &failed);
	e->c.open_failed += (uint64_t)failed;
	if (pe->threads.n == 0 || u64_map_put(&e->by_pid, (uint64_t)pid, (uint64_t)(uintptr_t)pe) != 0) {
		close_process(e, pe);
		return total < 0 ? total : failed ? -EMFILE : -ESRCH;
	}
	e->c.processes++;
	return total;
}

void sampler_events_remove(struct sampler_events *e, pid_t pid)
{
	uint64_t *v = u64_map_get(&e->by_pid, (uint64_t)pid);

	if (!v)
		return;
	/* Closing an event also ends the copies its thread's descendants
	 * inherited. */
	close_process(e, (struct process_events *)(uintptr_t)*v);
	u64_map_del(&e->by_pid, (uint64_t)pid);
	e->c.processes--;
}

void sampler_events_sweep(struct sampler_events *e)
{
	for (size_t i = 0; i < e->by_pid.cap; i++) {
		const struct process_events *pe = (const struct process_events *)(uintptr_t)e->by_pid.slots[i].val;

		if (e->by_pid.slots[i].key && procfs_start_time(pe->pid) != pe->start_time) {
			log_warn("pid %d exited without its perf events being closed: closing %zu", (int)pe->pid,
				 pe->threads.n);
			e->c.swept++;
			sampler_events_remove(e, pe->pid);
			i = (size_t)-1; /* the map moved: from its start again */
		}
	}
}

int sampler_events_set_frequency(struct sampler_events *e, unsigned frequency_hz)
{
	uint64_t period = period_of(frequency_hz, false);
	pid_t *pids;
	size_t n = 0;

	e->frequency_hz = frequency_hz;
	if (e->mode == SAMPLE_EVENTS_CPUS) {
		for (int cpu = 0; cpu < e->ncpus; cpu++)
			if (e->cpu_fds[cpu] >= 0 && ioctl(e->cpu_fds[cpu], PERF_EVENT_IOC_PERIOD, &period) != 0)
				return -errno;
		return 0;
	}
	if (!(pids = malloc((e->by_pid.count + 1) * sizeof(*pids))))
		return -ENOMEM;
	for (size_t i = 0; i < e->by_pid.cap; i++)
		if (e->by_pid.slots[i].key)
			pids[n++] = (pid_t)e->by_pid.slots[i].key;
	for (size_t i = 0; i < n; i++) {
		sampler_events_remove(e, pids[i]);
		sampler_events_add(e, pids[i]);
	}
	free(pids);
	return 0;
}

int sampler_events_enable(struct sampler_events *e, bool on)
{
	unsigned long req = on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE;
	int r = 0;

	e->enabled = on;
	for (int cpu = 0; e->cpu_fds && cpu < e->ncpus; cpu++)
		if (e->cpu_fds[cpu] >= 0 && ioctl(e->cpu_fds[cpu], req, 0) != 0)
			r = -errno;
	/* An event's inherited copies follow it (and threads created while it
	 * is off inherit it off). */
	for (size_t i = 0; i < e->by_pid.cap; i++) {
		const struct process_events *pe = (const struct process_events *)(uintptr_t)e->by_pid.slots[i].val;

		for (size_t k = 0; e->by_pid.slots[i].key && k < pe->threads.n; k++)
			if (ioctl(pe->threads.v[k].fd, req, 0) != 0 && errno != ESRCH)
				r = -errno;
	}
	return r;
}

void sampler_events_read(const struct sampler_events *e, struct sampler_events_counters *c)
{
	*c = e->c;
}
