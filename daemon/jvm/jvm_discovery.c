/* SPDX-License-Identifier: GPL-2.0-only */
#include "jvm_discovery.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hotspot_attach.h"
#include "daemon/support/log.h"
#include "process_rules.h"
#include "procfs.h"
#include "target_root.h"
#include "userspace/common/pid_text.h"

#define MS 1000000ull
#define MAX_RUNNING 2         /* attach children at once */
#define EXEC_CHECKS 8         /* a new image: checked at 0.5, 1, 2, ... 64 s */
#define SCAN_CHECKS 2         /* found by a scan: now and 5 s later */
#define NOT_READY_TRIES 12    /* SIGQUIT not caught yet: retried for about 2 min */
/* A JVM sampled since its exec is first retried every 20 ms this many
 * times (2 s: its start-up is being profiled), then as above. */
#define EARLY_QUICK_TRIES 100
#define FAILED_TRIES 3        /* other failures */
/* An attach child past this is killed: it runs as the JVM's user, who can
 * stop it (the listener wait inside it is 10 s). */
#define ATTACH_DEADLINE_NS (20000 * MS)
/* A namespace socket no live agent has used for this long is released (an
 * attached agent connects within a second or two). */
#define NS_IDLE_NS (10000 * MS)
#define NS_CHECK_NS (5000 * MS)

enum cand_state { C_WATCH, C_ATTACHING, C_DONE };

struct candidate {
	pid_t pid;
	uint64_t start_time;
	enum cand_state state;
	uint64_t due_ns;
	unsigned checks;    /* looks for libjvm.so */
	unsigned not_ready; /* attaches refused for SIGQUIT not caught */
	unsigned failures;
	bool from_exec;
	bool early;    /* sampled since its exec: every ms before the attach counts */
	bool jvm_seen;
	pid_t child;
	uint64_t child_started_ns;
	bool child_killed; /* by us, at its deadline */
	int report_fd;     /* the attach child's words when the JVM refused (hotspot_attach.h) */
};

static void cand_free(struct candidate *c)
{
	if (c->report_fd >= 0)
		close(c->report_fd);
	free(c);
}

/* Tells the daemon why pid has no agent (list and stats show it). */
static void problem(struct discovery *d, const struct candidate *c, const char *why)
{
	if (d->hooks.on_attach_problem)
		d->hooks.on_attach_problem(d->hooks.ctx, c->pid, why);
}

void discovery_init(struct discovery *d, const struct options *opt, const struct discovery_hooks *hooks)
{
	memset(d, 0, sizeof(*d));
	d->opt = opt;
	d->hooks = *hooks;
	u64_map_init(&d->by_pid);
	d->self_mnt_ns = procfs_ns_inode(getpid(), "mnt");
}

void discovery_free(struct discovery *d)
{
	for (size_t i = 0; i < d->cands.n; i++) {
		if (d->cands.v[i]->state == C_ATTACHING && d->cands.v[i]->child > 0) {
			kill(d->cands.v[i]->child, SIGKILL);
			waitpid(d->cands.v[i]->child, NULL, 0);
		}
		cand_free(d->cands.v[i]);
	}
	for (size_t i = 0; i < d->ns_sockets.n; i++)
		close(d->ns_sockets.v[i].ts.fd);
	vec_free(&d->cands);
	vec_free(&d->ns_sockets);
	u64_map_free(&d->by_pid);
}

static struct candidate *find(struct discovery *d, pid_t pid)
{
	uint64_t *i = u64_map_get(&d->by_pid, (uint64_t)pid);
	return i ? d->cands.v[*i - 1] : NULL;
}

/* A process a scan finds moments after its exec gets as long as one found
 * by its exec event (500 ms): an attach while HotSpot still starts up
 * loads the agent before JVMTI can serve it, and the agent turns itself
 * off for good. */
static uint64_t young_delay_ns(uint64_t start_ticks)
{
	struct timespec ts;
	long hz = sysconf(_SC_CLK_TCK);
	uint64_t started, up;

	if (!start_ticks || hz <= 0 || clock_gettime(CLOCK_BOOTTIME, &ts) != 0)
		return 0;
	started = start_ticks * (1000000000ull / (uint64_t)hz);
	up = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	return up >= started && up - started < 500 * MS ? 500 * MS - (up - started) : 0;
}

