#include "query_server.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../bpf/sampler.h"
#include "cct_format.h"
#include "daemon.h"
#include "json.h"
#include "sampler.h"
#include "sock_io.h"

struct query_conn *query_conn_new(int fd, uint64_t now_ns)
{
	struct query_conn *q = calloc(1, sizeof(*q));
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (!q)
		return NULL;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
		free(q);
		return NULL;
	}
	q->fd = fd;
	q->uid = cred.uid;
	q->opened_ns = now_ns;
	wbuf_init(&q->out);
	return q;
}

void query_conn_free(struct query_conn *q)
{
	if (!q)
		return;
	if (q->fd >= 0)
		close(q->fd);
	wbuf_free(&q->out);
	free(q);
}

static void error_line(struct wbuf *out, const char *msg)
{
	wbuf_reset(out);
	wbuf_printf(out, "ERROR %s\n", msg);
}

static bool may_see(uid_t uid, const struct process *p)
{
	return uid == 0 || p->uid == uid;
}

static const char *state_name(enum process_state s)
{
	switch (s) {
	case PROCESS_LIVE:
		return "live";
	case PROCESS_AGENT_LOST:
		return "agent-lost";
	default:
		return "exited";
	}
}

static uint64_t java_samples(const struct decode_stats *s)
{
	return s->resolved + s->incomplete + s->failed;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static void answer_list(struct daemon *d, uid_t uid, struct wbuf *out)
{
	wbuf_printf(out, "%-8s %-10s %10s %9s %-16s %s\n", "PID", "STATE", "SAMPLES", "RESOLVED",
		    "COMM", "VM");
	for (size_t i = 0; i < d->processes.all.n; i++) {
		const struct process *p = d->processes.all.v[i];
		const struct decode_stats *s = &p->stats;

		if (!may_see(uid, p))
			continue;
		wbuf_printf(out, "%-8d %-10s %10llu %8.2f%% %-16s %s\n", (int)p->pid,
			    state_name(p->state), (unsigned long long)s->samples,
			    pct(s->resolved + s->incomplete, java_samples(s)), p->comm, p->vm);
	}
}

/* Resolves "<pid>" to a visible process, or writes the error. */
static struct process *find_process(struct daemon *d, uid_t uid, const char *arg, struct wbuf *out)
{
	char *end;
	long pid;
	struct process *p;

	if (!arg) {
		error_line(out, "missing pid");
		return NULL;
	}
	pid = strtol(arg, &end, 10);
	if (*end || pid <= 0 || pid > 0x3fffffff) {
		error_line(out, "pid must be a positive integer");
		return NULL;
	}
	p = process_lookup(&d->processes, (pid_t)pid);
	/* Another user's process is reported exactly like a missing one. */
	if (!p || !may_see(uid, p)) {
		char msg[96];
		snprintf(msg, sizeof(msg), "no profiled process %ld", pid);
		error_line(out, msg);
		return NULL;
	}
	return p;
}

static void stats_fields(const struct decode_stats *s, struct wbuf *out, bool json)
{
	uint64_t java = java_samples(s);
	const char *fmt = json ? "\"%s\":%llu," : "%-22s %llu\n";

#define FIELD(name, v) wbuf_printf(out, fmt, name, (unsigned long long)(v))
	FIELD("samples", s->samples);
	FIELD("java_samples", java);
	FIELD("resolved", s->resolved);
	FIELD("incomplete", s->incomplete);
	FIELD("not_java", s->not_java);
	FIELD("failed", s->failed);
	FIELD("wrong", s->wrong);
	FIELD("held", s->held_total);
	FIELD("held_for_layout", s->held_for[WAIT_LAYOUT]);
	FIELD("held_for_code", s->held_for[WAIT_CODE]);
	FIELD("held_for_method", s->held_for[WAIT_METHOD]);
	FIELD("held_for_other", s->held_for[WAIT_UNKNOWN]);
	FIELD("held_trimmed", s->held_trimmed);
	FIELD("dropped", s->dropped);
	FIELD("dropped_queue_full", s->dropped_queue_full);
	FIELD("dropped_no_memory", s->dropped_no_memory);
	FIELD("kernel_mode", s->kernel_mode);
	FIELD("stack_bytes", s->stack_bytes);
#undef FIELD
	if (json) {
		wbuf_printf(out, "\"resolved_pct\":%.4f,\"incomplete_pct\":%.4f,\"failed_pct\":%.4f,",
			    pct(s->resolved + s->incomplete, java), pct(s->incomplete, java),
			    pct(s->failed, java));
		wbuf_printf(out, "\"reasons\":{");
		for (int r = 1, first = 1; r < DECODE_FAILURE_COUNT; r++) {
			wbuf_printf(out, "%s\"%s\":%llu", first ? "" : ",", decode_failure_name(r),
				    (unsigned long long)s->reasons[r]);
			first = 0;
		}
		wbuf_printf(out, "},\"rules\":{");
		for (int r = 1, first = 1; r < DECODE_RULE_COUNT; r++) {
			wbuf_printf(out, "%s\"%s\":%llu", first ? "" : ",", decode_rule_name(r),
				    (unsigned long long)s->rules[r]);
			first = 0;
		}
		wbuf_printf(out, "}");
	} else {
		wbuf_printf(out, "%-22s %.2f%%\n", "resolved_pct", pct(s->resolved + s->incomplete, java));
		wbuf_printf(out, "%-22s %.2f%%\n", "incomplete_pct", pct(s->incomplete, java));
		wbuf_printf(out, "%-22s %.2f%%\n", "failed_pct", pct(s->failed, java));
		for (int r = 1; r < DECODE_FAILURE_COUNT; r++)
			if (s->reasons[r])
				wbuf_printf(out, "  %-20s %llu  (%s)\n", decode_failure_name(r),
					    (unsigned long long)s->reasons[r], decode_failure_description(r));
		wbuf_printf(out, "decoded by\n");
		for (int r = 1; r < DECODE_RULE_COUNT; r++)
			if (s->rules[r])
				wbuf_printf(out, "  %-20s %llu  (%s)\n", decode_rule_name(r),
					    (unsigned long long)s->rules[r], decode_rule_description(r));
	}
}

static void process_stats(const struct process *p, struct wbuf *out, bool json)
{
	if (json) {
		wbuf_printf(out, "{\"pid\":%d,\"uid\":%u,\"state\":\"%s\",\"restored\":%s,\"comm\":", (int)p->pid,
			    (unsigned)p->uid, state_name(p->state), p->restored ? "true" : "false");
		json_string(out, p->comm);
		wbuf_printf(out, ",\"cct_nodes\":%zu,\"cct_bytes\":%zu,\"cct_overflow_samples\":%llu,",
			    p->cct.nodes.n, cct_bytes(&p->cct), (unsigned long long)p->cct.overflow_samples);
		wbuf_printf(out, "\"model_bytes\":%zu,\"code_blobs\":%zu,", jvm_model_bytes(&p->jvm),
			    p->jvm.code.blobs.n);
		wbuf_printf(out, "\"malformed_records\":%llu,\"incomplete_grafted\":%llu,\"incomplete_truncated\":%llu,",
			    (unsigned long long)p->jvm.malformed_records, (unsigned long long)p->contexts.grafted,
			    (unsigned long long)p->contexts.truncated);
		wbuf_printf(out, "\"held_bytes\":%zu,\"foreign_threads\":%llu,\"over_limit\":%s,", p->held.bytes,
			    (unsigned long long)p->foreign_threads, p->over_limit ? "true" : "false");
		stats_fields(&p->stats, out, true);
		wbuf_printf(out, "}\n");
	} else {
		wbuf_printf(out, "pid %d (%s, uid %u) %s%s, %zu CCT nodes (%llu samples in [other]), %zu code blobs\n",
			    (int)p->pid, p->comm, (unsigned)p->uid, state_name(p->state),
			    p->restored ? " (restored)" : "", p->cct.nodes.n,
			    (unsigned long long)p->cct.overflow_samples, p->jvm.code.blobs.n);
		stats_fields(&p->stats, out, false);
		if (p->jvm.malformed_records)
			wbuf_printf(out, "%-22s %llu\n", "malformed_records",
				    (unsigned long long)p->jvm.malformed_records);
	}
}

/* The daemon's own counters (struct daemon_counters), one list for the
 * text and JSON answers. */
static void daemon_counter_fields(const struct daemon *d, struct wbuf *out, bool json)
{
	const struct daemon_counters *c = &d->counters;
	const struct {
		const char *name;
		uint64_t v;
	} f[] = {
		{"agents_accepted", c->agents_accepted},
		{"agents_refused", c->agents_refused},
		{"agents_refused_by_rules", c->agents_refused_by_rules},
		{"agents_refused_not_jvm", c->agents_refused_not_jvm},
		{"agents_refused_user_limit", c->agents_refused_user_limit},
		{"agents_over_limit", c->agents_over_limit},
		{"agent_conns_refused", c->agent_conns_refused},
		{"agents_ended_exec", c->agents_ended_exec},
		{"agents_ended_exit", c->agents_ended_exit},
		{"agents_closed_bad_input", c->agents_closed_bad_input},
		{"processes_refused_limit", c->processes_refused_limit},
		{"processes_evicted", c->processes_evicted},
		{"state_saves", c->state_saves},
		{"state_save_errors", c->state_save_errors},
		{"queries", c->queries},
		{"queries_refused", c->queries_refused},
		{"queries_refused_user_limit", c->queries_refused_user_limit},
		{"renders_killed", c->renders_killed},
		{"attach_timeouts", d->discovery.counters.attach_timeouts},
		{"agent_namespaces", d->discovery.ns_sockets.n},
		{"agent_namespaces_released", d->discovery.counters.ns_released},
	};

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		wbuf_printf(out, json ? "%s\"%s\":%llu" : "%s%-22s %llu\n", json && i ? "," : "", f[i].name,
			    (unsigned long long)f[i].v);
}

static uint64_t self_rss_bytes(void)
{
	unsigned long size = 0, rss = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%lu %lu", &size, &rss) != 2)
			rss = 0;
		fclose(f);
	}
	return (uint64_t)rss * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* A user's own totals: only what its processes did. */
static void user_stats(struct daemon *d, uid_t uid, struct wbuf *out, bool json)
{
	struct decode_stats sum = {0};
	size_t n = 0;

	for (size_t i = 0; i < d->processes.all.n; i++)
		if (may_see(uid, d->processes.all.v[i])) {
			decode_stats_add(&sum, &d->processes.all.v[i]->stats);
			n++;
		}
	if (json) {
		wbuf_printf(out, "{\"processes\":%zu,\"uid\":%u,", n, (unsigned)uid);
		stats_fields(&sum, out, true);
		wbuf_printf(out, "}\n");
		return;
	}
	wbuf_printf(out, "%-22s %zu\n%-22s %u\n", "processes", n, "uid", (unsigned)uid);
	stats_fields(&sum, out, false);
}

/* The whole host's counters, for root: every process (also forgotten
 * ones), the BPF program, discovery and the daemon's own. */
static void global_stats(struct daemon *d, uid_t uid, struct wbuf *out, bool json)
{
	struct decode_stats sum = d->processes.retired;
	struct js_counters k = {0};
	uint64_t run_ns = 0, run_cnt = 0;
	struct rusage ru;
	double cpu;

	if (uid != 0) {
		user_stats(d, uid, out, json);
		return;
	}
	for (size_t i = 0; i < d->processes.all.n; i++)
		decode_stats_add(&sum, &d->processes.all.v[i]->stats);
	if (d->sampler) {
		sampler_read_counters(d->sampler, &k);
		sampler_prog_stats(d->sampler, &run_ns, &run_cnt);
	}
	getrusage(RUSAGE_SELF, &ru);
	cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	      (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	/* Kernel-side drops belong to no process: they count in the total. */
	sum.dropped += k.ringbuf_full + d->processes.unknown_pid_samples;
	if (json) {
		wbuf_printf(out, "{\"processes\":%zu,\"uptime_s\":%.3f,\"cpu_s\":%.3f,\"rss_bytes\":%llu,",
			    d->processes.all.n, (double)(monotonic_ns() - d->started_ns) / 1e9, cpu,
			    (unsigned long long)self_rss_bytes());
		wbuf_printf(out,
			    "\"bpf\":{\"events\":%llu,\"target\":%llu,\"emitted\":%llu,\"ringbuf_full\":%llu,"
			    "\"copy_fault\":%llu,\"no_user_regs\":%llu,\"vma_lookup_failed\":%llu,"
			    "\"wakeups\":%llu,\"bytes\":%llu,\"vma_lookups\":%llu,\"run_time_ns\":%llu,\"run_cnt\":%llu},",
			    (unsigned long long)k.events, (unsigned long long)k.target,
			    (unsigned long long)k.emitted, (unsigned long long)k.ringbuf_full,
			    (unsigned long long)k.copy_fault, (unsigned long long)k.no_user_regs,
			    (unsigned long long)k.vma_lookup_failed, (unsigned long long)k.wakeups,
			    (unsigned long long)k.bytes, (unsigned long long)k.vma_lookups, (unsigned long long)run_ns,
			    (unsigned long long)run_cnt);
		wbuf_printf(out,
			    "\"discovery\":{\"execs_seen\":%llu,\"jvms_found\":%llu,\"attached\":%llu,"
			    "\"attach_failed\":%llu,\"excluded\":%llu,\"had_agent\":%llu},",
			    (unsigned long long)d->discovery.counters.execs_seen,
			    (unsigned long long)d->discovery.counters.jvms_found,
			    (unsigned long long)d->discovery.counters.attached,
			    (unsigned long long)d->discovery.counters.attach_failed,
			    (unsigned long long)d->discovery.counters.excluded,
			    (unsigned long long)d->discovery.counters.had_agent);
		wbuf_printf(out, "\"daemon\":{");
		daemon_counter_fields(d, out, true);
		wbuf_printf(out, "},");
		wbuf_printf(out, "\"unknown_pid_samples\":%llu,\"malformed_samples\":%llu,",
			    (unsigned long long)d->processes.unknown_pid_samples,
			    (unsigned long long)d->processes.malformed_samples);
		stats_fields(&sum, out, true);
		wbuf_printf(out, "}\n");
		return;
	}
	wbuf_printf(out, "%-22s %zu\n%-22s %.1f s\n%-22s %.3f s\n%-22s %llu\n", "processes",
		    d->processes.all.n, "uptime", (double)(monotonic_ns() - d->started_ns) / 1e9,
		    "cpu", cpu, "rss_bytes", (unsigned long long)self_rss_bytes());
	wbuf_printf(out, "%-22s %llu\n%-22s %llu\n%-22s %llu\n%-22s %llu\n%-22s %llu\n",
		    "bpf_events", (unsigned long long)k.events, "bpf_target", (unsigned long long)k.target,
		    "bpf_emitted", (unsigned long long)k.emitted, "bpf_ringbuf_full",
		    (unsigned long long)k.ringbuf_full, "bpf_copy_fault", (unsigned long long)k.copy_fault);
	wbuf_printf(out, "%-22s %llu\n%-22s %llu\n%-22s %llu\n%-22s %llu\n%-22s %llu\n", "jvms_found",
		    (unsigned long long)d->discovery.counters.jvms_found, "jvms_attached",
		    (unsigned long long)d->discovery.counters.attached, "attach_failed",
		    (unsigned long long)d->discovery.counters.attach_failed, "jvms_excluded",
		    (unsigned long long)d->discovery.counters.excluded, "processes_refused",
		    (unsigned long long)d->counters.processes_refused_limit);
	wbuf_printf(out, "%-22s %llu\n", "unknown_pid_samples",
		    (unsigned long long)d->processes.unknown_pid_samples);
	daemon_counter_fields(d, out, false);
	stats_fields(&sum, out, false);
}

int query_dispatch(struct daemon *d, uid_t uid, const char *line, struct wbuf *out, struct render_request *defer)
{
	char buf[QUERY_MAX_REQUEST + 1], *save = NULL, *args[4] = {0};
	int n = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	for (char *t = strtok_r(buf, " \t\r\n", &save); t; t = strtok_r(NULL, " \t\r\n", &save)) {
		if (n == 4) {
			error_line(out, "too many arguments");
			return QUERY_ANSWERED;
		}
		args[n++] = t;
	}
	if (n == 0) {
		error_line(out, "empty request; try: list | cct <pid> [tree|collapsed|json] | stats [<pid>] [json]");
		return QUERY_ANSWERED;
	}
	if (strcmp(args[0], "list") == 0 && n == 1) {
		wbuf_printf(out, "OK\n");
		answer_list(d, uid, out);
	} else if (strcmp(args[0], "cct") == 0 && (n == 2 || n == 3)) {
		int fmt = n == 3 ? cct_format_parse(args[2]) : CCT_FORMAT_TREE;
		struct process *p;

		if (fmt < 0) {
			error_line(out, "format must be tree, collapsed or json");
			return QUERY_ANSWERED;
		}
		p = find_process(d, uid, args[1], out);
		if (!p)
			return QUERY_ANSWERED;
		if (defer) {
			/* Rendered away from the event loop (query_conns.c). */
			defer->pid = p->pid;
			defer->format = fmt;
			return QUERY_DEFERRED;
		}
		wbuf_printf(out, "OK\n");
		if (cct_render(&p->cct, &p->jvm.methods, (enum cct_format)fmt, out) != 0)
			error_line(out, "out of memory rendering the CCT");
	} else if (strcmp(args[0], "stats") == 0 && n <= 3) {
		bool json = strcmp(args[n - 1], "json") == 0;
		int positional = n - 1 - (json ? 1 : 0);

		if (positional == 1) {
			struct process *p = find_process(d, uid, args[1], out);
			if (!p)
				return QUERY_ANSWERED;
			wbuf_printf(out, "OK\n");
			process_stats(p, out, json);
		} else if (positional == 0) {
			wbuf_printf(out, "OK\n");
			global_stats(d, uid, out, json);
		} else {
			error_line(out, "usage: stats [<pid>] [json]");
		}
	} else if (strcmp(args[0], "sampling") == 0 && n == 2 &&
		   (strcmp(args[1], "on") == 0 || strcmp(args[1], "off") == 0)) {
		/* Host-wide pause: the perf events stop, so the JVMs pay
		 * nothing, not even the timer interrupt. Root only. */
		bool on = strcmp(args[1], "on") == 0;
		if (uid != 0) {
			error_line(out, "only root may pause or resume sampling");
			return QUERY_ANSWERED;
		}
		if (d->sampler && sampler_enable(d->sampler, on) != 0) {
			error_line(out, "cannot switch the perf events");
			return QUERY_ANSWERED;
		}
		d->paused = !on;
		wbuf_printf(out, "OK\nsampling %s\n", on ? "on" : "off");
	} else {
		error_line(out, "unknown request; try: list | cct <pid> [tree|collapsed|json] | stats [<pid>] [json]"
				" | sampling on|off");
	}
	return QUERY_ANSWERED;
}

void query_answer(struct daemon *d, uid_t uid, const char *line, struct wbuf *out)
{
	query_dispatch(d, uid, line, out, NULL);
}

int query_conn_on_readable(struct query_conn *q, struct daemon *d)
{
	for (;;) {
		ssize_t n;
		char *nl;

		if (q->answered || q->render_waiting)
			return 0;
		if (q->in_len >= QUERY_MAX_REQUEST) {
			error_line(&q->out, "request too long");
			q->answered = true;
			d->counters.queries_refused++;
			return 0;
		}
		n = recv(q->fd, q->in + q->in_len, QUERY_MAX_REQUEST - q->in_len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n < 0)
			return -1;
		if (n == 0 && q->in_len == 0)
			return -1; /* closed without asking */
		q->in_len += (size_t)n;
		q->in[q->in_len] = 0;
		nl = memchr(q->in, '\n', q->in_len);
		if (!nl && n > 0)
			continue;
		if (nl)
			*nl = 0;
		if (memchr(q->in, 0, nl ? (size_t)(nl - q->in) : q->in_len)) {
			error_line(&q->out, "request contains a NUL byte");
			d->counters.queries_refused++;
		} else {
			d->counters.queries++;
			if (query_dispatch(d, q->uid, q->in, &q->out, &q->render) == QUERY_DEFERRED) {
				q->render_waiting = true;
				return 0;
			}
		}
		q->answered = true;
		return 0;
	}
}

int query_conn_flush(struct query_conn *q)
{
	if (!q->answered)
		return 0;
	if (q->out.oom)
		return -1;
	return send_pending(q->fd, &q->out, &q->out_off);
}
