/* SPDX-License-Identifier: GPL-2.0-only */
#include "native_live.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "userspace/common/u64_map.h"
#include "daemon/service/daemon.h"
#include "userspace/profile/kernel_symbols.h"
#include "daemon/support/log.h"
#include "native_client.h"
#include "daemon/decode/native_frames.h"
#include "native_protocol.h"
#include "native_sources.h"
#include "native_unwind.h"
#include "daemon/service/privileges.h"
#include "daemon/jvm/procfs.h"
#include "daemon/record/recording.h"
#include "daemon/process/stats_format.h"

#define REFRESH_INTERVAL_NS 1000000000ull

/* What the helper was told of one process. */
struct native_proc {
	struct native_live *nl;
	struct process *p; /* NULL once the process is freed: its walks still out are dropped */
	uint32_t key;
	uint64_t gen;      /* the helper incarnation that was told (0: none) */
	uint64_t maps_ns;  /* its mappings were last read then */
	bool want_maps;    /* the helper met a pc in no known module */
	bool disabled;     /* the helper failed on it too often */
	bool vdso_recorded;
	unsigned strikes;
	unsigned pending;  /* walks out */
	struct u64_map files; /* dev, ino of files given (or refused) to this incarnation */
	off_t perf_size;
	int64_t perf_mtime;
	bool perf_given;
};

/* A sample waiting for the helper's answer. */
struct native_walk {
	struct native_proc *np;
	uint64_t time_ns; /* the sample's, and its thread */
	uint32_t tid;
	uint32_t flags; /* the sample's (an off-CPU sample's weight is found by them) */
	uint32_t thread_state; /* the sample's: what an off-CPU one waited for */
	char comm[16];         /* the sample's thread name: its pool's, without an agent's */
	enum decode_status st;
	struct native_plan plan;
	uint32_t n;
	struct trace_frame frames[]; /* its trace, Java and kernel frames */
};

struct native_live {
	struct daemon *d;
	struct native_client *client;
	struct watch *watch; /* the helper's socket in the event loop */
	struct u64_map by_key; /* key -> struct native_proc * */
	uint32_t next_key;
	struct trace *scratch;
	struct wbuf msg;
	struct native_live_counters k;
};

static struct native_live *live_of(const struct daemon *d)
{
	return d->native;
}

/* --- Finishing a trace --- */

/* A sample that gets no native frames after all (lost, refused, no
 * helper): a non-Java process's has nothing else, so it stands under
 * [native] (with its kernel frames, if any) rather than being lost. */
static void without_native(struct trace *tr, enum decode_status st)
{
	if (st != DECODE_NOT_JAVA || tr->n >= TRACE_MAX_FRAMES)
		return;
	memmove(&tr->frames[1], &tr->frames[0], tr->n * sizeof(tr->frames[0]));
	tr->frames[0] = (struct trace_frame){.method_id = PSEUDO_NATIVE, .type = FRAME_PSEUDO, .bci = -1};
	tr->n++;
}


static void proc_release(struct native_proc *np)
{
	u64_map_del(&np->nl->by_key, np->key);
	u64_map_free(&np->files);
	free(np);
}

static void finish(struct native_live *nl, struct native_walk *w, const struct native_found *found)
{
	struct native_proc *np = w->np;
	struct trace *tr = nl->scratch;

	np->pending--;
	if (np->p)
		np->p->native_bytes -= sizeof(*w) + w->n * sizeof(w->frames[0]);
	if (np->p) {
		struct js_sample head = {.time_ns = w->time_ns, .tid = w->tid, .pid = (uint32_t)np->p->pid,
					 .flags = w->flags, .thread_state = w->thread_state};

		memcpy(head.comm, w->comm, sizeof(head.comm));
		tr->n = w->n;
		tr->n_crossings = 0;
		memcpy(tr->frames, w->frames, w->n * sizeof(w->frames[0]));
		if (found)
			native_plan_apply(&w->plan, found, tr);
		else
			without_native(tr, w->st);
		process_finish_deferred(&nl->d->processes, np->p, &head, w->st, tr);
	} else if (np->pending == 0) {
		proc_release(np);
	}
	free(w);
}

/* The FRAMES answer to w: names escaped and interned here. false if it does
 * not parse (the walk keeps its Java frames). */