static struct candidate *add(struct discovery *d, pid_t pid, bool from_exec, uint64_t due)
{
	struct candidate *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->pid = pid;
	c->report_fd = -1;
	c->start_time = procfs_start_time(pid);
	c->from_exec = from_exec;
	c->due_ns = from_exec ? due : due + young_delay_ns(c->start_time);
	if (vec_push(&d->cands, c) != 0 || u64_map_put(&d->by_pid, (uint64_t)pid, d->cands.n) != 0) {
		if (d->cands.n && d->cands.v[d->cands.n - 1] == c)
			d->cands.n--;
		cand_free(c);
		return NULL;
	}
	return c;
}

static void drop(struct discovery *d, size_t i)
{
	struct candidate *c = d->cands.v[i];

	u64_map_del(&d->by_pid, (uint64_t)c->pid);
	d->cands.v[i] = d->cands.v[d->cands.n - 1];
	d->cands.n--;
	if (i < d->cands.n)
		u64_map_put(&d->by_pid, (uint64_t)d->cands.v[i]->pid, i + 1);
	cand_free(c);
}

void discovery_on_exec(struct discovery *d, pid_t pid, uint64_t now)
{
	struct candidate *c = find(d, pid);

	d->counters.execs_seen++;
	if (d->opt->attach != ATTACH_AUTO)
		return; /* nothing would ever look at (or forget) the candidate */
	if (c && c->state == C_ATTACHING)
		return;
	if (!c && !(c = add(d, pid, true, now)))
		return;
	/* A new image: whatever we knew of the old one is void. */
	c->state = C_WATCH;
	c->from_exec = true;
	c->checks = c->not_ready = c->failures = 0;
	c->jvm_seen = false;
	c->early = false;
	c->start_time = procfs_start_time(pid);
	c->due_ns = now + 500 * MS;
}

void discovery_attach_soon(struct discovery *d, pid_t pid, uint64_t now)
{
	struct candidate *c = find(d, pid);

	if (d->opt->attach != ATTACH_AUTO)
		return;
	if (!c && !(c = add(d, pid, true, now)))
		return;
	if (c->state != C_WATCH)
		return; /* attaching now, or decided */
	c->from_exec = true;
	c->early = true;
	c->not_ready = 0;
	c->due_ns = now;
	d->early_waiting++;
}

bool discovery_decided(struct discovery *d, pid_t pid)
{
	struct candidate *c = find(d, pid);

	return c && c->state == C_DONE;
}

void discovery_mark_early(struct discovery *d, pid_t pid)
{
	struct candidate *c = find(d, pid);

	if (c) {
		c->early = true;
		d->early_waiting++;
	}
}

static void scan_proc(struct discovery *d, uint64_t now)
{
	DIR *dir = opendir("/proc");
	struct dirent *e;

	if (!dir) {
		log_warn("cannot scan /proc: %s", strerror(errno));
		return;
	}
	while ((e = readdir(dir))) {
		pid_t pid = pid_from_text(e->d_name);

		if (!pid || pid == getpid() || find(d, pid))
			continue;
		add(d, pid, false, now);
	}
	closedir(dir);
	/* Forget processes that are gone (or whose pid was reused). */
	for (size_t i = 0; i < d->cands.n;) {
		struct candidate *c = d->cands.v[i];
		if (c->state != C_ATTACHING && (kill(c->pid, 0) != 0 && errno == ESRCH))
			drop(d, i);
		else if (c->state != C_ATTACHING && procfs_start_time(c->pid) != c->start_time)
			drop(d, i);
		else
			i++;
	}
}

/* Closes the namespace socket at index i, removing its file while the
 * process it was made for still shows the way into that root. */
static void release_ns_socket(struct discovery *d, size_t i)
{
	struct ns_socket *ns = &d->ns_sockets.v[i];

	if (procfs_ns_inode(ns->made_for, "mnt") == ns->mnt_ns)
		target_socket_unlink(ns->made_for, &ns->ts);
	d->hooks.on_listener_closed(d->hooks.ctx, ns->ts.fd);
	close(ns->ts.fd);
	log_info("released the agent socket in mount namespace %llu", (unsigned long long)ns->mnt_ns);
	d->ns_sockets.v[i] = d->ns_sockets.v[d->ns_sockets.n - 1];
	d->ns_sockets.n--;
	d->counters.ns_released++;
}

/* Releases namespace sockets no profiled process has used for a while. */
static void release_unused(struct discovery *d, uint64_t now)
{
	for (size_t i = 0; i < d->ns_sockets.n;) {
		struct ns_socket *ns = &d->ns_sockets.v[i];
		if (d->hooks.ns_in_use(d->hooks.ctx, ns->mnt_ns))
			ns->last_used_ns = now;
		if (now - ns->last_used_ns > NS_IDLE_NS)
			release_ns_socket(d, i);
		else
			i++;
	}
}

