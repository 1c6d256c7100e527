/* SPDX-License-Identifier: GPL-2.0-only */
/* What an off-CPU sample's thread waited for, as the innermost frame of
 * its trace: runnable (ready, waiting for a CPU), or blocked, and for a
 * Java thread what the JVM says it is blocked in: native code, the VM, a
 * monitor, a park, Object.wait or Thread.sleep. */
#ifndef JSAMPLED_WAIT_STATES_H
#define JSAMPLED_WAIT_STATES_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon/decode/vm_layout.h"

/* The pseudo frame (enum pseudo_frame) for a wait: flags and thread_state
 * are the sample's (bpf/sampler.h); java tells whether its trace holds a
 * Java frame, without which the JVM's state is not trusted (a thread
 * found through TLS may be a JVM-internal thread, whose memory at those
 * offsets is something else). */
uint32_t wait_state_frame(const struct vm_layout *L, uint32_t flags, uint32_t thread_state, bool runnable,
			  bool java);

#endif
