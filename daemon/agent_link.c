#include "agent_link.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../userspace/common/agent_protocol.h"
#include "clock.h"
#include "log.h"
#include "process.h"
#include "sock_io.h"

struct agent_link *agent_link_new(int fd, uint64_t now_ns)
{
	struct agent_link *l = calloc(1, sizeof(*l));
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (!l)
		return NULL;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.pid <= 0) {
		free(l);
		return NULL;
	}
	l->fd = fd;
	l->pid = cred.pid;
	l->uid = cred.uid;
	l->connected_ns = now_ns;
	wbuf_init(&l->out);
	return l;
}

void agent_link_free(struct agent_link *l)
{
	if (!l)
		return;
	if (l->fd >= 0)
		close(l->fd);
	free(l->in);
	wbuf_free(&l->out);
	free(l);
}

static int fail(struct agent_link *l, const char *why)
{
	snprintf(l->why_closed, sizeof(l->why_closed), "%s", why);
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
	char vm_name[64], vm_version[64];

	rbuf_u32(r); /* the agent's idea of its pid: differs inside a pid namespace */
	rbuf_u8(r);
	rbuf_u64(r);
	rbuf_str_copy(r, vm_name, sizeof(vm_name));
	rbuf_str_copy(r, vm_version, sizeof(vm_version));
	if (r->err || magic != JS_AGENT_MAGIC) {
		queue_error(l, "malformed HELLO");
		return fail(l, "malformed HELLO");
	}
	if (version != JS_AGENT_PROTOCOL_VERSION) {
		char why[96];
		snprintf(why, sizeof(why), "protocol version %u not supported (want %u)", version,
			 JS_AGENT_PROTOCOL_VERSION);
		queue_error(l, why);
		return fail(l, why);
	}
	if (l->proc)
		return fail(l, "second HELLO");
	l->proc = h->on_hello(h->ctx, l, vm_name, vm_version);
	if (!l->proc) {
		queue_error(l, "refused");
		return fail(l, "refused by jsampled");
	}
	return agent_link_fetch(l, monotonic_ns());
}

static int handle_batch(struct agent_link *l, const uint8_t *body, size_t len,
			const struct agent_link_hooks *h)
{
	struct batch_info info;

	if (!l->proc)
		return fail(l, "BATCH before HELLO");
	if (h->on_batch(h->ctx, l, body, len, &info) != 0)
		return fail(l, "malformed BATCH");
	l->batches++;
	l->batch_bytes += len;
	log_debug("pid %d: batch of %u records (%zu bytes) up to version %llu%s, %llu ms after the fetch",
		  (int)l->pid, info.count, len, (unsigned long long)info.upto, info.more ? ", more" : "",
		  (unsigned long long)((monotonic_ns() - l->fetch_sent_ns) / 1000000));
	if (info.upto > l->since)
		l->since = info.upto;
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
		char why[96], msg[128];
		rbuf_str_copy(&r, why, sizeof(why));
		snprintf(msg, sizeof(msg), "agent error: %s", why);
		return fail(l, msg);
	}
	default:
		queue_error(l, "unknown message type");
		return fail(l, "unknown message type");
	}
}

int agent_link_on_readable(struct agent_link *l, const struct agent_link_hooks *h)
{
	for (;;) {
		if (l->in_cap - l->in_len < 65536) {
			size_t cap = l->in_cap ? l->in_cap * 2 : 131072;
			uint8_t *p;
			if (cap > JS_AGENT_MAX_MESSAGE + 65536)
				cap = JS_AGENT_MAX_MESSAGE + 65536;
			if (cap <= l->in_cap)
				return fail(l, "input buffer full");
			p = realloc(l->in, cap);
			if (!p)
				return fail(l, "out of memory");
			l->in = p;
			l->in_cap = cap;
		}
		ssize_t n = recv(l->fd, l->in + l->in_len, l->in_cap - l->in_len, 0);
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

		/* Handle every whole message in the buffer. */
		size_t off = 0;
		while (l->in_len - off >= JS_FRAME_HEADER_BYTES) {
			const uint8_t *f = l->in + off;
			uint32_t len = (uint32_t)f[0] | (uint32_t)f[1] << 8 | (uint32_t)f[2] << 16 |
				       (uint32_t)f[3] << 24;
			uint16_t type = (uint16_t)(f[4] | f[5] << 8);

			if (len < 4 || len > JS_AGENT_MAX_MESSAGE) {
				queue_error(l, "bad frame length");
				return fail(l, "bad frame length");
			}
			if (l->in_len - off < 4 + (size_t)len)
				break;
			if (handle_message(l, type, f + JS_FRAME_HEADER_BYTES, len - 4, h) != 0)
				return -1;
			off += 4 + (size_t)len;
		}
		memmove(l->in, l->in + off, l->in_len - off);
		l->in_len -= off;
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
