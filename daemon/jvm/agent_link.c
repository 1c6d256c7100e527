/* SPDX-License-Identifier: GPL-2.0-only */
#include "agent_link.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "userspace/common/agent_protocol.h"
#include "daemon/support/clock.h"
#include "daemon/support/log.h"
#include "daemon/process/process.h"
#include "userspace/profile/safe_text.h"
#include "daemon/service/sock_io.h"

struct agent_link *agent_link_new(int fd, uint64_t now_ns)
{
	struct agent_link *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	if (peer_identity_from_socket(fd, &l->peer) != 0) {
		free(l);
		return NULL;
	}
	l->fd = fd;
	l->connected_ns = now_ns;
	l->peer_checked_ns = now_ns; /* agents connect at different times: their checks spread */
	wbuf_init(&l->out);
	return l;
}

void agent_link_free(struct agent_link *l)
{
	if (!l)
		return;
	if (l->fd >= 0)
		close(l->fd);
	peer_identity_close(&l->peer);
	free(l->in);
	wbuf_free(&l->out);
	free(l);
}

void agent_link_close_reason(struct agent_link *l, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(l->why_closed, sizeof(l->why_closed), fmt, ap);
	va_end(ap);
}

static int fail(struct agent_link *l, const char *why)
{
	agent_link_close_reason(l, "%s", why);
	return -1;
}

static void queue_frame(struct agent_link *l, uint16_t type, const struct wbuf *payload)
{
	size_t len = 4 + (payload ? payload->len : 0);

	wbuf_u32(&l->out, (uint32_t)len);
	wbuf_u16(&l->out, type);
	wbuf_u16(&l->out, 0);
	if (payload)
		wbuf_put(&l->out, payload->data, payload->len);
}

static void queue_error(struct agent_link *l, const char *why)
{
	struct wbuf w;

	wbuf_init(&w);
	wbuf_str(&w, why);
	queue_frame(l, JS_MSG_ERROR, &w);
	wbuf_free(&w);
	agent_link_flush(l);
}

int agent_link_configure(struct agent_link *l, uint64_t alloc_interval, uint64_t lock_interval)
{
	struct wbuf w;

	if (!(l->features & JS_AGENT_TAKES_CONFIG))
		return 0;
	wbuf_init(&w);
	wbuf_u64(&w, alloc_interval);
	wbuf_u64(&w, lock_interval);
	queue_frame(l, JS_MSG_CONFIG, &w);
	wbuf_free(&w);
	return agent_link_flush(l);
}

int agent_link_fetch(struct agent_link *l, uint64_t now_ns)
{
	struct wbuf w;

	if (!l->proc || l->fetch_in_flight)
		return 0;
	wbuf_init(&w);
	wbuf_u64(&w, l->since);
	wbuf_u32(&w, JS_AGENT_BATCH_BYTES);
	queue_frame(l, JS_MSG_FETCH, &w);
	wbuf_free(&w);
	l->fetch_in_flight = true;
	l->fetch_sent_ns = now_ns;
	return agent_link_flush(l);
}

static int handle_hello(struct agent_link *l, struct rbuf *r, const struct agent_link_hooks *h)
{
	uint32_t magic = rbuf_u32(r), version = rbuf_u32(r);
	char vm_name[64], vm_version[64], why[128];

	rbuf_u32(r); /* the agent's idea of its pid: differs inside a pid namespace */
	rbuf_u8(r);
	rbuf_u64(r);
	rbuf_str_copy(r, vm_name, sizeof(vm_name));
	rbuf_str_copy(r, vm_version, sizeof(vm_version));
	l->features = rbuf_left(r) >= 4 ? rbuf_u32(r) : 0;
	if (r->err || magic != JS_AGENT_MAGIC) {
		queue_error(l, "malformed HELLO");
		return fail(l, "malformed HELLO");
	}
	if (version != JS_AGENT_PROTOCOL_VERSION) {
		snprintf(why, sizeof(why), "protocol version %u not supported (want %u)", version,
			 JS_AGENT_PROTOCOL_VERSION);
		queue_error(l, why);
		return fail(l, why);
	}
	if (l->proc)
		return fail(l, "second HELLO");
	safe_text_inplace(vm_name, sizeof(vm_name));
	safe_text_inplace(vm_version, sizeof(vm_version));
	if (peer_identity_pin(&l->peer, why, sizeof(why)) != 0)
		return fail(l, why);
	why[0] = 0;
	l->proc = h->on_hello(h->ctx, l, vm_name, vm_version, why, sizeof(why));
	if (!l->proc) {
		queue_error(l, "refused");
		return fail(l, why[0] ? why : "refused by jsampled");
	}
	if (h->config) {
		uint64_t alloc = 0, lock = 0;
		h->config(h->ctx, &alloc, &lock);
		if (agent_link_configure(l, alloc, lock) != 0)
			return -1;
	}
	return agent_link_fetch(l, monotonic_ns());
}

