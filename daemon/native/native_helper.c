/* SPDX-License-Identifier: GPL-2.0-only */
#include "native_helper.h"

#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf/sampler.h"
#include "userspace/common/u64_map.h"
#include "native_protocol.h"
#include "native_unwind.h"

struct file_entry {
	char *path;
	int fd;
};

/* One profiled process, as jsampled described it. */
struct hproc {
	struct native_helper *h;
	uint32_t key;
	pid_t pid;
	struct native_unwinder *u; /* made once its first whole MAPS came */
	char *maps;                /* the parts of a MAPS being assembled */
	size_t maps_len;
	char *vdso;                /* an image that came before the unwinder */
	size_t vdso_len;
	int perf_map_fd;           /* likewise, -1 */
	struct file_entry *files;
	size_t nfiles;
	/* The last debug answer: a second pass asks no second time. */
	unsigned char debug_id[NATIVE_BUILD_ID_MAX];
	unsigned debug_n;
	int debug_fds[2];
	bool failed; /* a walk of it met a file cut short: no more walks */
};

struct native_helper {
	unsigned abandoned; /* unwinders given up after a SIGBUS */
	native_debug_ask_fn ask;
	void *ask_ctx;
	struct u64_map by_key; /* key -> index + 1 in procs */
	struct hproc **procs;
	size_t nprocs;
	uint8_t *sample_buf; /* a WALK's sample, aligned for struct js_sample */
};

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void close_all(int *fds, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		close_fd(&fds[i]);
}

/* --- Files, as the unwinder asks for them --- */

static int proc_module(void *ctx, const char *path)
{
	struct hproc *p = ctx;

	for (size_t i = 0; i < p->nfiles; i++)
		if (strcmp(p->files[i].path, path) == 0)
			return dup(p->files[i].fd); /* the unwinder owns what it gets */
	return -1;
}

static int proc_debug(void *ctx, const unsigned char *id, int id_len, int pass)
{
	struct hproc *p = ctx;

	if (id_len <= 0 || (unsigned)id_len > NATIVE_BUILD_ID_MAX || pass < 0 || pass > 1 || !p->h->ask)
		return -1;
	if (p->debug_n != (unsigned)id_len || memcmp(p->debug_id, id, (size_t)id_len) != 0) {
		close_all(p->debug_fds, 2);
		memcpy(p->debug_id, id, (size_t)id_len);
		p->debug_n = (unsigned)id_len;
		if (p->h->ask(p->h->ask_ctx, p->key, id, (unsigned)id_len, p->debug_fds) != 0) {
			p->debug_fds[0] = p->debug_fds[1] = -1;
			return -1;
		}
	}
	return p->debug_fds[pass] >= 0 ? dup(p->debug_fds[pass]) : -1;
}

/* --- Processes --- */

static struct hproc *find(struct native_helper *h, uint32_t key)
{
	uint64_t *at = u64_map_get(&h->by_key, key);

	return at ? h->procs[*at - 1] : NULL;
}

static struct hproc *find_or_add(struct native_helper *h, uint32_t key)
{
	struct hproc *p = find(h, key), **v;

	if (p)
		return p;
	if (h->nprocs >= NATIVE_HELPER_MAX_PROCESSES || !(p = calloc(1, sizeof(*p))))
		return NULL;
	v = realloc(h->procs, (h->nprocs + 1) * sizeof(*v));
	if (!v || u64_map_put(&h->by_key, key, h->nprocs + 1) != 0) {
		if (v)
			h->procs = v;
		free(p);
		return NULL;
	}
	h->procs = v;
	p->h = h;
	p->key = key;
	p->perf_map_fd = -1;
	p->debug_fds[0] = p->debug_fds[1] = -1;
	h->procs[h->nprocs++] = p;
	return p;
}

