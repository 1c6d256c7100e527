/* SPDX-License-Identifier: GPL-2.0-only */
#include "reload.h"

#include <errno.h>
#include <string.h>
#include <sys/resource.h>

#include "daemon/jvm/agent_conns.h"
#include "daemon/support/log.h"
#include "daemon/ingest/sampler_bpf.h"

static void restart_needed(const char *name)
{
	log_warn("reload: %s changed; it takes effect at the next restart", name);
}

/* Limits apply to every process, also those already profiled. */
void daemon_apply_limits(struct daemon *d)
{
	const struct options *o = &d->opt;
	d->processes.limits.cct_max_nodes = o->cct_max_nodes;
	d->processes.limits.cct_max_bytes = o->cct_max_bytes;
	d->processes.limits.held_max_bytes = o->held_max_bytes;
	d->processes.limits.hold_ns = o->hold_ms * 1000000ull;
	d->processes.limits.drain_ns = o->drain_ms * 1000000ull;
	d->processes.limits.slice_s = o->window_resolution_s;
	d->processes.limits.slice_max_bytes = o->window_max_bytes;
	d->processes.fragment_bytes = o->fragment_bytes;
	d->processes.max_fragment_bytes = o->max_fragment_bytes;
	d->processes.period_ns = o->frequency_hz ? 1000000000ull / o->frequency_hz : 0;
	for (size_t i = 0; i < d->processes.all.n; i++) {
		struct process *p = d->processes.all.v[i];
		cct_set_caps(&p->cct, o->cct_max_nodes, o->cct_max_bytes);
		p->hold_ns = d->processes.limits.hold_ns;
		p->held.max_bytes = o->held_max_bytes;
		p->cct.slices.max_bytes = o->window_max_bytes;
	}
}

int daemon_reload(struct daemon *d, int argc, char **argv)
{
	struct options fresh;
	const struct options *old = &d->opt;
	char err[512];

	if (options_parse(&fresh, argc, argv, err, sizeof(err)) != 0) {
		log_err("reload: %s; keeping the current settings", err[0] ? err : "invalid settings");
		return -1;
	}
	options_keep_fixed(&fresh, old, restart_needed);
	if (fresh.frequency_hz != old->frequency_hz) {
		int e = d->sampler ? sampler_set_frequency(d->sampler, fresh.frequency_hz) : 0;
		if (e) {
			log_err("reload: cannot set %u Hz: %s", fresh.frequency_hz, strerror(-e));
			fresh.frequency_hz = old->frequency_hz;
		} else {
			log_info("reload: sampling at %u Hz", fresh.frequency_hz);
		}
	}
	if (fresh.nice != old->nice && setpriority(PRIO_PROCESS, 0, fresh.nice) != 0)
		log_warn("reload: cannot set CPU priority %d: %s", fresh.nice, strerror(errno));
	log_set_level(fresh.verbose ? LOG_DEBUG : LOG_INFO);
	bool sampling_changed = fresh.alloc != old->alloc || fresh.alloc_interval != old->alloc_interval ||
				fresh.lock != old->lock || fresh.lock_interval_us != old->lock_interval_us;
	d->opt = fresh;
	daemon_apply_limits(d);
	if (sampling_changed)
		agents_configure_all(d);
	discovery_recheck(&d->discovery, monotonic_ns());
	log_info("reload: settings from %s applied (%u Hz, retention %llu s, attach %s, %u processes max)",
		 d->opt.config_path[0] ? d->opt.config_path : "the command line", d->opt.frequency_hz,
		 (unsigned long long)d->opt.retention_s, d->opt.attach == ATTACH_AUTO ? "auto" : "off",
		 d->opt.max_processes);
	return 0;
}
