/* SPDX-License-Identifier: GPL-2.0-only */
#include "userspace/profile/kernel_symbols.h"
#include "state_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "daemon/jvm/procfs.h"
#include "userspace/common/fd_io.h"

/* In a restore's map of saved node indexes: the saved node was an [other]
 * node or below one (node indexes stay below 2^31). */
#define SAVED_IN_OTHER (1u << 31)

static const char MAGIC[8] = {'J', 'S', 'M', 'P', 'S', 'T', 'A', 'T'};
#define STATE_MAX_BYTES (1ull << 32) /* refuse anything larger on restore */
#define NSTATS (sizeof(struct decode_stats) / sizeof(uint64_t))

/* The process's trees: the CPU one, then its allocation and lock trees
 * (NULL where it has none). */
static const struct cct *tree_at(const struct process *p, int i)
{
	return i == 0 ? &p->cct : p->events.tree[i - 1];
}
#define NTREES (1 + EVENT_TREE_COUNT)

/* Methods the trees mention, each once. */
static void put_methods(const struct process *p, struct wbuf *w)
{
	struct u64_map seen;
	size_t at = w->len;
	uint32_t n = 0;

	u64_map_init(&seen);
	wbuf_u32(w, 0);
	for (int t = 0; t < NTREES; t++)
	for (size_t i = 1; tree_at(p, t) && i < tree_at(p, t)->nodes.n; i++) {
		const struct cct_node *node = &tree_at(p, t)->nodes.v[i];
		const struct method_info *m;
		const char *cls = "";

		if (node->type == FRAME_PSEUDO || frame_named_by_symbol(node->type) ||
		    u64_map_get(&seen, node->method_id))
			continue;
		m = method_table_get(&p->jvm.methods, node->method_id);
		if (!m || !m->body->named)
			continue;
		if (method_table_class_name(&p->jvm.methods, m->class_id))
			cls = method_table_class_name(&p->jvm.methods, m->class_id);
		u64_map_put(&seen, node->method_id, 1);
		wbuf_u32(w, node->method_id);
		wbuf_u32(w, m->class_id);
		wbuf_str(w, cls);
		wbuf_str(w, method_name(m));
		n++;
	}
	wbuf_patch_u32(w, at, n);
	u64_map_free(&seen);
}

/* Kernel, native and class frames' names (version 4): their ids are this
 * run's only. */
static void put_kernel_names(const struct process *p, struct wbuf *w)
{
	struct u64_map seen;
	size_t at = w->len;
	uint32_t n = 0;

	u64_map_init(&seen);
	wbuf_u32(w, 0);
	for (int t = 0; t < NTREES; t++)
	for (size_t i = 1; tree_at(p, t) && i < tree_at(p, t)->nodes.n; i++) {
		const struct cct_node *node = &tree_at(p, t)->nodes.v[i];

		if (!frame_named_by_symbol(node->type) || u64_map_get(&seen, (uint64_t)node->method_id + 1))
			continue;
		u64_map_put(&seen, (uint64_t)node->method_id + 1, 1);
		wbuf_u32(w, node->method_id);
		wbuf_str(w, kernel_symbols_name(node->method_id));
		n++;
	}
	wbuf_patch_u32(w, at, n);
	u64_map_free(&seen);
}

/* The time slices: start, span, samples and (node, count) pairs. */
static void put_slices(const struct cct_slices *s, struct wbuf *w)
{
	wbuf_u32(w, (uint32_t)s->v.n);
	for (size_t i = 0; i < s->v.n; i++) {
		const struct cct_slice *sl = &s->v.v[i];
		size_t at;
		uint32_t n = 0;

		wbuf_i64(w, sl->start_s);
		wbuf_u32(w, sl->span_s);
		wbuf_u64(w, sl->samples);
		at = w->len;
		wbuf_u32(w, 0);
		/* An open slice's pending counts may repeat a node: the
		 * restore merges equal nodes. */
		for (size_t k = 0; k < sl->counts.n + sl->pending.n; k++) {
			const struct slice_count *c =
				k < sl->counts.n ? &sl->counts.v[k] : &sl->pending.v[k - sl->counts.n];

			wbuf_u32(w, c->node);
			wbuf_u64(w, c->count);
			n++;
		}
		wbuf_patch_u32(w, at, n);
	}
}

