/* SPDX-License-Identifier: GPL-2.0-only */
#include "query_server.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bpf/sampler.h"
#include "daemon/jvm/admission.h"
#include "daemon/jvm/agent_conns.h"
#include "userspace/profile/cct_format.h"
#include "daemon.h"
#include "daemon/jvm/java_launcher.h"
#include "daemon/jvm/jvm_startup.h"
#include "userspace/profile/json.h"
#include "userspace/profile/kernel_symbols.h"
#include "daemon/native/native_live.h"
#include "daemon/native/native_processes.h"
#include "daemon/ingest/sampler_bpf.h"
#include "sock_io.h"
#include "daemon/process/stats_format.h"
#include "memory_stats.h"
#include "userspace/common/fd_io.h"
#include "userspace/common/pid_text.h"

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
	q->gid = cred.gid;
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

/* Root and the readers group see every process; anyone else their own,
 * when ptrace would let them read it (process.h, root_only). */
static bool may_see(const struct viewer *v, const struct process *p)
{
	return v->uid == 0 || v->reads_all || (p->uid == v->uid && !p->root_only);
}

static void answer_list_json(struct daemon *d, const struct viewer *v, struct wbuf *out)
{
	bool first = true;

	wbuf_printf(out, "[");
	for (size_t i = 0; i < d->processes.all.n; i++) {
		const struct process *p = d->processes.all.v[i];

		if (!may_see(v, p))
			continue;
		wbuf_printf(out, "%s{\"pid\":%d,\"uid\":%u,\"state\":\"%s\",\"samples\":%llu,\"resolved_pct\":%.4f,"
				 "\"cct_nodes\":%zu,\"frequency_hz\":%u,\"window_resolution_s\":%u,\"first_s\":%lld,\"last_s\":%lld,\"comm\":",
			    first ? "" : ",", (int)p->pid, (unsigned)p->uid, process_state_label(p),
			    (unsigned long long)p->stats.samples, stats_resolved_pct(&p->stats), p->cct.nodes.n,
			    d->opt.frequency_hz, p->cct.slices.span[0], (long long)p->cct.slices.first_s,
			    (long long)p->cct.slices.last_s);
		json_quote(out, p->comm);
		wbuf_printf(out, ",\"vm\":");
		json_quote(out, p->vm);
		if (p->agent_problem[0]) {
			wbuf_printf(out, ",\"agent_problem\":");
			json_quote(out, p->agent_problem);
		}
		wbuf_printf(out, "}");
		first = false;
	}
	wbuf_printf(out, "]\n");
}

static void answer_list(struct daemon *d, const struct viewer *v, struct wbuf *out)
{
	wbuf_printf(out, "%-8s %-10s %10s %9s %-16s %s\n", "PID", "STATE", "SAMPLES", "RESOLVED",
		    "COMM", "VM");
	for (size_t i = 0; i < d->processes.all.n; i++) {
		const struct process *p = d->processes.all.v[i];
		const struct decode_stats *s = &p->stats;

		if (!may_see(v, p))
			continue;
		wbuf_printf(out, "%-8d %-10s %10llu %8.2f%% %-16s %s%s%s%s\n", (int)p->pid,
			    process_state_label(p), (unsigned long long)s->samples,
			    stats_resolved_pct(s), p->comm, p->vm, p->agent_problem[0] ? " (no agent: " : "",
			    p->agent_problem[0] ? p->agent_problem : "", p->agent_problem[0] ? ")" : "");
	}
}

/* Resolves "<pid>" to a visible process, or writes the error. */
static struct process *find_process(struct daemon *d, const struct viewer *v, const char *arg, struct wbuf *out)
{
	pid_t pid;
	struct process *p;