static void proc_free(struct hproc *p)
{
	native_unwinder_free(p->u);
	free(p->maps);
	free(p->vdso);
	close_fd(&p->perf_map_fd);
	for (size_t i = 0; i < p->nfiles; i++) {
		free(p->files[i].path);
		close(p->files[i].fd);
	}
	free(p->files);
	close_all(p->debug_fds, 2);
	free(p);
}

static void drop(struct native_helper *h, uint32_t key)
{
	uint64_t *at = u64_map_get(&h->by_key, key);
	size_t i, last;

	if (!at)
		return;
	i = *at - 1;
	last = h->nprocs - 1;
	proc_free(h->procs[i]);
	u64_map_del(&h->by_key, key);
	if (i != last) {
		h->procs[i] = h->procs[last];
		u64_map_put(&h->by_key, h->procs[i]->key, i + 1);
	}
	h->nprocs--;
}

/* The whole mappings text came: the unwinder is made or told. */
static void maps_done(struct hproc *p)
{
	static const struct native_files none;
	struct native_files files = none;

	files.module = proc_module;
	files.debug = proc_debug;
	files.ctx = p;
	if (p->u) {
		(void)native_unwinder_set_maps(p->u, p->maps ? p->maps : "", p->maps_len);
	} else if ((p->u = native_unwinder_new(p->pid, p->maps ? p->maps : "", p->maps_len, &files))) {
		if (p->vdso)
			(void)native_unwinder_set_vdso(p->u, p->vdso, p->vdso_len);
		if (p->perf_map_fd >= 0)
			(void)native_unwinder_set_perf_map(p->u, p->perf_map_fd);
		close_fd(&p->perf_map_fd);
	}
	free(p->maps);
	p->maps = NULL;
	p->maps_len = 0;
}

static int on_maps(struct hproc *p, struct rbuf *r)
{
	uint32_t pid = rbuf_u32(r);
	uint8_t last = rbuf_u8(r);
	size_t n = rbuf_left(r);
	const void *text = rbuf_bytes(r, n);
	char *grown;

	if (r->err || pid == 0 || pid > (1u << 22) || p->maps_len + n > NATIVE_MAPS_MAX_BYTES)
		return -1;
	if (p->u && pid != (uint32_t)p->pid)
		return -1; /* a key names one process */
	if (!(grown = realloc(p->maps, p->maps_len + n + 1)))
		return -1;
	p->maps = grown;
	if (n)
		memcpy(p->maps + p->maps_len, text, n);
	p->maps_len += n;
	p->pid = (pid_t)pid;
	if (last)
		maps_done(p);
	return 0;
}

static int on_vdso(struct hproc *p, struct rbuf *r)
{
	size_t n = rbuf_left(r);
	const void *image = rbuf_bytes(r, n);

	if (r->err || n == 0 || n > NATIVE_VDSO_MAX_BYTES)
		return -1;
	if (p->u)
		return native_unwinder_set_vdso(p->u, image, n) == 0 ? 0 : -1;
	if (p->vdso)
		return 0;
	if (!(p->vdso = malloc(n)))
		return -1;
	memcpy(p->vdso, image, n);
	p->vdso_len = n;
	return 0;
}

static int on_file(struct hproc *p, struct rbuf *r, int *fd)
{
	size_t n;
	const char *path = rbuf_str(r, &n);
	struct file_entry *v;
	char *copy;

	(void)rbuf_u64(r); /* dev and ino: jsampled's check, kept for a reader of the protocol */
	(void)rbuf_u64(r);
	if (r->err || n == 0 || path[0] != '/' || memchr(path, 0, n) || *fd < 0)
		return -1;
	for (size_t i = 0; i < p->nfiles; i++) {
		if (strlen(p->files[i].path) == n && memcmp(p->files[i].path, path, n) == 0) {
			close(p->files[i].fd); /* a newer file at that path */
			p->files[i].fd = *fd;
			*fd = -1;
			return 0;
		}
	}
	if (p->nfiles >= NATIVE_HELPER_MAX_FILES || !(copy = strndup(path, n)))
		return -1;
	v = realloc(p->files, (p->nfiles + 1) * sizeof(*v));
	if (!v) {
		free(copy);
		return -1;
	}
	p->files = v;
	p->files[p->nfiles++] = (struct file_entry){.path = copy, .fd = *fd};
	*fd = -1;
	return 0;
}