/* Reads the time slices back, node indexes mapped to the restored tree's. */
static int get_slices(struct cct_slices *s, struct rbuf *r, const uint32_t *map, uint32_t nnodes)
{
	uint32_t n = rbuf_u32(r);
	struct slice_count *v = NULL;
	int rc = -1;

	if (r->err || n > rbuf_left(r) / 24)
		return -1;
	for (uint32_t i = 0; i < n; i++) {
		int64_t start = rbuf_i64(r);
		uint32_t span = rbuf_u32(r), count;
		uint64_t samples = rbuf_u64(r);

		count = rbuf_u32(r);
		if (r->err || span == 0 || span > 3600 || 3600 % span || start <= 0 || count > rbuf_left(r) / 12)
			goto out;
		free(v);
		v = malloc((count + 1) * sizeof(*v));
		if (!v)
			goto out;
		for (uint32_t k = 0; k < count; k++) {
			uint32_t node = rbuf_u32(r);
			v[k].count = rbuf_u64(r);
			if (r->err || node >= nnodes)
				goto out;
			v[k].node = map[node] & ~SAVED_IN_OTHER;
		}
		if (cct_slices_restore(s, start, span, samples, v, count) != 0)
			goto out;
	}
	rc = 0;
out:
	free(v);
	return rc;
}

/* A tree's nodes (parents first), its root's samples and time slices. */
static void put_tree(const struct cct *c, struct wbuf *w)
{
	wbuf_u32(w, (uint32_t)c->nodes.n);
	for (size_t i = 1; i < c->nodes.n; i++) {
		const struct cct_node *node = &c->nodes.v[i];
		wbuf_u32(w, node->parent);
		wbuf_u32(w, node->method_id);
		wbuf_u8(w, node->type);
		wbuf_i32(w, node->bci);
		wbuf_u64(w, c->self.v[i]);
	}
	wbuf_u64(w, c->self.v[0]);
	put_slices(&c->slices, w);
}

/* Reads a tree put_tree wrote into c (a fresh tree). Names of kernel,
 * native and class frames go through kernel_ids (saved id + 1 -> this
 * run's). -1 (why set) if malformed. */
static int get_tree(struct cct *c, struct rbuf *r, uint32_t version, const struct u64_map *kernel_ids, uint32_t pid,
		    char *why, size_t whylen)
{
	uint32_t nnodes = rbuf_u32(r), *map;

	if (r->err || nnodes == 0 || nnodes - 1 > rbuf_left(r) / (version >= 3 ? 21 : 17)) {
		snprintf(why, whylen, "pid %u: malformed tree", pid);
		return -1;
	}
	/* Saved indexes -> ours: past the cap, nodes fold into [other]. The
	 * top bit: the saved node was an [other] node or below one. */
	map = malloc((size_t)nnodes * sizeof(*map));
	if (!map) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	map[0] = 0;
	for (uint32_t i = 1; i < nnodes; i++) {
		uint32_t parent = rbuf_u32(r), method = rbuf_u32(r);
		uint8_t type = rbuf_u8(r);
		int32_t bci = version >= 3 ? rbuf_i32(r) : -1;
		uint64_t self = rbuf_u64(r);
		if (frame_named_by_symbol(type)) {
			/* this run's id of the saved name */
			uint64_t *k = u64_map_get(kernel_ids, (uint64_t)method + 1);
			method = k ? (uint32_t)*k : kernel_symbols_intern(NULL);
		}
		bool in_other = parent < i && (map[parent] & SAVED_IN_OTHER);
		int64_t at = r->err || parent >= i ? -1
						   : cct_restore_node(c, map[parent] & ~SAVED_IN_OTHER, method, type,
								      bci, self, in_other);
		if (at < 0) {
			snprintf(why, whylen, "pid %u: bad tree node %u", pid, i);
			free(map);
			return -1;
		}
		in_other = in_other || (type == FRAME_PSEUDO && method == PSEUDO_OVERFLOW);
		map[i] = (uint32_t)at | (in_other ? SAVED_IN_OTHER : 0);
	}
	c->self.v[0] = rbuf_u64(r);
	c->samples += c->self.v[0];
	if (version >= 3 && get_slices(&c->slices, r, map, nnodes) != 0) {
		snprintf(why, whylen, "pid %u: bad time slices", pid);
		free(map);
		return -1;
	}
	free(map);
	return 0;
}

