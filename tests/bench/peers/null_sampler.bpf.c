/* SPDX-License-Identifier: GPL-2.0-only */
/* The null sampler: an empty program on the same cpu-clock perf events
 * jsampled uses. What it costs a JVM is the price of the timer interrupt
 * alone, the floor every sampler pays on these machines. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

SEC("perf_event")
int on_tick(void *ctx)
{
	return 0;
}