	if (!arg) {
		error_line(out, "missing pid");
		return NULL;
	}
	if (!(pid = pid_from_text(arg))) {
		error_line(out, "pid must be a positive integer");
		return NULL;
	}
	p = process_lookup(&d->processes, pid);
	/* Another user's process is reported exactly like a missing one. */
	if (!p || !may_see(v, p)) {
		char msg[96];
		snprintf(msg, sizeof(msg), "no profiled process %d", (int)pid);
		error_line(out, msg);
		return NULL;
	}
	return p;
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
static void user_stats(struct daemon *d, const struct viewer *v, struct wbuf *out, bool json)
{
	struct decode_stats sum = {0};
	unsigned long long n = 0;

	for (size_t i = 0; i < d->processes.all.n; i++)
		if (may_see(v, d->processes.all.v[i])) {
			decode_stats_add(&sum, &d->processes.all.v[i]->stats);
			n++;
		}
	const struct stat_field f[] = {{"processes", n}, {"uid", v->uid}};

	if (json)
		wbuf_printf(out, "{");
	stats_format_list(f, STATS_N(f), out, json);
	stats_format_decode(&sum, out, json);
	if (json)
		wbuf_printf(out, "}\n");
}

/* The whole host's counters, for root: every process (also forgotten
 * ones), the BPF program, discovery and the daemon's own. */
static double tv_s(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

static void global_stats(struct daemon *d, const struct viewer *v, struct wbuf *out, bool json)
{
	struct decode_stats sum = d->processes.retired;
	struct js_counters k = {0};
	struct sampler_events_counters ev = {0};
	uint64_t run_ns = 0, run_cnt = 0, switch_ns = 0, switch_cnt = 0, exit_ns = 0, exit_cnt = 0;
	uint64_t held_bytes = 0, held_samples = 0; /* waiting in the held queues now */
	struct rusage ru, ru_children;
	const struct daemon_counters *c = &d->counters;
	const struct discovery_counters *dc = &d->discovery.counters;
	const struct java_launcher_counters *jl = java_launcher_counters();

	if (v->uid != 0) {
		user_stats(d, v, out, json);
		return;
	}
	for (size_t i = 0; i < d->processes.all.n; i++) {
		decode_stats_add(&sum, &d->processes.all.v[i]->stats);
		held_bytes += d->processes.all.v[i]->held.bytes;
		held_samples += sample_queue_len(&d->processes.all.v[i]->held);
	}
	if (d->sampler) {
		sampler_read_counters(d->sampler, &k);
		sampler_prog_stats(d->sampler, &run_ns, &run_cnt);
		sampler_offcpu_prog_stats(d->sampler, &switch_ns, &switch_cnt, &exit_ns, &exit_cnt);
		sampler_read_events(d->sampler, &ev);
	}
	getrusage(RUSAGE_SELF, &ru);
	getrusage(RUSAGE_CHILDREN, &ru_children);
	/* Kernel-side drops belong to no process: they count in the total. */
	sum.dropped += k.ringbuf_full + d->processes.unknown_pid_samples;

	const struct stat_field top[] = {
		{"processes", d->processes.all.n},
		{"rss_bytes", self_rss_bytes()},
		{"unknown_pid_samples", d->processes.unknown_pid_samples},
		{"malformed_samples", d->processes.malformed_samples},
		{"held_bytes", held_bytes},
		{"held_samples", held_samples},
		/* Times it slept and woke (voluntary context switches): each
		 * wake-up costs tens of us of CPU on a VM (main.c, arm_drain_timer). */
		{"sleeps", (uint64_t)ru.ru_nvcsw},
	};
	/* jsampled's CPU is its own and its children's: the native helper
	 * (running, and those that ended), renders and attaches (ended). */
	double own_s = tv_s(ru.ru_utime) + tv_s(ru.ru_stime);
	double helper_s = (double)native_live_helper_cpu_ns(d) / 1e9;
	double children_s = tv_s(ru_children.ru_utime) + tv_s(ru_children.ru_stime);
	const struct stat_real times[] = {
		{"uptime_s", (double)(monotonic_ns() - d->started_ns) / 1e9},
		{"cpu_s", own_s + children_s + helper_s},
		{"cpu_daemon_s", own_s},
		{"cpu_native_helper_s", helper_s},
		{"cpu_children_s", children_s},
	};
	const struct stat_field bpf[] = {
		{"events", k.events},
		{"target", k.target},
		{"emitted", k.emitted},
		{"ringbuf_full", k.ringbuf_full},
		{"copy_fault", k.copy_fault},
		{"no_user_regs", k.no_user_regs},
		{"vma_lookup_failed", k.vma_lookup_failed},
		{"wakeups", k.wakeups},
		{"bytes", k.bytes},
		{"vma_lookups", k.vma_lookups},
		{"fills", k.fills},
		{"fill_bytes", k.fill_bytes},
		{"fills_skipped", k.fills_skipped},
		{"doubled", k.doubled},
		{"chunks", k.chunks},
		{"chunks_unread", k.chunks_unread},
		{"exec_events_lost", k.exec_events_lost},
		{"switches", k.switches},
		{"offcpu_samples", k.offcpu_samples},
		{"offcpu_ticks", k.offcpu_ticks},
		{"offcpu_short", k.offcpu_short},
		{"offcpu_unplaced_ns", k.offcpu_unplaced_ns},
		{"offcpu_stash_taken", k.offcpu_stash_taken},
		{"run_time_ns", run_ns},
		{"run_cnt", run_cnt},
		{"switch_run_time_ns", switch_ns},
		{"switch_run_cnt", switch_cnt},
		{"sys_exit_run_time_ns", exit_ns},
		{"sys_exit_run_cnt", exit_cnt},
	};
	/* The perf events behind the program (sampler_events.h). */
	const struct stat_field events[] = {
		{"cpus", ev.cpus},
		{"processes", ev.processes},
		{"open", ev.events},
		{"doubled_threads", ev.doubled},
		{"failed", ev.open_failed},
		{"swept", ev.swept},
	};
	const struct stat_field discovery[] = {
		{"execs_seen", dc->execs_seen},
		{"jvms_found", dc->jvms_found},
		{"attached", dc->attached},
		{"attach_failed", dc->attach_failed},
		{"attach_timeouts", dc->attach_timeouts},
		{"excluded", dc->excluded},
		{"had_agent", dc->had_agent},
		{"agent_namespaces", d->discovery.ns_sockets.n},
		{"agent_namespaces_released", dc->ns_released},
		{"startup_sampled", c->startup_sampled},
		{"startup_attached", c->startup_attached},
		{"startup_not_attached", c->startup_not_attached},
		{"sigquit_events", c->sigquit_events},
		{"launcher_checks_cached", jl->cached},
		{"launcher_checks_read", jl->read},
		{"launcher_checks_rate_limited", jl->rate_limited},
	};
	struct stat_field native[32], memory[32];
	const struct stat_field daemon[] = {
		{"agents_accepted", c->agents_accepted},
		{"agents_refused", c->agents_refused},
		{"agents_refused_by_rules", c->agents_refused_by_rules},
		{"agents_refused_not_jvm", c->agents_refused_not_jvm},
		{"agents_refused_user_limit", c->agents_refused_user_limit},
		{"agents_over_limit", c->agents_over_limit},
		{"agent_conns_refused", c->agent_conns_refused},
		{"agents_ended_exec", c->agents_ended_exec},
		{"agents_ended_exit", c->agents_ended_exit},
		{"agents_said_bye", c->agents_said_bye},
		{"agents_closed_bad_input", c->agents_closed_bad_input},
		{"processes_refused_limit", c->processes_refused_limit},
		{"processes_evicted", c->processes_evicted},
		{"state_saves", c->state_saves},
		{"state_save_errors", c->state_save_errors},
		{"queries", c->queries},
		{"queries_refused", c->queries_refused},
		{"queries_refused_user_limit", c->queries_refused_user_limit},
		{"renders_killed", c->renders_killed},
		{"trees_frozen", c->trees_frozen},
		{"memory_bytes", admission_user_memory(d, -1)},
		{"names_bytes", kernel_symbols_bytes()},
		{"drains", c->drains},
	};

	if (json)
		wbuf_printf(out, "{");
	stats_format_list(top, STATS_N(top), out, json);
	stats_format_reals(times, STATS_N(times), out, json);
	stats_format_group("bpf", bpf, STATS_N(bpf), out, json);
	stats_format_group("events", events, STATS_N(events), out, json);
	stats_format_group("discovery", discovery, STATS_N(discovery), out, json);
	stats_format_group("daemon", daemon, STATS_N(daemon), out, json);
	stats_format_group("native", native, native_live_stats(d, native, STATS_N(native)), out, json);
	stats_format_group("memory", memory, memory_stats(d, memory, STATS_N(memory)), out, json);
	stats_format_decode(&sum, out, json);
	if (json)
		wbuf_printf(out, "}\n");
}

/* "FROM..UNTIL", either end empty, in seconds since the epoch. */
static int parse_window(const char *s, struct render_side *side)
{
	const char *dots = strstr(s, "..");
	char *end;

	if (!dots)
		return -1;
	side->windowed = true;
	side->from_s = 0;
	side->until_s = INT64_MAX;
	if (dots > s) {
		side->from_s = strtoll(s, &end, 10);
		if (end != dots || side->from_s < 0)
			return -1;
	}
	if (dots[2]) {
		side->until_s = strtoll(dots + 2, &end, 10);
		if (*end || side->until_s < 0)
			return -1;
	}
	return side->from_s < side->until_s ? 0 : -1;
}

/* "<pid>" or "<pid>@<window>", a process the client may see. */
static int parse_side(struct daemon *d, const struct viewer *v, const char *arg, struct render_side *side, struct wbuf *out)
{
	char pid[24];
	const char *at = strchr(arg, '@');
	size_t len = at ? (size_t)(at - arg) : strlen(arg);

	if (len >= sizeof(pid)) {
		error_line(out, "pid must be a positive integer");
		return -1;
	}
	memcpy(pid, arg, len);
	pid[len] = 0;
	if (!find_process(d, v, pid, out))
		return -1;
	side->pid = pid_from_text(pid);
	if (at && parse_window(at + 1, side) != 0) {
		error_line(out, "window must be FROM..UNTIL in seconds since the epoch");
		return -1;
	}
	return 0;
}

/* "pid 4242 (java)", and the window's ends (UTC) when there is one. */
/* The frames a rendering shows: those asked for, or the process's default
 * (a Java process's Java frames; a native process has only native ones). */
static unsigned view_of(const struct process *p, const struct render_request *r)
{
	unsigned frames = r->view >= 0 ? (unsigned)r->view : p->native_only ? VIEW_MIXED : VIEW_JAVA;

	return frames | r->type | (r->by_thread ? VIEW_THREADS : 0);
}

/* "thread=SELECTOR", %XX-escaped (a thread name may hold spaces), into
 * out. -1 if malformed, empty, too long, or with more than 8 '*' (a glob
 * of many stars can take fnmatch exponential time). */
static int parse_threads(const char *word, char *out, size_t outlen)
{
	size_t n = 0, stars = 0;

	for (const char *c = word + strlen("thread="); *c; c++) {
		unsigned v;

		if (n + 1 >= outlen)
			return -1;
		if (*c != '%') {
			out[n++] = *c;
			continue;
		}
		if (!isxdigit((unsigned char)c[1]) || !isxdigit((unsigned char)c[2]) ||
		    sscanf(c + 1, "%2x", &v) != 1 || v == 0)
			return -1;
		out[n++] = (char)v;
		c += 2;
	}
	out[n] = 0;
	for (size_t i = 0; i < n; i++)
		stars += out[i] == '*';
	return n && stars <= 8 ? 0 : -1;
}

/* Trailing words naming a view, a profile type and the threads shown, in
 * any order: taken off the end of args. -1 for a malformed thread word. */
static int take_view_words(char **args, int n, int min, struct render_request *r)
{
	while (n > min) {
		const char *w = args[n - 1];
		int v = cct_view_parse(w), t = cct_profile_type_parse(w);

		if (v >= 0)
			r->view = v;
		else if (t >= 0)
			r->type = (unsigned)t;
		else if (strcmp(w, "threads") == 0)
			r->by_thread = true;
		else if (strncmp(w, "thread=", strlen("thread=")) == 0) {
			if (parse_threads(w, r->threads, sizeof(r->threads)) != 0)
				return -1;
		} else
			break;
		n--;
	}
	return n;
}

static void describe_process(const struct process *p, const struct render_side *side, char *out, size_t outlen)
{
	int n = snprintf(out, outlen, "pid %d (%s)", (int)p->pid, p->comm[0] ? p->comm : "?");
	char a[16] = "", b[16] = "";
	struct tm tm;

	if (!side->windowed || n < 0 || (size_t)n >= outlen)
		return;
	time_t from = (time_t)side->from_s, until = (time_t)(side->until_s == INT64_MAX ? 0 : side->until_s);
	if (side->from_s && gmtime_r(&from, &tm))
		strftime(a, sizeof(a), "%H:%M:%S", &tm);
	if (until && gmtime_r(&until, &tm))
		strftime(b, sizeof(b), "%H:%M:%S", &tm);
	snprintf(out + n, outlen - (size_t)n, " %s..%s", a, b);
}

/* Whether p has samples in [from, until). */
/* An empty tree, for a profile type a process has no events of. */
static const struct cct *empty_tree(void)
{
	static struct cct empty;
	static bool made;

	if (!made && cct_init(&empty, 1) == 0)
		made = true;
	return &empty;
}

/* The tree a view of p counts: the CPU tree (cpu, offcpu, wall) or the
 * agent's event trees (alloc, lock), with how its values are named. */
static void source_trees(const struct process *p, unsigned view, struct profile_source *src)
{
	const struct event_profiles *e = &p->events;
	int first = (view & VIEW_ALLOC) ? EVENT_ALLOC_BYTES : EVENT_LOCK_DELAY;

	src->cct = &p->cct;
	src->view = view;
	if (!(view & VIEW_EVENT_MASK))
		return;
	src->cct = e->tree[first] ? e->tree[first] : empty_tree();
	src->cct2 = e->tree[first + 1] ? e->tree[first + 1] : empty_tree();
	src->values = (view & VIEW_ALLOC) ? VALUES_ALLOC : VALUES_LOCK;
	src->interval = (view & VIEW_ALLOC) ? e->alloc_interval : e->lock_interval;
	src->profile_type = cct_profile_type_name(view);
	/* an event tree holds its type's samples only: the view counts them all */
	src->view = (view & ~VIEW_TYPE_MASK) | VIEW_WALL;
}

static bool sampled_in(const struct process *p, unsigned view, int64_t from, int64_t until)
{
	struct profile_source src = {0};

	source_trees(p, view, &src);
	const struct cct_slices *s = &src.cct->slices;

	return s->first_s != 0 && s->last_s >= from && s->first_s < until;
}

/* "profiles": each visible process's pprof of the window, framed by its
 * length (query_server.h); written to fd a process at a time. */
static int render_every(struct daemon *d, const struct render_request *r, struct wbuf *out, int fd)
{
	const struct render_side *w = &r->side[0];
	struct slice_window win = {.from_s = w->from_s, .until_s = w->until_s};
	struct wbuf one;
	int rc = 0;

	wbuf_init(&one);
	wbuf_printf(out, "OK\n");
	for (size_t i = 0; i < d->processes.all.n && rc == 0; i++) {
		const struct process *p = d->processes.all.v[i];
		char title[96];

		if (!may_see(&r->who, p) || !sampled_in(p, view_of(p, r), w->from_s, w->until_s))
			continue;
		describe_process(p, w, title, sizeof(title));
		struct profile_source src = {.methods = &p->jvm.methods, .window = &win, .title = title,
					     .frequency_hz = d->opt.frequency_hz, .pid = p->pid,
					     .threads = r->threads[0] ? r->threads : NULL};
		source_trees(p, view_of(p, r), &src);
		wbuf_reset(&one);
		if (cct_render_stream(&src, CCT_FORMAT_PPROF, &one, -1) != 0 || one.oom) {
			rc = -1;
			break;
		}
		wbuf_printf(out, "%d %zu\n", (int)p->pid, one.len);
		wbuf_put(out, one.data, one.len);
		if (out->oom)
			rc = -1;
		else if (fd >= 0 && sock_send_all(fd, out->data, out->len) != 0)
			rc = -1;
		else if (fd >= 0)
			wbuf_reset(out);
	}
	wbuf_free(&one);
	if (rc == 0)
		wbuf_printf(out, "end\n");
	return rc;
}

int query_render(struct daemon *d, const struct render_request *r, struct wbuf *out, int fd)
{
	struct profile_source src[2];
	struct slice_window win[2];
	char titles[2][96];
	int sides = r->diff ? 2 : 1;

	if (r->every)
		return render_every(d, r, out, fd);
	for (int i = 0; i < sides; i++) {
		struct process *p = process_lookup(&d->processes, r->side[i].pid);

		if (!p) {
			wbuf_printf(out, "ERROR no profiled process %d\n", (int)r->side[i].pid);
			return 0;
		}
		describe_process(p, &r->side[i], titles[i], sizeof(titles[i]));
		win[i] = (struct slice_window){.from_s = r->side[i].from_s, .until_s = r->side[i].until_s};
		src[i] = (struct profile_source){.methods = &p->jvm.methods,
						 .window = r->side[i].windowed ? &win[i] : NULL, .title = titles[i],
						 .frequency_hz = d->opt.frequency_hz, .pid = p->pid,
						 .threads = r->threads[0] ? r->threads : NULL};
		source_trees(p, view_of(p, r), &src[i]);
	}
	wbuf_printf(out, "OK\n");
	if (r->diff)
		return cct_diff_stream(&src[0], &src[1], (enum cct_format)r->format, out, fd);
	return cct_render_stream(&src[0], (enum cct_format)r->format, out, fd);
}

/* A render runs in a child of the event loop (query_conns.c), or here
 * when there is no loop (tests). */
static int render_or_defer(struct daemon *d, const struct render_request *r, struct wbuf *out,
			   struct render_request *defer)
{
	if (defer) {
		*defer = *r;
		return QUERY_DEFERRED;
	}
	if (query_render(d, r, out, -1) != 0)
		error_line(out, "out of memory rendering the profile");
	return QUERY_ANSWERED;
}

int query_dispatch(struct daemon *d, const struct viewer *v, const char *line, struct wbuf *out, struct render_request *defer)
{
	char buf[QUERY_MAX_REQUEST + 1], *save = NULL, *args[8] = {0};
	int n = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	for (char *t = strtok_r(buf, " \t\r\n", &save); t; t = strtok_r(NULL, " \t\r\n", &save)) {
		if (n == 8) {
			error_line(out, "too many arguments");
			return QUERY_ANSWERED;
		}
		args[n++] = t;
	}
	/* jsampled drains its ring rarely (main.c, on_tick): the
	 * samples taken until now go into the answer. */
	if (n > 0 && strcmp(args[0], "list") != 0 && d->drain.rb)
		ringbuf_drain_run(&d->drain, 0);
	if (n == 0) {
		error_line(out, "empty request; try: list [json] | cct <pid> [<format>] [<from>..<until>] [java|mixed] [cpu|offcpu|wall|alloc|lock] | "
				"diff <pid>[@<window>] <pid>[@<window>] [html|text|page] | stats [<pid>] [json]");
		return QUERY_ANSWERED;
	}
	if (strcmp(args[0], "list") == 0 && (n == 1 || (n == 2 && strcmp(args[1], "json") == 0))) {
		wbuf_printf(out, "OK\n");
		if (n == 2)
			answer_list_json(d, v, out);
		else
			answer_list(d, v, out);
	} else if (strcmp(args[0], "cct") == 0 && n >= 2) {
		struct render_request r = {.diff = false, .format = CCT_FORMAT_TREE, .view = -1};
		int rest = 2;

		/* Last words naming a view, a profile type, threads (view_names.h). */
		if ((n = take_view_words(args, n, 2, &r)) < 0) {
			error_line(out, "thread= must be a thread name or glob of at most 127 bytes, %XX-escaped");
			return QUERY_ANSWERED;
		}

		if (n > rest && !strchr(args[rest], '.')) {
			r.format = cct_format_parse(args[rest++]);
			if (r.format < 0 || r.format == CCT_FORMAT_TEXT) {
				error_line(out, "format must be tree, collapsed, json, pprof, html, svg or page");
				return QUERY_ANSWERED;
			}
		}
		if (!find_process(d, v, args[1], out))
			return QUERY_ANSWERED;
		r.side[0].pid = pid_from_text(args[1]);
		if (n > rest && parse_window(args[rest++], &r.side[0]) != 0) {
			error_line(out, "window must be FROM..UNTIL in seconds since the epoch");
			return QUERY_ANSWERED;
		}
		if (n > rest) {
			error_line(out, "usage: cct <pid> [<format>] [<from>..<until>] [java|mixed|carrier|mixed,carrier] "
					"[cpu|offcpu|wall|alloc|lock] [threads] [thread=<name or glob>]");
			return QUERY_ANSWERED;
		}
		return render_or_defer(d, &r, out, defer);
	} else if (strcmp(args[0], "diff") == 0 && n >= 3) {
		struct render_request r = {.diff = true, .format = CCT_FORMAT_HTML, .view = -1};

		/* Last words naming a view, a profile type, threads, as for cct. */
		if ((n = take_view_words(args, n, 3, &r)) < 0) {
			error_line(out, "thread= must be a thread name or glob of at most 127 bytes, %XX-escaped");
			return QUERY_ANSWERED;
		}
		if (n > 4) {
			error_line(out, "usage: diff <pid>[@<window>] <pid>[@<window>] [html|text|page] [<view>] [<type>] "
					"[thread=<name or glob>]");
			return QUERY_ANSWERED;
		}
		if (n == 4) {
			r.format = cct_format_parse(args[3]);
			if (r.format != CCT_FORMAT_HTML && r.format != CCT_FORMAT_TEXT && r.format != CCT_FORMAT_PAGE) {
				error_line(out, "a diff's format must be html, text or page");
				return QUERY_ANSWERED;
			}
		}
		for (int i = 0; i < 2; i++)
			if (parse_side(d, v, args[1 + i], &r.side[i], out) != 0)
				return QUERY_ANSWERED;
		return render_or_defer(d, &r, out, defer);
	} else if (strcmp(args[0], "profiles") == 0 && n >= 2 && n <= 5) {
		struct render_request r = {.every = true, .view = -1, .who = *v};

		if (take_view_words(args, n, 2, &r) != 2) {
			error_line(out, "usage: profiles <from>..<until> [java|mixed|carrier|mixed,carrier] [cpu|offcpu|wall|alloc|lock]");
			return QUERY_ANSWERED;
		}
		if (parse_window(args[1], &r.side[0]) != 0) {
			error_line(out, "window must be FROM..UNTIL in seconds since the epoch");
			return QUERY_ANSWERED;
		}
		r.who.conn_fd = -1;
		return render_or_defer(d, &r, out, defer);
	} else if (strcmp(args[0], "stats") == 0 && n <= 3) {
		bool json = strcmp(args[n - 1], "json") == 0;
		int positional = n - 1 - (json ? 1 : 0);

		if (positional == 1) {
			struct process *p = find_process(d, v, args[1], out);
			if (!p)
				return QUERY_ANSWERED;
			if (p->state == PROCESS_LIVE && !p->native_only)
				jvm_startup_read_cpu(p, monotonic_ns());
			wbuf_printf(out, "OK\n");
			stats_format_process(p, out, json);
		} else if (positional == 0) {
			wbuf_printf(out, "OK\n");
			global_stats(d, v, out, json);
		} else {
			error_line(out, "usage: stats [<pid>] [json]");
		}
	} else if (strcmp(args[0], "sampling") == 0 && n == 2 &&
		   (strcmp(args[1], "on") == 0 || strcmp(args[1], "off") == 0)) {
		/* Host-wide pause: the perf events stop, so the JVMs pay
		 * nothing, not even the timer interrupt. Root only. */
		bool on = strcmp(args[1], "on") == 0;
		if (v->uid != 0) {
			error_line(out, "only root may pause or resume sampling");
			return QUERY_ANSWERED;
		}
		if (d->sampler && sampler_enable(d->sampler, on) != 0) {
			error_line(out, "cannot switch the perf events");
			return QUERY_ANSWERED;
		}
		d->paused = !on;
		wbuf_printf(out, "OK\nsampling %s\n", on ? "on" : "off");
	} else if (strcmp(args[0], "offcpu") == 0 && n == 2 &&
		   (strcmp(args[1], "on") == 0 || strcmp(args[1], "off") == 0)) {
		/* Off-CPU sampling alone, of a daemon started with it. Root only. */
		bool on = strcmp(args[1], "on") == 0;
		if (v->uid != 0) {
			error_line(out, "only root may switch off-CPU sampling");
			return QUERY_ANSWERED;
		}
		if (!d->sampler || sampler_set_offcpu(d->sampler, on) != 0) {
			error_line(out, on ? "off-CPU sampling cannot go on (jsampled runs without --offcpu on)"
					   : "cannot switch off-CPU sampling");
			return QUERY_ANSWERED;
		}
		wbuf_printf(out, "OK\noffcpu %s\n", on ? "on" : "off");
	} else if ((strcmp(args[0], "alloc") == 0 || strcmp(args[0], "lock") == 0) && n == 2 &&
		   (strcmp(args[1], "on") == 0 || strcmp(args[1], "off") == 0)) {
		/* The agents' allocation or lock sampling, at once in every
		 * JVM (until a reload sets it from the config again). Root only. */
		bool on = strcmp(args[1], "on") == 0, alloc = strcmp(args[0], "alloc") == 0;
		if (v->uid != 0) {
			error_line(out, "only root may switch the agents' sampling");
			return QUERY_ANSWERED;
		}
		if (alloc)
			d->opt.alloc = on;
		else
			d->opt.lock = on;
		agents_configure_all(d);
		wbuf_printf(out, "OK\n%s %s\n", args[0], on ? "on" : "off");
	} else if (strcmp(args[0], "profile") == 0 && n == 2) {
		/* A non-Java process, on request: root or its owner. */
		char why[160];
		pid_t pid = pid_from_text(args[1]);

		if (!pid) {
			error_line(out, "pid must be a positive integer");
			return QUERY_ANSWERED;
		}
		if (native_process_start(d, pid, v->conn_fd, why, sizeof(why)) != 0) {
			error_line(out, why);
			return QUERY_ANSWERED;
		}
		wbuf_printf(out, "OK\nprofiling pid %d (native frames)\n", (int)pid);
	} else {
		error_line(out, "unknown request; try: list [json] | cct <pid> [<format>] [<from>..<until>] [java|mixed] | "
				"diff <pid>[@<window>] <pid>[@<window>] [html|text|page] | profiles <from>..<until> [java|mixed] | "
				"stats [<pid>] [json] | sampling on|off | profile <pid>");
	}
	return QUERY_ANSWERED;
}

void query_answer(struct daemon *d, const struct viewer *v, const char *line, struct wbuf *out)
{
	query_dispatch(d, v, line, out, NULL);
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
			struct viewer v = {.uid = q->uid,
					   .reads_all = d->has_readers && q->gid == d->readers_gid,
					   .conn_fd = q->fd};

			if (query_dispatch(d, &v, q->in, &q->out, &q->render) == QUERY_DEFERRED) {
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