static void put_process(const struct process *p, uint64_t now, struct wbuf *w)
{
	const uint64_t *stats = (const uint64_t *)&p->stats;
	size_t at = w->len;

	wbuf_u32(w, 0); /* block length, patched below */
	wbuf_u32(w, (uint32_t)p->pid);
	wbuf_u32(w, p->root_only ? 0 : (uint32_t)p->uid); /* restored as root's: still root's only */
	wbuf_u64(w, p->start_time);
	wbuf_u8(w, (uint8_t)p->state);
	wbuf_u64(w, p->state == PROCESS_LIVE ? 0 : now - p->exited_ns);
	wbuf_str(w, p->comm);
	wbuf_str(w, p->vm);
	wbuf_u32(w, (uint32_t)NSTATS);
	for (size_t i = 0; i < NSTATS; i++)
		wbuf_u64(w, stats[i]);
	wbuf_u64(w, p->cct.overflow_samples);
	put_methods(p, w);
	put_kernel_names(p, w);
	put_tree(&p->cct, w);
	/* Version 5: the allocation and lock trees, and what they were
	 * sampled at. */
	uint8_t n = 0;
	for (int t = 1; t < NTREES; t++)
		n += tree_at(p, t) != NULL;
	wbuf_u8(w, n);
	for (int t = 1; t < NTREES; t++) {
		if (!tree_at(p, t))
			continue;
		wbuf_u8(w, (uint8_t)(t - 1));
		wbuf_u64(w, tree_at(p, t)->overflow_samples);
		put_tree(tree_at(p, t), w);
	}
	wbuf_u64(w, p->events.alloc_interval);
	wbuf_u64(w, p->events.lock_interval);
	wbuf_u64(w, p->events.alloc_events);
	wbuf_u64(w, p->events.monitor_events);
	wbuf_u64(w, p->events.park_events);
	wbuf_patch_u32(w, at, (uint32_t)(w->len - at - 4));
}

void state_boot_id(char out[40])
{
	char buf[64];
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? fd_read_upto(fd, buf, sizeof(buf) - 1) : -1;

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = 0;
	buf[strcspn(buf, "\n")] = 0;
	snprintf(out, 40, "%.39s", buf);
}

int state_encode(const struct process_table *t, uint64_t now, struct wbuf *w)
{
	char boot[40];
	uint32_t crc;

	state_boot_id(boot);
	wbuf_put(w, MAGIC, sizeof(MAGIC));
	wbuf_u32(w, STATE_FILE_VERSION);
	wbuf_u64(w, (uint64_t)time(NULL));
	wbuf_str(w, boot);
	wbuf_u32(w, (uint32_t)t->all.n);
	for (size_t i = 0; i < t->all.n; i++)
		put_process(t->all.v[i], now, w);
	crc = (uint32_t)crc32(0, w->data, (uInt)w->len);
	wbuf_u32(w, crc);
	return w->oom ? -1 : 0;
}

/* Reads one process into tmp (t: the live table, to skip processes that
 * are already back; same_boot: pids and start times still mean the same
 * processes). */
