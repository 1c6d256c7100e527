/* SPDX-License-Identifier: GPL-2.0-only */
/* Loads the empty BPF program on cpu-clock perf events at the given
 * frequency, opened by the same code as jsampled's own
 * (daemon/ingest/sampler_events.c): one per thread of process PID (as jsampled's
 * default, --sample-events threads), or one per online CPU without a PID
 * (--sample-events cpus). Waits until SIGINT/SIGTERM. SIGUSR1 enables the
 * events, SIGUSR2 disables them (as `jsamplectl sampling on|off` does for
 * jsampled), so the overhead benchmark can switch it in the same run
 * without reloading.
 *   null_sampler HZ [off] [PID]     (off: start with the events disabled) */
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

#include "daemon/ingest/sampler_events.h"
#include "null_sampler.skel.h"

static volatile sig_atomic_t stop, want_on = 1;
static void on_signal(int sig) { (void)sig; stop = 1; }
static void on_toggle(int sig) { want_on = sig == SIGUSR1; }

int main(int argc, char **argv)
{
	struct null_sampler_bpf *skel = NULL;
	struct sampler_events *events = NULL;
	int hz = argc > 1 ? atoi(argv[1]) : 0, rc = 1, is_on, argi = 2;
	pid_t pid = 0;
	char err[256] = "";

	if (argc > argi && strcmp(argv[argi], "off") == 0) {
		want_on = 0;
		argi++;
	}
	if (argc > argi)
		pid = (pid_t)atoi(argv[argi++]);
	if (hz <= 0 || argc > argi || (argc > 2 && pid < 0)) {
		fprintf(stderr, "usage: null_sampler HZ [off] [PID]\n");
		return 2;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGUSR1, on_toggle);
	signal(SIGUSR2, on_toggle);
	skel = null_sampler_bpf__open_and_load();
	if (!skel) {
		fprintf(stderr, "null_sampler: cannot load the BPF program: %s\n", strerror(errno));
		goto cleanup;
	}
	if (sampler_events_open(&events, pid ? SAMPLE_EVENTS_THREADS : SAMPLE_EVENTS_CPUS,
				bpf_program__fd(skel->progs.on_tick), (unsigned)hz, err, sizeof(err)) != 0) {
		fprintf(stderr, "null_sampler: %s\n", err);
		goto cleanup;
	}
	if (pid && sampler_events_add(events, pid) <= 0) {
		fprintf(stderr, "null_sampler: no perf event could be opened on the threads of pid %d\n", (int)pid);
		goto cleanup;
	}
	is_on = 1; /* the events start enabled */
	while (!stop) {
		if (is_on != want_on) {
			is_on = want_on;
			sampler_events_enable(events, is_on);
		}
		usleep(5000); /* not pause(): a signal between the test and it would be missed */
	}
	rc = 0;
cleanup:
	sampler_events_close(events);
	null_sampler_bpf__destroy(skel);
	return rc;
}