static int on_perf_map(struct hproc *p, int *fd)
{
	if (*fd < 0)
		return -1;
	if (p->u) {
		(void)native_unwinder_set_perf_map(p->u, *fd);
		close_fd(fd);
	} else {
		close_fd(&p->perf_map_fd);
		p->perf_map_fd = *fd;
		*fd = -1;
	}
	return 0;
}

/* --- Walks --- */

/* The walk under way, for the SIGBUS handler. */
static sigjmp_buf walk_jump;
static volatile sig_atomic_t walking;

void native_helper_on_sigbus(void)
{
	if (walking) {
		walking = 0;
		siglongjmp(walk_jump, 1);
	}
}

bool native_helper_worn_out(const struct native_helper *h)
{
	return h->abandoned >= NATIVE_HELPER_MAX_ABANDONED;
}

static void put_list(struct native_unwinder *u, const uint64_t *pcs, int n, struct wbuf *out)
{
	char name[NATIVE_NAME_MAX];

	/* As many names as fit the answer (a list of 64 long names would not). */
	while (n > 0 && out->len + 1 + (size_t)n * (2 + NATIVE_NAME_MAX) > NATIVE_MSG_MAX)
		n--;
	wbuf_u8(out, (uint8_t)n);
	for (int i = 0; i < n; i++)
		wbuf_str(out, native_symbolize(u, pcs[i], name, sizeof(name)));
}

static int on_walk(struct native_helper *h, struct hproc *p, uint32_t key, uint64_t seq, struct rbuf *r,
		   struct wbuf *out)
{
	uint8_t flags = rbuf_u8(r), n_cross = rbuf_u8(r);
	uint64_t stop_lo = rbuf_u64(r), stop_hi = rbuf_u64(r);
	uint64_t cross[NATIVE_CROSS_MAX][3], pcs[NATIVE_LIST_MAX];
	struct js_sample *s;
	uint32_t stack_len;
	const void *stack;
	unsigned lists;

	if (r->err || n_cross > NATIVE_CROSS_MAX)
		return -1;
	for (unsigned i = 0; i < n_cross; i++)
		for (int k = 0; k < 3; k++)
			cross[i][k] = rbuf_u64(r);
	s = (struct js_sample *)h->sample_buf;
	memset(s, 0, sizeof(*s));
	s->pid = p ? (uint32_t)p->pid : 0;
	s->tid = rbuf_u32(r);
	s->flags = rbuf_u32(r);
	for (int i = 0; i < JS_NREGS; i++)
		s->regs[i] = rbuf_u64(r);
	s->stack_addr = rbuf_u64(r);
	stack_len = rbuf_u32(r);
	if (r->err || stack_len > JS_MAX_FRAGMENT_BYTES || !(stack = rbuf_bytes(r, stack_len)) || rbuf_left(r))
		return -1;
	memcpy(s->stack, stack, stack_len);
	s->stack_len = stack_len;