static int get_process(struct process_table *tmp, const struct process_table *t, struct rbuf *r, uint32_t version,
		       uint64_t now, bool same_boot, char *why, size_t whylen)
{
	uint64_t *stats, age, start_time;
	uint32_t pid, uid, nstats, nmeth;
	uint8_t state;
	char comm[16], vm[96];
	struct process *p, *live;
	struct u64_map kernel_ids; /* saved kernel frame id + 1 -> this run's */

	u64_map_init(&kernel_ids);
	pid = rbuf_u32(r);
	uid = rbuf_u32(r);
	start_time = rbuf_u64(r);
	state = rbuf_u8(r);
	age = rbuf_u64(r);
	rbuf_str_copy(r, comm, sizeof(comm));
	rbuf_str_copy(r, vm, sizeof(vm));
	nstats = rbuf_u32(r);
	if (r->err || pid == 0 || pid > (1u << 22) || state > PROCESS_EXITED || nstats > rbuf_left(r) / 8) {
		snprintf(why, whylen, "malformed process header");
		goto bad;
	}
	live = process_lookup(t, (pid_t)pid);
	if (live && live->state == PROCESS_LIVE)
		return 0; /* already connected again: the block is skipped */
	p = process_create(tmp, (pid_t)pid, (uid_t)uid, vm);
	if (!p) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	snprintf(p->comm, sizeof(p->comm), "%s", comm);
	p->start_time = start_time;
	p->restored = true;
	stats = (uint64_t *)&p->stats;
	for (uint32_t i = 0; i < nstats; i++) {
		uint64_t v = rbuf_u64(r);
		if (i < NSTATS)
			stats[i] = v;
	}
	p->cct.overflow_samples = rbuf_u64(r);
	nmeth = rbuf_u32(r);
	if (r->err || nmeth > rbuf_left(r) / 12) {
		snprintf(why, whylen, "pid %u: malformed method list", pid);
		goto bad;
	}
	for (uint32_t i = 0; i < nmeth; i++) {
		char cls[1024], name[1024];
		uint32_t id = rbuf_u32(r), class_id = rbuf_u32(r);
		rbuf_str_copy(r, cls, sizeof(cls));
		rbuf_str_copy(r, name, sizeof(name));
		if (r->err || method_table_put_restored(&p->jvm.methods, id, class_id, cls, name) != 0) {
			snprintf(why, whylen, "pid %u: bad method record", pid);
			goto bad;
		}
	}
	if (version >= 4) {
		uint32_t nk = rbuf_u32(r);
		if (r->err || nk > rbuf_left(r) / 8) {
			snprintf(why, whylen, "pid %u: malformed kernel names", pid);
			goto bad;
		}
		for (uint32_t i = 0; i < nk; i++) {
			char name[512];
			uint32_t id = rbuf_u32(r);
			rbuf_str_copy(r, name, sizeof(name));
			if (r->err || u64_map_put(&kernel_ids, (uint64_t)id + 1, kernel_symbols_intern_for(&p->names, name)) != 0) {
				snprintf(why, whylen, "pid %u: bad kernel name", pid);
				goto bad;
			}
		}
	}
	if (get_tree(&p->cct, r, version, &kernel_ids, pid, why, whylen) != 0)
		goto bad;
	if (version >= 5) {
		struct event_caps caps;
		uint8_t n = rbuf_u8(r);

		process_event_caps(&tmp->limits, &caps);
		for (uint8_t i = 0; i < n && !r->err; i++) {
			uint8_t which = rbuf_u8(r);
			uint64_t overflow = rbuf_u64(r);
			struct cct *c = which < EVENT_TREE_COUNT && !p->events.tree[which]
						? event_profiles_tree(&p->events, which, &caps)
						: NULL;
			if (!c) {
				snprintf(why, whylen, "pid %u: bad event tree %u", pid, which);
				goto bad;
			}
			c->overflow_samples = overflow;
			if (get_tree(c, r, version, &kernel_ids, pid, why, whylen) != 0)
				goto bad;
		}
		p->events.alloc_interval = rbuf_u64(r);
		p->events.lock_interval = rbuf_u64(r);
		p->events.alloc_events = rbuf_u64(r);
		p->events.monitor_events = rbuf_u64(r);
		p->events.park_events = rbuf_u64(r);
	}
	if (r->err) {
		snprintf(why, whylen, "pid %u: truncated", pid);
		goto bad;
	}
	/* Still the same process (same boot, pid and start time)? Then its
	 * agent will reconnect and carry on in this tree; otherwise it has
	 * exited. */
	if (same_boot && start_time && procfs_start_time((pid_t)pid) == start_time) {
		p->state = PROCESS_AGENT_LOST;
		p->exited_ns = now;
	} else {
		p->state = PROCESS_EXITED;
		p->exited_ns = now - (state == PROCESS_EXITED && age < now ? age : 0);
	}
	u64_map_free(&kernel_ids);
	return 0;
bad:
	u64_map_free(&kernel_ids);
	return -1;
}

/* Most recently active first: live ones, then the latest to exit. */
static int by_recency(const void *a, const void *b)
{
	const struct process *x = *(struct process *const *)a, *y = *(struct process *const *)b;
	uint64_t ex = x->state == PROCESS_EXITED ? x->exited_ns : UINT64_MAX;
	uint64_t ey = y->state == PROCESS_EXITED ? y->exited_ns : UINT64_MAX;

	return (ex < ey) - (ex > ey);
}

