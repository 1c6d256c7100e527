/* SPDX-License-Identifier: GPL-2.0-only */
#include "wait_states.h"

#include "bpf/sampler.h"
#include "userspace/profile/trace.h"

/* java.lang.Thread's threadStatus holds JVMTI thread state bits (the
 * JVMTI specification, GetThreadState), set by the JVM as a thread starts
 * and stops waiting. */
enum thread_status_bits {
	STATUS_SLEEPING = 0x0040,
	STATUS_IN_OBJECT_WAIT = 0x0100,
	STATUS_PARKED = 0x0200,
	STATUS_BLOCKED_ON_MONITOR_ENTER = 0x0400,
};

/* A JavaThreadState and its _trans twin, which HotSpot numbers next. */
static bool is_state(uint32_t v, int64_t state)
{
	return state >= 0 && (v == (uint32_t)state || v == (uint32_t)state + 1);
}

uint32_t wait_state_frame(const struct vm_layout *L, uint32_t flags, uint32_t thread_state, bool runnable,
			  bool java)
{
	uint32_t jvm = JS_JVM_STATE(thread_state);

	if (runnable)
		return PSEUDO_RUNNABLE;
	if (!java || !(flags & JS_SAMPLE_HAS_STATE))
		return PSEUDO_BLOCKED;
	if (is_state(jvm, L->state_in_native))
		return PSEUDO_BLOCKED_NATIVE;
	if (is_state(jvm, L->state_in_vm))
		return PSEUDO_BLOCKED_VM;
	if (!is_state(jvm, L->state_blocked))
		return PSEUDO_BLOCKED;
	if (flags & JS_SAMPLE_HAS_STATUS) {
		uint32_t status = JS_THREAD_STATUS(thread_state);

		if (status & STATUS_BLOCKED_ON_MONITOR_ENTER)
			return PSEUDO_BLOCKED_MONITOR;
		if (status & STATUS_PARKED)
			return PSEUDO_BLOCKED_PARKED;
		if (status & STATUS_IN_OBJECT_WAIT)
			return PSEUDO_BLOCKED_WAITING;
		if (status & STATUS_SLEEPING)
			return PSEUDO_BLOCKED_SLEEPING;
	}
	/* Blocked in the VM for something else: a VM mutex, a safepoint. */
	return PSEUDO_BLOCKED_VM;
}