static bool parse_frames(struct native_walk *w, const uint8_t *msg, size_t len, struct native_found *found,
			 uint8_t *flagsp)
{
	unsigned want = w->plan.n_cross + (w->plan.leaf ? 1 : 0);
	struct name_refs *names = w->np->p ? &w->np->p->names : NULL; /* none: the trace is dropped */
	struct rbuf r;
	uint8_t flags;

	rbuf_init(&r, msg, len);
	(void)rbuf_bytes(&r, NATIVE_MSG_HEAD);
	flags = rbuf_u8(&r);
	found->n_lists = rbuf_u8(&r);
	if (r.err || found->n_lists != want)
		return false;
	*flagsp = flags;
	for (unsigned i = 0; i < found->n_lists; i++) {
		found->n[i] = rbuf_u8(&r);
		if (found->n[i] > NATIVE_FRAMES_MAX)
			return false;
		for (unsigned k = 0; k < found->n[i]; k++) {
			char name[NATIVE_NAME_MAX];
			size_t n;
			const char *s = rbuf_str(&r, &n);

			if (r.err)
				return false;
			if (n >= sizeof(name))
				n = sizeof(name) - 1;
			memcpy(name, s, n);
			name[n] = 0; /* an embedded NUL only cuts the name */
			found->id[i][k] = names ? kernel_symbols_intern_for(names, name[0] ? name : "[unknown]") : 0;
		}
	}
	return !r.err && rbuf_left(&r) == 0;
}

/* The helper failed on np (it died, was late, or met a file cut short
 * under it): past NATIVE_STRIKES_MAX, np's samples keep their Java frames
 * only, and a helper waiting to restart for its sake starts at once. */
static void strike(struct native_live *nl, struct native_proc *np, unsigned strikes, const char *what)
{
	if (!np->p || np->disabled)
		return;
	np->strikes += strikes;
	if (np->strikes < NATIVE_STRIKES_MAX)
		return;
	np->disabled = true;
	nl->k.processes_disabled++;
	native_client_forgive(nl->client);
	log_warn("pid %d (%s): %s: no native frames for it any more", (int)np->p->pid, np->p->comm, what);
}

static void on_frames(void *ctx, void *walk, const uint8_t *msg, size_t len)
{
	struct native_live *nl = ctx;
	struct native_walk *w = walk;
	struct native_found found;
	uint8_t flags = 0;

	if (!parse_frames(w, msg, len, &found, &flags)) {
		nl->k.bad_answers++;
		nl->k.fallback++;
		finish(nl, w, NULL);
		return;
	}
	if (flags & NATIVE_FRAMES_FAILED) {
		/* A file it maps was cut short while the helper read it: only its
		 * owner can do that. */
		strike(nl, w->np, NATIVE_STRIKES_MAX, "a library it maps was truncated under the native helper");
		nl->k.fallback++;
		finish(nl, w, NULL);
		return;
	}
	if (flags & NATIVE_FRAMES_UNKNOWN_PC)
		w->np->want_maps = true;
	nl->k.completed++;
	finish(nl, w, &found);
}

static void on_lost(void *ctx, void *walk, bool blamed)
{
	struct native_live *nl = ctx;
	struct native_walk *w = walk;

	if (blamed) {
		char what[64];

		snprintf(what, sizeof(what), "the native helper failed on it %u times", NATIVE_STRIKES_MAX);
		strike(nl, w->np, 1, what);
	}
	nl->k.fallback++;
	finish(nl, w, NULL);
}

static void on_want_debug(void *ctx, uint32_t key, const unsigned char *id, unsigned n, int fds[2])
{
	struct native_live *nl = ctx;
	uint64_t *v = u64_map_get(&nl->by_key, key);
	struct native_proc *np = v ? (struct native_proc *)(uintptr_t)*v : NULL;
	int root;

	fds[0] = fds[1] = -1;
	if (!np || !np->p || (root = native_sources_root(np->p->pid)) < 0)
		return;
	native_sources_open_debug(root, native_sources_same_root(np->p->pid), id, n, fds);
	close(root);
}

static void watch_helper(void *ctx, int fd, uint32_t events)
{
	struct native_live *nl = ctx;
	struct event_loop *loop = &nl->d->loop;

	if (fd < 0 || (nl->watch && nl->watch->fd != fd)) {
		if (nl->watch)
			watch_del(loop, nl->watch);
		nl->watch = NULL;
	}
	if (fd < 0)
		return;
	if (nl->watch)
		watch_mod(loop, nl->watch, events);
	else
		nl->watch = watch_add(loop, W_NATIVE, fd, nl, events);
}

/* --- Telling the helper about a process --- */