	lists = n_cross + ((flags & NATIVE_WALK_LEAF) ? 1 : 0);
	wbuf_reset(out);
	wbuf_u32(out, NATIVE_MSG_FRAMES);
	wbuf_u32(out, key);
	wbuf_u64(out, seq);
	wbuf_u8(out, 0); /* flags, patched below */
	wbuf_u8(out, (uint8_t)lists);
	if (p && p->failed) {
		out->data[NATIVE_MSG_HEAD] = NATIVE_FRAMES_FAILED;
		for (unsigned i = 0; i < lists; i++)
			wbuf_u8(out, 0);
		return out->oom ? -1 : 0;
	}
	if (sigsetjmp(walk_jump, 1)) {
		/* A file of p was cut short under libdw's mapping of it: its
		 * state is not to be trusted, nor freed. Left as it is. */
		p->u = NULL;
		p->failed = true;
		h->abandoned++;
		wbuf_reset(out);
		wbuf_u32(out, NATIVE_MSG_FRAMES);
		wbuf_u32(out, key);
		wbuf_u64(out, seq);
		wbuf_u8(out, NATIVE_FRAMES_FAILED);
		wbuf_u8(out, (uint8_t)lists);
		for (unsigned i = 0; i < lists; i++)
			wbuf_u8(out, 0);
		return out->oom ? -1 : 0;
	}
	walking = p && p->u;
	for (unsigned i = 0; i < n_cross; i++) {
		int n = p && p->u ? native_unwind_from(p->u, s, cross[i][0], cross[i][1], cross[i][2], stop_lo, stop_hi,
						     pcs, NATIVE_LIST_MAX)
				  : 0;
		put_list(p ? p->u : NULL, pcs, n, out);
	}
	if (flags & NATIVE_WALK_LEAF) {
		int n = p && p->u ? native_unwind(p->u, s, stop_lo, stop_hi, pcs, NATIVE_LIST_MAX) : 0;
		put_list(p ? p->u : NULL, pcs, n, out);
	}
	if (p && native_unwinder_take_unknown(p->u))
		out->data[NATIVE_MSG_HEAD] = NATIVE_FRAMES_UNKNOWN_PC;
	walking = 0;
	return out->oom ? -1 : 0;
}

/* --- The request path --- */

int native_helper_handle(struct native_helper *h, const uint8_t *msg, size_t len, int *fds, unsigned nfds,
			 struct wbuf *out)
{
	struct rbuf r;
	uint32_t type, key;
	uint64_t seq;
	struct hproc *p;
	int fd = nfds ? fds[0] : -1, rc = -1;

	wbuf_reset(out);
	rbuf_init(&r, msg, len);
	type = rbuf_u32(&r);
	key = rbuf_u32(&r);
	seq = rbuf_u64(&r);
	if (r.err || len > NATIVE_MSG_MAX)
		goto out;
	switch (type) {
	case NATIVE_MSG_MAPS:
		rc = (p = find_or_add(h, key)) ? on_maps(p, &r) : -1;
		break;
	case NATIVE_MSG_VDSO:
		rc = (p = find_or_add(h, key)) ? on_vdso(p, &r) : -1;
		break;
	case NATIVE_MSG_FILE:
		rc = (p = find_or_add(h, key)) ? on_file(p, &r, &fd) : -1;
		break;
	case NATIVE_MSG_PERF_MAP:
		rc = (p = find_or_add(h, key)) ? on_perf_map(p, &fd) : -1;
		break;
	case NATIVE_MSG_WALK:
		/* Unknown processes get empty lists: every WALK is answered. */
		rc = on_walk(h, find(h, key), key, seq, &r, out);
		break;
	case NATIVE_MSG_DROP:
		drop(h, key);
		rc = 0;
		break;
	default:
		break;
	}
out:
	if (nfds)
		fds[0] = fd;
	close_all(fds, nfds);
	return rc;
}

struct native_helper *native_helper_new(native_debug_ask_fn ask, void *ask_ctx)
{
	struct native_helper *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->ask = ask;
	h->ask_ctx = ask_ctx;
	u64_map_init(&h->by_key);
	h->sample_buf = aligned_alloc(64, (sizeof(struct js_sample) + JS_MAX_FRAGMENT_BYTES + 63) & ~(size_t)63);
	if (!h->sample_buf) {
		free(h);
		return NULL;
	}
	return h;
}

void native_helper_free(struct native_helper *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->nprocs; i++)
		proc_free(h->procs[i]);
	free(h->procs);
	u64_map_free(&h->by_key);
	free(h->sample_buf);
	free(h);
}
