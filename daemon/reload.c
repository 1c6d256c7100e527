#include "reload.h"

#include <errno.h>
#include <string.h>
#include <sys/resource.h>

#include "log.h"
#include "sampler.h"

#define CHANGED(field) (memcmp(&old->field, &o->field, sizeof(o->field)) != 0)

static void restart_needed(const struct options *old, const struct options *o)
{
	static const char *const names[] = {"socket", "agent-socket", "socket-group", "ringbuf-mb", "drain-ms",
					    "wakeup-kb", "fragment-bytes", "record", "keep-caps"};
	bool changed[] = {CHANGED(socket_path), CHANGED(agent_socket_path), CHANGED(socket_group),
			  CHANGED(ringbuf_bytes), CHANGED(drain_ms), CHANGED(wakeup_bytes),
			  CHANGED(fragment_bytes), CHANGED(record_path), CHANGED(keep_caps)};

	for (size_t i = 0; i < sizeof(changed) / sizeof(changed[0]); i++)
		if (changed[i])
			log_warn("reload: %s changed; it takes effect at the next restart", names[i]);
}

int daemon_reload(struct daemon *d, int argc, char **argv)
{
	struct options fresh, *o = &fresh;
	const struct options *old = &d->opt;
	char err[512];
	uint32_t nodes;

	if (options_parse(o, argc, argv, err, sizeof(err)) != 0) {
		log_err("reload: %s; keeping the current settings", err[0] ? err : "invalid settings");
		return -1;
	}
	restart_needed(old, o);
	if (CHANGED(frequency_hz)) {
		int e = d->sampler ? sampler_set_frequency(d->sampler, o->frequency_hz) : 0;
		if (e) {
			log_err("reload: cannot set %u Hz: %s", o->frequency_hz, strerror(-e));
			o->frequency_hz = old->frequency_hz;
		} else {
			log_info("reload: sampling at %u Hz", o->frequency_hz);
		}
	}
	if (CHANGED(nice) && setpriority(PRIO_PROCESS, 0, o->nice) != 0)
		log_warn("reload: cannot set CPU priority %d: %s", o->nice, strerror(errno));
	log_set_level(o->verbose ? LOG_DEBUG : LOG_INFO);

	/* Limits apply to every process, also those already profiled. */
	nodes = cct_nodes_for_bytes(o->cct_max_bytes);
	nodes = nodes < o->cct_max_nodes ? nodes : o->cct_max_nodes;
	d->processes.limits.cct_max_nodes = nodes;
	d->processes.limits.hold_ns = o->hold_ms * 1000000ull;
	d->processes.max_fragment_bytes = o->max_fragment_bytes;
	for (size_t i = 0; i < d->processes.all.n; i++) {
		struct process *p = d->processes.all.v[i];
		p->cct.max_nodes = nodes;
		p->hold_ns = d->processes.limits.hold_ns;
	}
	/* Keep what must not change under a running daemon. */
	memcpy(o->socket_path, old->socket_path, sizeof(o->socket_path));
	memcpy(o->agent_socket_path, old->agent_socket_path, sizeof(o->agent_socket_path));
	memcpy(o->record_path, old->record_path, sizeof(o->record_path));
	o->ringbuf_bytes = old->ringbuf_bytes;
	o->drain_ms = old->drain_ms;
	o->wakeup_bytes = old->wakeup_bytes;
	o->fragment_bytes = old->fragment_bytes;
	o->keep_caps = old->keep_caps;
	memcpy(o->socket_group, old->socket_group, sizeof(o->socket_group));
	d->opt = fresh;
	discovery_recheck(&d->discovery, monotonic_ns());
	log_info("reload: settings from %s applied (%u Hz, retention %llu s, attach %s, %u processes max)",
		 d->opt.config_path[0] ? d->opt.config_path : "the command line", d->opt.frequency_hz,
		 (unsigned long long)d->opt.retention_s, d->opt.attach == ATTACH_AUTO ? "auto" : "off",
		 d->opt.max_processes);
	return 0;
}