static void proc_free_hook(void *state)
{
	struct native_proc *np = state;
	struct native_live *nl = np->nl;

	np->p = NULL;
	if (nl->client && np->gen && np->gen == native_client_generation(nl->client)) {
		wbuf_reset(&nl->msg);
		wbuf_put(&nl->msg, (uint8_t[NATIVE_MSG_HEAD]){0}, NATIVE_MSG_HEAD);
		(void)native_client_send(nl->client, NATIVE_MSG_DROP, np->key, &nl->msg, NULL, 0, NULL);
	}
	if (np->pending == 0)
		proc_release(np);
}

static struct native_proc *proc_of(struct native_live *nl, struct process *p)
{
	struct native_proc *np = p->native_state;

	if (np)
		return np;
	if (p->native_failed || !(np = calloc(1, sizeof(*np))))
		return NULL;
	np->nl = nl;
	np->p = p;
	np->key = ++nl->next_key;
	u64_map_init(&np->files);
	if (u64_map_put(&nl->by_key, np->key, (uint64_t)(uintptr_t)np) != 0) {
		free(np);
		p->native_failed = true;
		return NULL;
	}
	p->native_state = np;
	p->native_state_free = proc_free_hook;
	return np;
}

static void begin(struct native_live *nl)
{
	wbuf_reset(&nl->msg);
	wbuf_put(&nl->msg, (uint8_t[NATIVE_MSG_HEAD]){0}, NATIVE_MSG_HEAD);
}

static void send_fd(struct native_live *nl, struct native_proc *np, uint32_t type, int fd)
{
	(void)native_client_send(nl->client, type, np->key, &nl->msg, &fd, 1, NULL);
}

static void give_files(struct native_live *nl, struct native_proc *np, const char *maps, size_t len)
{
	struct native_mapped_file f;
	struct proc_status st;
	enum native_source_refusal why;
	size_t pos = 0;
	int root = native_sources_root(np->p->pid), fd;

	if (root < 0)
		return;
	while (native_sources_next_exec(maps, len, &pos, &f)) {
		uint64_t key = f.dev * 0x9e3779b97f4a7c15ull ^ f.ino;

		if (u64_map_get(&np->files, key))
			continue;
		u64_map_put(&np->files, key, 1); /* given or refused: once */
		if ((fd = native_sources_open_mapped(root, &f, &why)) < 0) {
			nl->k.files_refused++;
			log_debug("pid %d: %s not given to the native helper (%d)", (int)np->p->pid, f.path, (int)why);
			continue;
		}
		begin(nl);
		wbuf_str(&nl->msg, f.path);
		wbuf_u64(&nl->msg, f.dev);
		wbuf_u64(&nl->msg, f.ino);
		send_fd(nl, np, NATIVE_MSG_FILE, fd);
		nl->k.files_sent++;
	}
	/* A JIT's perf map, as perf reads it: the process's own. */
	if (procfs_status(np->p->pid, &st) == 0) {
		off_t size;
		int64_t mtime;

		fd = native_sources_open_perf_map(root, st.nspid, st.euid, &size, &mtime, &why);
		if (fd < 0 && why != NATIVE_SOURCE_MISSING)
			nl->k.perf_maps_refused++;
		if (fd >= 0 && np->perf_given && size == np->perf_size && mtime == np->perf_mtime) {
			close(fd);
		} else if (fd >= 0) {
			begin(nl);
			send_fd(nl, np, NATIVE_MSG_PERF_MAP, fd);
			np->perf_given = true;
			np->perf_size = size;
			np->perf_mtime = mtime;
			nl->k.perf_maps_sent++;
		}
	}
	close(root);
}

/* Reads p's mappings and tells the helper (all of it to a new helper). */
static bool refresh(struct native_live *nl, struct native_proc *np, struct recording *rec, uint64_t now)
{
	uint64_t gen = native_client_generation(nl->client), lo, hi;
	char *maps;
	size_t len;

	np->maps_ns = now;
	np->want_maps = false;
	if (native_sources_maps(np->p->pid, &maps, &len) != 0)
		return false;
	if (rec)
		recording_write(rec, REC_MAPS, np->p->pid, maps, len);
	if (gen != np->gen) {
		u64_map_free(&np->files);
		u64_map_init(&np->files);
		np->perf_given = false;
	}
	for (size_t at = 0; at < len;) {
		size_t part = len - at < NATIVE_MAPS_PART ? len - at : NATIVE_MAPS_PART;

		/* On a line's end, so that each part is whole lines. */
		while (at + part < len && part > 0 && maps[at + part - 1] != '\n')
			part--;
		if (part == 0)
			part = len - at < NATIVE_MAPS_PART ? len - at : NATIVE_MAPS_PART;
		begin(nl);
		wbuf_u32(&nl->msg, (uint32_t)np->p->pid);
		wbuf_u8(&nl->msg, at + part >= len);
		wbuf_put(&nl->msg, maps + at, part);
		(void)native_client_send(nl->client, NATIVE_MSG_MAPS, np->key, &nl->msg, NULL, 0, NULL);
		at += part;
	}
	if (gen != np->gen && native_sources_vdso_range(maps, len, &lo, &hi)) {
		static uint8_t image[NATIVE_VDSO_MAX_BYTES];
		ssize_t n = native_sources_vdso(np->p->pid, lo, hi, image, sizeof(image));

		if (n > 0) {
			if (rec && !np->vdso_recorded)
				recording_write(rec, REC_VDSO, np->p->pid, image, (size_t)n);
			np->vdso_recorded = true;
			begin(nl);
			wbuf_put(&nl->msg, image, (size_t)n);
			(void)native_client_send(nl->client, NATIVE_MSG_VDSO, np->key, &nl->msg, NULL, 0, NULL);
		}
	}
	give_files(nl, np, maps, len);
	free(maps);
	np->gen = gen;
	nl->k.refreshes++;
	return true;
}