int state_decode(struct process_table *t, const void *data, size_t len, uint64_t now, unsigned max_processes,
		 char *why, size_t whylen)
{
	struct process_table tmp;
	struct rbuf r;
	uint32_t version, n, crc;
	char boot[40], saved_boot[40] = "";
	size_t room;

	if (len < sizeof(MAGIC) + 4 + 8 + 4 + 4 || memcmp(data, MAGIC, sizeof(MAGIC)) != 0) {
		snprintf(why, whylen, "not a jsampled state file");
		return -1;
	}
	memcpy(&crc, (const uint8_t *)data + len - 4, 4);
	if (crc != (uint32_t)crc32(0, data, (uInt)(len - 4))) {
		snprintf(why, whylen, "checksum mismatch (truncated or corrupted)");
		return -1;
	}
	rbuf_init(&r, data, len - 4);
	rbuf_bytes(&r, sizeof(MAGIC));
	version = rbuf_u32(&r);
	if (version < 1 || version > STATE_FILE_VERSION) {
		snprintf(why, whylen, "version %u, this jsampled reads versions 1 to %u", version, STATE_FILE_VERSION);
		return -1;
	}
	rbuf_u64(&r);
	if (version >= 2)
		rbuf_str_copy(&r, saved_boot, sizeof(saved_boot));
	state_boot_id(boot);
	n = rbuf_u32(&r);
	/* Into a table of its own first: all or nothing. */
	process_table_init(&tmp, &t->limits);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t blen = rbuf_u32(&r);
		struct rbuf b;
		if (r.err || blen > rbuf_left(&r)) {
			snprintf(why, whylen, "process %u of %u: truncated", i, n);
			process_table_free(&tmp);
			return -1;
		}
		b = rbuf_sub(&r, blen);
		if (get_process(&tmp, t, &b, version, now, boot[0] && strcmp(boot, saved_boot) == 0, why, whylen) != 0) {
			process_table_free(&tmp);
			return -1;
		}
	}
	/* Within --max-processes, with what is already tracked. */
	room = max_processes > t->all.n ? max_processes - t->all.n : 0;
	if (tmp.all.n > room) {
		qsort(tmp.all.v, tmp.all.n, sizeof(*tmp.all.v), by_recency);
		while (tmp.all.n > room) {
			struct process *p = tmp.all.v[--tmp.all.n];
			u64_map_del(&tmp.by_pid, (uint64_t)p->pid);
			process_free(p);
		}
	}
	return (int)process_table_adopt(t, &tmp);
}

int state_save(const struct process_table *t, const char *dir, uint64_t now, char *why, size_t whylen)
{
	char path[512], tmp[512];
	struct wbuf w;
	size_t off = 0;
	int fd, r = -1;

	snprintf(path, sizeof(path), "%s/%s", dir, STATE_FILE_NAME);
	snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, STATE_FILE_NAME);
	wbuf_init(&w);
	if (state_encode(t, now, &w) != 0) {
		snprintf(why, whylen, "out of memory");
		goto out;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		snprintf(why, whylen, "cannot create %s: %s", tmp, strerror(errno));
		goto out;
	}
	while (off < w.len) {
		ssize_t n = write(fd, w.data + off, w.len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	if (off != w.len || fsync(fd) != 0) {
		snprintf(why, whylen, "cannot write %s: %s", tmp, strerror(errno ? errno : EIO));
		close(fd);
		unlink(tmp);
		goto out;
	}
	close(fd);
	if (rename(tmp, path) != 0) {
		snprintf(why, whylen, "cannot rename %s: %s", tmp, strerror(errno));
		unlink(tmp);
		goto out;
	}
	/* The rename itself must reach the disk. */
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	r = 0;
out:
	wbuf_free(&w);
	return r;
}

int state_restore(struct process_table *t, const char *dir, uint64_t now, unsigned max_processes, char *why,
		  size_t whylen)
{
	char path[512], bad[520];
	struct stat st;
	uint8_t *data = NULL;
	ssize_t got;
	int fd, r;

	snprintf(path, sizeof(path), "%s/%s", dir, STATE_FILE_NAME);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		snprintf(why, whylen, "cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > STATE_MAX_BYTES ||
	    !(data = malloc((size_t)st.st_size + 1))) {
		snprintf(why, whylen, "cannot read %s", path);
		close(fd);
		return -1;
	}
	got = fd_read_upto(fd, data, (size_t)st.st_size);
	close(fd);
	r = got == (ssize_t)st.st_size ? state_decode(t, data, (size_t)got, now, max_processes, why, whylen) : -1;
	if (got != (ssize_t)st.st_size)
		snprintf(why, whylen, "short read of %s", path);
	free(data);
	if (r < 0) {
		/* Kept for a post-mortem, out of the way of the next save. */
		snprintf(bad, sizeof(bad), "%s.bad", path);
		rename(path, bad);
	}
	return r;
}