/* The socket path the agent in pid should connect to; -1 if none. */
static int agent_socket_for(struct discovery *d, pid_t pid, uint64_t now, char *out, size_t outlen, char *why,
			    size_t whylen)
{
	struct ns_socket fresh = {0};
	uint64_t ns;

	if (target_sees_same(pid, d->opt->agent_socket_path)) {
		snprintf(out, outlen, "%s", d->opt->agent_socket_path);
		return 0;
	}
	ns = procfs_ns_inode(pid, "mnt");
	for (size_t i = 0; ns && i < d->ns_sockets.n; i++) {
		if (d->ns_sockets.v[i].mnt_ns != ns)
			continue;
		/* The same file still there (a namespace inode can be reused
		 * by a new namespace once the old one is gone)? */
		if (!target_socket_present(pid, &d->ns_sockets.v[i].ts)) {
			release_ns_socket(d, i);
			break;
		}
		d->ns_sockets.v[i].last_used_ns = now;
		snprintf(out, outlen, "%s/%s", TARGET_DIR, TARGET_SOCKET_NAME);
		return 0;
	}
	if (d->ns_sockets.n >= d->opt->max_agent_namespaces) {
		release_unused(d, now);
		if (d->ns_sockets.n >= d->opt->max_agent_namespaces) {
			snprintf(why, whylen, "agent sockets in %u mount namespaces already (--max-agent-namespaces)",
				 d->opt->max_agent_namespaces);
			return -1;
		}
	}
	if (target_listen(pid, &fresh.ts, why, whylen) != 0)
		return -1;
	fresh.mnt_ns = ns;
	fresh.made_for = pid;
	fresh.last_used_ns = now;
	if (vec_push(&d->ns_sockets, fresh) != 0) {
		close(fresh.ts.fd);
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	d->hooks.on_listener(d->hooks.ctx, fresh.ts.fd);
	log_info("listening for agents in the mount namespace of pid %d at %s/%s", (int)pid, TARGET_DIR,
		 TARGET_SOCKET_NAME);
	snprintf(out, outlen, "%s/%s", TARGET_DIR, TARGET_SOCKET_NAME);
	return 0;
}

static void done(struct candidate *c)
{
	c->state = C_DONE;
	c->due_ns = UINT64_MAX;
}

/* The agent built for pid's libc: libjsagent-musl.so beside agent_path
 * for a JVM that runs on musl (Alpine images), else agent_path itself. */
static int agent_build_for(pid_t pid, const char *agent_path, char *out, size_t outlen, char *why, size_t whylen)
{
	size_t n = strlen(agent_path);

	if (procfs_maps_has(pid, "/ld-musl-x86_64.so.1") != 1) {
		snprintf(out, outlen, "%s", agent_path);
		return 0;
	}
	if (n < 3 || strcmp(agent_path + n - 3, ".so") != 0 ||
	    snprintf(out, outlen, "%.*s-musl.so", (int)(n - 3), agent_path) >= (int)outlen) {
		snprintf(why, whylen, "the JVM runs on musl, and no musl agent goes with %.180s", agent_path);
		return -1;
	}
	return 0;
}

/* The JVM option that turns HotSpot's attach listener off. */
#define JVM_NO_ATTACH "-XX:+DisableAttachMechanism"

/* Looks at one due candidate: not (yet) a JVM, excluded, or ready to attach. */
static void check(struct discovery *d, struct candidate *c, uint64_t now)
{
	struct proc_status st;
	struct attach_target target;
	char why[256], build[256], agent[256], sock[128], opts[256];
	enum attach_result r;
	int jvm, report[2];

	/* jsampled's own children (the native helper maps the libjvm.so it
	 * unwinds) are never JVMs to attach to. */
	if (procfs_status(c->pid, &st) != 0 || st.ppid == getpid()) {
		done(c);
		return;
	}
	jvm = procfs_maps_has(c->pid, "/libjvm.so");
	if (jvm != 1) {
		unsigned limit = c->from_exec ? EXEC_CHECKS : SCAN_CHECKS;
		if (jvm < 0 || ++c->checks >= limit)
			done(c);
		else
			c->due_ns = now + (c->from_exec ? (500 * MS) << c->checks : 5000 * MS);
		return;
	}
	if (!c->jvm_seen) {
		c->jvm_seen = true;
		d->counters.jvms_found++;
		if (c->from_exec && d->hooks.on_young_jvm)
			d->hooks.on_young_jvm(d->hooks.ctx, c->pid);
	}
	if (d->hooks.has_agent(d->hooks.ctx, c->pid) || procfs_maps_has(c->pid, "/libjsagent.so") == 1 ||
	    procfs_maps_has(c->pid, "/libjsagent-musl.so") == 1 ||
	    procfs_maps_has(c->pid, ".jsampled/libjsagent.so") == 1) {
		d->counters.had_agent++;
		log_debug("pid %d already runs the agent", (int)c->pid);
		done(c);
		return;
	}
	if (!process_rules_allow(&d->opt->rules, c->pid, st.euid, why, sizeof(why))) {
		d->counters.excluded++;
		log_info("not profiling JVM pid %d: %s", (int)c->pid, why);
		done(c);
		return;
	}
	/* With its attach mechanism off, HotSpot answers every SIGQUIT with
	 * a thread dump on the JVM's stdout: never send one. */
	if (procfs_java_option(c->pid, JVM_NO_ATTACH)) {
		log_warn("cannot attach to JVM pid %d: it was started with %s; start it with -agentpath:%s to profile it",
			 (int)c->pid, JVM_NO_ATTACH, d->opt->agent_path);
		problem(d, c, "started with " JVM_NO_ATTACH ": start it with -agentpath");
		d->counters.attach_failed++;
		done(c);
		return;
	}
	if (!(st.sig_caught & (1ull << (SIGQUIT - 1)))) {
		/* Still starting (the signal dispatcher is not up), or -Xrs. */
		if (++c->not_ready >= NOT_READY_TRIES + (c->early ? EARLY_QUICK_TRIES : 0)) {
			log_warn("cannot attach to JVM pid %d: it does not handle SIGQUIT (-Xrs?); "
				 "start it with -agentpath:%s to profile it", (int)c->pid, d->opt->agent_path);
			problem(d, c, "it does not handle SIGQUIT (-Xrs?): start it with -agentpath");
			d->counters.attach_failed++;
			done(c);
		} else {
			c->due_ns = now + (c->early && c->not_ready < EARLY_QUICK_TRIES ? 20
					   : c->not_ready % EARLY_QUICK_TRIES < 4 ? 1000 : 10000) * MS;
		}
		return;
	}
	if (d->running >= MAX_RUNNING) {
		c->due_ns = now + (c->early ? 20 : 1000) * MS;
		return;
	}
	r = attach_target_open(c->pid, c->start_time, &target);
	if (r != ATTACH_OK) {
		/* Gone, or its pid names another process now; or no usable /tmp. */
		if (r == ATTACH_NO_TMP) {
			log_warn("cannot attach to JVM pid %d: %s", (int)c->pid, attach_result_name(r));
			problem(d, c, "no usable /tmp in the JVM's root");
			d->counters.attach_failed++;
		}
		done(c);
		return;
	}
	if (agent_build_for(c->pid, d->opt->agent_path, build, sizeof(build), why, sizeof(why)) != 0 ||
	    target_agent_path(c->pid, build, agent, sizeof(agent), why, sizeof(why)) != 0 ||
	    agent_socket_for(d, c->pid, now, sock, sizeof(sock), why, sizeof(why)) != 0) {
		attach_target_close(&target);
		d->counters.attach_failed++;
		/* A full set of namespace sockets frees up as containers go:
		 * like a JVM not ready yet, retried for a while. */
		if (d->ns_sockets.n >= d->opt->max_agent_namespaces && ++c->not_ready < NOT_READY_TRIES) {
			log_info("cannot attach to JVM pid %d yet: %s", (int)c->pid, why);
			c->due_ns = now + 5000 * MS;
			return;
		}
		log_warn("cannot attach to JVM pid %d: %s", (int)c->pid, why);
		problem(d, c, why);
		done(c);
		return;
	}
	snprintf(opts, sizeof(opts), "socket:%s", sock);
	if (pipe2(report, O_CLOEXEC | O_NONBLOCK) != 0)
		report[0] = report[1] = -1;
	c->child = hotspot_attach_start(&target, agent, opts, report[1]);
	attach_target_close(&target);
	if (report[1] >= 0)
		close(report[1]);
	if (c->report_fd >= 0)
		close(c->report_fd);
	c->report_fd = report[0];
	if (c->child < 0) {
		log_warn("cannot fork to attach to pid %d: %s", (int)c->pid, strerror(errno));
		if (c->report_fd >= 0)
			close(c->report_fd);
		c->report_fd = -1;
		c->due_ns = now + 5000 * MS;
		return;
	}
	log_debug("attaching to JVM pid %d (uid %u) with %s, %s", (int)c->pid, (unsigned)st.euid, agent, opts);
	c->state = C_ATTACHING;
	c->child_started_ns = now;
	c->child_killed = false;
	d->running++;
}

bool discovery_child_exited(struct discovery *d, pid_t child, int ws, uint64_t now)
{
	struct candidate *c = NULL;
	enum attach_result r;
	char said[ATTACH_REPORT_MAX + 1] = "", why[ATTACH_REPORT_MAX + 64];

	for (size_t i = 0; i < d->cands.n; i++)
		if (d->cands.v[i]->state == C_ATTACHING && d->cands.v[i]->child == child)
			c = d->cands.v[i];
	if (!c)
		return false;
	d->running--;
	c->child = 0;
	c->state = C_WATCH;
	r = c->child_killed ? ATTACH_TIMEOUT : hotspot_attach_result(ws);
	if (c->report_fd >= 0) {
		ssize_t n = read(c->report_fd, said, sizeof(said) - 1);
		said[n > 0 ? n : 0] = 0;
		close(c->report_fd);
		c->report_fd = -1;
	}
	switch (r) {
	case ATTACH_OK:
		d->counters.attached++;
		log_info("loaded the agent into JVM pid %d", (int)c->pid);
		done(c);
		break;
	case ATTACH_GONE:
		done(c);
		break;
	case ATTACH_NOT_READY:
	case ATTACH_NOT_LIVE:
		c->not_ready++;
		c->due_ns = now + (c->early ? 20 : 1000) * MS;
		/* The ticks that check a starting JVM resume at once (they
		 * stopped while its attach ran): its samples wait for it. */
		d->early_waiting += c->early;
		break;
	default:
		d->counters.attach_failed++;
		if (r == ATTACH_TIMEOUT)
			d->counters.attach_timeouts++;
		snprintf(why, sizeof(why), "attach %s%s%s", attach_result_name(r), said[0] ? ": " : "", said);
		problem(d, c, why);
		if (++c->failures >= FAILED_TRIES) {
			log_warn("cannot attach to JVM pid %d: %s (gave up after %u tries)", (int)c->pid,
				 attach_result_name(r), c->failures);
			done(c);
		} else {
			log_info("attaching to JVM pid %d failed: %s; retrying", (int)c->pid, attach_result_name(r));
			c->due_ns = now + (5000 * MS << c->failures);
		}
	}
	return true;
}

/* The parent's deadline: the child runs as the JVM's user, who may stop
 * it; SIGKILL works on a stopped process, and the pid is still our
 * unreaped child's. */
static void kill_overdue(struct discovery *d, uint64_t now)
{
	for (size_t i = 0; i < d->cands.n; i++) {
		struct candidate *c = d->cands.v[i];
		if (c->state == C_ATTACHING && c->child > 0 && !c->child_killed &&
		    now - c->child_started_ns > ATTACH_DEADLINE_NS) {
			log_warn("attaching to JVM pid %d: the attach child %d passed its deadline; killed", (int)c->pid,
				 (int)c->child);
			kill(c->child, SIGKILL);
			c->child_killed = true;
		}
	}
}

void discovery_tick(struct discovery *d, uint64_t now)
{
	kill_overdue(d, now);
	if (now >= d->next_ns_check_ns) {
		release_unused(d, now);
		d->next_ns_check_ns = now + NS_CHECK_NS;
	}
	if (d->opt->attach != ATTACH_AUTO)
		return;
	if (now >= d->next_scan_ns) {
		scan_proc(d, now);
		d->next_scan_ns = now + d->opt->rescan_s * 1000 * MS;
	}
	d->early_waiting = 0;
	for (size_t i = 0; i < d->cands.n; i++) {
		struct candidate *c = d->cands.v[i];
		if (c->state == C_WATCH && c->due_ns <= now)
			check(d, c, now);
		d->early_waiting += c->early && c->state == C_WATCH && c->due_ns < now + 1000 * MS;
	}
}

void discovery_recheck(struct discovery *d, uint64_t now)
{
	for (size_t i = 0; i < d->cands.n; i++) {
		struct candidate *c = d->cands.v[i];
		if (c->state == C_DONE && c->jvm_seen) {
			c->state = C_WATCH;
			c->due_ns = now;
			c->failures = c->not_ready = 0;
		}
	}
	d->next_scan_ns = now;
}