/* --- The hook --- */

bool native_live_frames(void *ctx, struct recording *rec, struct process *p, const struct js_sample *s,
			enum decode_status st, struct trace *tr, uint32_t java_n)
{
	struct daemon *d = ctx;
	struct native_live *nl = live_of(d);
	struct native_plan plan;
	struct native_proc *np;
	struct native_walk *w;
	uint64_t now;
	struct wbuf *m;

	if (!nl || !native_plan_make(p, s, tr, java_n, &plan))
		return false;
	if (!(np = proc_of(nl, p)) || np->disabled || !native_client_ready(nl->client)) {
		nl->k.fallback++;
		without_native(tr, st);
		return false;
	}
	now = monotonic_ns();
	if ((np->gen != native_client_generation(nl->client) ||
	     (np->want_maps && now - np->maps_ns >= REFRESH_INTERVAL_NS)) &&
	    !refresh(nl, np, rec, now) && np->gen != native_client_generation(nl->client)) {
		nl->k.fallback++;
		without_native(tr, st);
		return false;
	}
	w = malloc(sizeof(*w) + tr->n * sizeof(tr->frames[0]));
	if (!w) {
		nl->k.fallback++;
		without_native(tr, st);
		return false;
	}
	w->np = np;
	w->time_ns = s->time_ns;
	w->tid = s->tid;
	w->flags = s->flags;
	w->thread_state = s->thread_state;
	memcpy(w->comm, s->comm, sizeof(w->comm));
	w->st = st;
	w->plan = plan;
	w->n = tr->n;
	memcpy(w->frames, tr->frames, tr->n * sizeof(tr->frames[0]));

	m = &nl->msg;
	begin(nl);
	wbuf_u8(m, plan.leaf ? NATIVE_WALK_LEAF : 0);
	wbuf_u8(m, (uint8_t)plan.n_cross);
	wbuf_u64(m, plan.stop_lo);
	wbuf_u64(m, plan.stop_hi);
	for (unsigned i = 0; i < plan.n_cross; i++) {
		wbuf_u64(m, plan.cross[i].pc);
		wbuf_u64(m, plan.cross[i].sp);
		wbuf_u64(m, plan.cross[i].fp);
	}
	wbuf_u32(m, s->tid);
	wbuf_u32(m, s->flags);
	for (int i = 0; i < JS_NREGS; i++)
		wbuf_u64(m, s->regs[i]);
	wbuf_u64(m, s->stack_addr);
	wbuf_u32(m, s->stack_len);
	wbuf_put(m, s->stack, s->stack_len);
	if (native_client_send(nl->client, NATIVE_MSG_WALK, np->key, m, NULL, 0, w) != 0) {
		free(w);
		nl->k.fallback++;
		without_native(tr, st);
		return false;
	}
	np->pending++;
	p->native_bytes += sizeof(*w) + w->n * sizeof(w->frames[0]);
	nl->k.walks++;
	return true;
}

/* --- Set-up and the loop's part --- */