static int handle_batch(struct agent_link *l, const uint8_t *body, size_t len, const struct agent_link_hooks *h)
{
	struct batch_info info;
	char why[128] = "";

	if (h->on_batch(h->ctx, l, body, len, &info, why, sizeof(why)) != 0)
		return fail(l, why[0] ? why : "malformed BATCH");
	l->batches++;
	l->batch_bytes += len;
	log_debug("pid %d: batch of %u records (%zu bytes) up to version %llu%s, %llu ms after the fetch",
		  (int)l->peer.pid, info.count, len, (unsigned long long)info.upto, info.more ? ", more" : "",
		  (unsigned long long)((monotonic_ns() - l->fetch_sent_ns) / 1000000));
	if (info.upto > l->since)
		l->since = info.upto;
	if (info.count)
		l->quiet_batches = 0;
	else if (l->quiet_batches < UINT32_MAX)
		l->quiet_batches++;
	l->fetch_in_flight = false;
	if (info.more)
		return agent_link_fetch(l, monotonic_ns());
	return 0;
}

static int handle_message(struct agent_link *l, uint16_t type, const uint8_t *body, size_t len,
			  const struct agent_link_hooks *h)
{
	struct rbuf r;

	rbuf_init(&r, body, len);
	if (!l->proc && type != JS_MSG_HELLO)
		return fail(l, "message before HELLO");
	switch (type) {
	case JS_MSG_HELLO:
		return handle_hello(l, &r, h);
	case JS_MSG_BATCH:
		return handle_batch(l, body, len, h);
	case JS_MSG_BYE:
		l->said_bye = true;
		return fail(l, "the JVM is exiting");
	case JS_MSG_ERROR: {
		char why[96];
		rbuf_str_copy(&r, why, sizeof(why));
		safe_text_inplace(why, sizeof(why));
		agent_link_close_reason(l, "agent error: %s", why);
		return -1;
	}
	default:
		queue_error(l, "unknown message type");
		return fail(l, "unknown message type");
	}
}

/* The largest frame the link accepts now. */
static size_t frame_limit(const struct agent_link *l)
{
	return l->proc ? JS_AGENT_MAX_MESSAGE : AGENT_LINK_HELLO_MAX;
}

int agent_link_take_frames(struct agent_link *l, const struct agent_link_hooks *h)
{
	size_t off = 0;
	int r = 0;

	while (l->in_len - off >= JS_FRAME_HEADER_BYTES) {
		const uint8_t *f = l->in + off;
		uint32_t len = (uint32_t)f[0] | (uint32_t)f[1] << 8 | (uint32_t)f[2] << 16 | (uint32_t)f[3] << 24;
		uint16_t type = (uint16_t)(f[4] | f[5] << 8);

		if (len < 4 || len > frame_limit(l)) {
			queue_error(l, "bad frame length");
			r = fail(l, len >= 4 && !l->proc ? "frame too long before HELLO" : "bad frame length");
			break;
		}
		if (l->in_len - off < 4 + (size_t)len)
			break;
		if (handle_message(l, type, f + JS_FRAME_HEADER_BYTES, len - 4, h) != 0) {
			r = -1;
			break;
		}
		off += 4 + (size_t)len;
	}
	memmove(l->in, l->in + off, l->in_len - off);
	l->in_len -= off;
	return r;
}

/* Room to read into: the buffer grows towards what the next frame may
 * need, never past the frame limit (small until HELLO). */
static int make_room(struct agent_link *l)
{
	size_t limit = frame_limit(l) + JS_FRAME_HEADER_BYTES, cap;
	uint8_t *p;

	if (l->in_cap - l->in_len >= 4096 || (l->in_cap >= limit && l->in_len < l->in_cap))
		return 0;
	cap = l->in_cap ? l->in_cap * 2 : 8192;
	if (cap > limit)
		cap = limit;
	if (cap <= l->in_cap)
		return l->in_len < l->in_cap ? 0 : fail(l, "input buffer full");
	p = realloc(l->in, cap);
	if (!p)
		return fail(l, "out of memory");
	l->in = p;
	l->in_cap = cap;
	return 0;
}

int agent_link_on_readable(struct agent_link *l, const struct agent_link_hooks *h)
{
	for (;;) {
		ssize_t n;

		if (make_room(l) != 0)
			return -1;
		n = recv(l->fd, l->in + l->in_len, l->in_cap - l->in_len, 0);
		if (n == 0)
			return fail(l, l->proc ? "the agent closed the connection" : "closed before HELLO");
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			return fail(l, strerror(errno));
		}
		l->in_len += (size_t)n;
		if (agent_link_take_frames(l, h) != 0)
			return -1;
	}
	/* A JVM's first batches are megabytes, the later ones kilobytes:
	 * the room the big ones took goes back once they are read. */
	if (!l->in_len && l->in_cap > 64 * 1024) {
		free(l->in);
		l->in = NULL;
		l->in_cap = 0;
	}
	return 0;
}

bool agent_link_wants_write(const struct agent_link *l)
{
	return l->out_off < l->out.len;
}

int agent_link_flush(struct agent_link *l)
{
	int r;

	if (l->out.oom)
		return fail(l, "out of memory");
	r = send_pending(l->fd, &l->out, &l->out_off);
	if (r < 0)
		return fail(l, strerror(errno));
	if (r > 0) {
		wbuf_reset(&l->out);
		l->out_off = 0;
	}
	return 0;
}
