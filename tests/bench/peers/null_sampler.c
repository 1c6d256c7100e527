/* Loads the empty BPF program on one cpu-clock perf event per online CPU at
 * the given frequency, exactly as jsampled opens its own, and waits until
 * SIGINT/SIGTERM. SIGUSR1 enables the events, SIGUSR2 disables them (as
 * `jsamplectl sampling on|off` does for jsampled), so the overhead benchmark
 * can switch it in the same run without reloading.
 *   null_sampler HZ [off]     (off: start with the events disabled) */
#include <errno.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "null_sampler.skel.h"

static volatile sig_atomic_t stop, want_on = 1;
static void on_signal(int sig) { (void)sig; stop = 1; }
static void on_toggle(int sig) { want_on = sig == SIGUSR1; }

static void set_enabled(const int *fds, int n, int on)
{
	for (int cpu = 0; cpu < n; cpu++)
		if (fds[cpu] >= 0)
			ioctl(fds[cpu], on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0);
}

int main(int argc, char **argv)
{
	struct null_sampler_bpf *skel = NULL;
	struct bpf_link *links[1024] = {0};
	int fds[1024];
	int ncpu = libbpf_num_possible_cpus(), hz = argc > 1 ? atoi(argv[1]) : 0, rc = 1, attached = 0, is_on;

	if (hz <= 0 || ncpu <= 0 || ncpu > 1024) {
		fprintf(stderr, "usage: null_sampler HZ [off]\n");
		return 2;
	}
	want_on = !(argc > 2 && strcmp(argv[2], "off") == 0);
	for (int cpu = 0; cpu < ncpu; cpu++)
		fds[cpu] = -1;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGUSR1, on_toggle);
	signal(SIGUSR2, on_toggle);
	skel = null_sampler_bpf__open_and_load();
	if (!skel) {
		fprintf(stderr, "null_sampler: cannot load the BPF program: %s\n", strerror(errno));
		goto cleanup;
	}
	for (int cpu = 0; cpu < ncpu; cpu++) {
		struct perf_event_attr attr = {
			.type = PERF_TYPE_SOFTWARE,
			.config = PERF_COUNT_SW_CPU_CLOCK,
			.size = sizeof(attr),
			.sample_period = 1000000000ull / (unsigned)hz,
		};
		int fd = (int)syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0)
			continue; /* offline CPU */
		fds[cpu] = fd;
		links[cpu] = bpf_program__attach_perf_event(skel->progs.on_tick, fd);
		attached += links[cpu] != NULL;
	}
	if (!attached) {
		fprintf(stderr, "null_sampler: no perf event could be attached\n");
		goto cleanup;
	}
	is_on = 1; /* attaching enabled the events */
	while (!stop) {
		if (is_on != want_on) {
			is_on = want_on;
			set_enabled(fds, ncpu, is_on);
		}
		usleep(5000); /* not pause(): a signal between the test and it would be missed */
	}
	rc = 0;
cleanup:
	for (int cpu = 0; cpu < ncpu; cpu++)
		bpf_link__destroy(links[cpu]);
	null_sampler_bpf__destroy(skel);
	return rc;
}