int native_live_init(struct daemon *d, char *why, size_t whylen)
{
	struct native_client_config cfg = {
		.memory_bytes = d->opt.native_helper_bytes,
		.deadline_ns = (uint64_t)d->opt.native_deadline_ms * 1000000ull,
		.queue_bytes = d->opt.native_queue_bytes,
	};
	struct native_live *nl;

	if (privileges_sandbox_user(d->opt.native_helper_user, &cfg.uid, &cfg.gid, why, whylen) != 0)
		return -1;
	snprintf(cfg.helper_path, sizeof(cfg.helper_path), "%s", d->opt.native_helper_path);
	if (!(nl = calloc(1, sizeof(*nl))) || !(nl->scratch = malloc(sizeof(*nl->scratch)))) {
		free(nl);
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	nl->d = d;
	u64_map_init(&nl->by_key);
	wbuf_init(&nl->msg);
	nl->client = native_client_new(&cfg, &(struct native_client_hooks){
		.on_frames = on_frames,
		.on_lost = on_lost,
		.on_want_debug = on_want_debug,
		.watch = watch_helper,
		.ctx = nl,
	});
	if (!nl->client) {
		free(nl->scratch);
		free(nl);
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	d->native = nl;
	log_info("native frames: unwound by %s as uid %u", cfg.helper_path, (unsigned)cfg.uid);
	return 0;
}

void native_live_free(struct daemon *d, unsigned timeout_ms)
{
	struct native_live *nl = live_of(d);
	uint64_t until = monotonic_ns() + (uint64_t)timeout_ms * 1000000ull;

	if (!nl)
		return;
	/* The answers still out, while they come. */
	while (native_client_fd(nl->client) >= 0 && native_client_queued_bytes(nl->client) && monotonic_ns() < until) {
		struct pollfd pfd = {.fd = native_client_fd(nl->client),
				     .events = POLLIN | (native_client_wants_out(nl->client) ? POLLOUT : 0)};
		int left = (int)((until - monotonic_ns()) / 1000000ull) + 1;

		if (poll(&pfd, 1, left) <= 0)
			break;
		native_client_on_event(nl->client, (pfd.revents & POLLIN ? EPOLLIN : 0) |
							   (pfd.revents & POLLOUT ? EPOLLOUT : 0) |
							   (pfd.revents & (POLLHUP | POLLERR) ? EPOLLHUP : 0));
	}
	native_client_free(nl->client); /* the rest: Java frames only */
	nl->client = NULL;
	/* Processes still hold their state: it goes with them. */
	d->native = NULL;
	for (size_t i = 0; i < d->processes.all.n; i++) {
		struct process *p = d->processes.all.v[i];

		if (p->native_state_free == proc_free_hook) {
			struct native_proc *np = p->native_state;

			np->p = NULL;
			if (np->pending == 0) {
				u64_map_free(&np->files);
				free(np);
			}
			p->native_state = NULL;
			p->native_state_free = NULL;
		}
	}
	u64_map_free(&nl->by_key);
	wbuf_free(&nl->msg);
	free(nl->scratch);
	free(nl);
}

void native_live_on_event(struct daemon *d, uint32_t events)
{
	if (live_of(d))
		native_client_on_event(live_of(d)->client, events);
}

void native_live_tick(struct daemon *d, uint64_t now_ns)
{
	if (live_of(d))
		native_client_tick(live_of(d)->client, now_ns);
}

bool native_live_child_exited(struct daemon *d, pid_t pid, int status)
{
	return live_of(d) && native_client_child_exited(live_of(d)->client, pid, status);
}

uint64_t native_live_helper_cpu_ns(const struct daemon *d)
{
	return live_of(d) ? native_client_helper_cpu_ns(live_of(d)->client) : 0;
}

unsigned native_live_stats(const struct daemon *d, struct stat_field *out, unsigned cap)
{
	const struct native_live *nl = live_of(d);
	const struct native_client_counters *c = native_client_counters(nl ? nl->client : NULL);
	static const struct native_live_counters none;
	const struct native_live_counters *k = nl ? &nl->k : &none;
	const struct stat_field all[] = {
		{"helper_starts", c->starts},
		{"helper_exits", c->exits},
		{"helper_timeouts", c->timeouts},
		{"helper_bad_answers", c->bad_answers},
		{"helper_start_failed", c->start_failed},
		{"walks", k->walks},
		{"completed", k->completed},
		{"fallback", k->fallback},
		{"lost", c->lost},
		{"queue_full", c->queue_full},
		{"bad_answers", k->bad_answers},
		{"queued_bytes", nl ? native_client_queued_bytes(nl->client) : 0},
		{"bytes_sent", c->bytes_sent},
		{"debug_asks", c->debug_asks},
		{"refreshes", k->refreshes},
		{"files_sent", k->files_sent},
		{"files_refused", k->files_refused},
		{"perf_maps_sent", k->perf_maps_sent},
		{"perf_maps_refused", k->perf_maps_refused},
		{"processes_disabled", k->processes_disabled},
	};
	unsigned n = 0;

	for (; n < cap && n < STATS_N(all); n++)
		out[n] = all[n];
	return n;
}
