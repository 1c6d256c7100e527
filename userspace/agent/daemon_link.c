/* SPDX-License-Identifier: GPL-2.0-only */
/* The agent's own thread: connects to jsampled's agent socket (retrying while
 * jsampled is not running), answers FETCH requests with BATCHes from the
 * store, resolves newly seen methods in the background, and compacts the
 * store. Nothing here runs on an application thread; socket I/O never holds
 * the store lock. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "userspace/common/agent_protocol.h"
#include "userspace/common/fd_io.h"
#include "agent.h"

#define IDLE_POLL_MS 100
#define RECONNECT_MIN_MS 500
#define RECONNECT_MAX_MS 10000
#define IO_TIMEOUT_S 10
#define COMPACT_DEAD_THRESHOLD 512
#define MAX_REQUEST_BYTES 4096
#define COMPACT_EVENT_BYTES (1u << 20)
/* Methods resolved before answering a FETCH: a JVM starting up has tens of
 * thousands, and jsampled needs its code map at once; the rest follows in
 * the next batches (marked "more", so jsampled asks again at once). */
#define RESOLVE_PER_FETCH 1500

static int connect_daemon(const char *path)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	struct timeval tv = {.tv_sec = IO_TIMEOUT_S};
	int fd;

	if (strlen(path) >= sizeof(addr.sun_path))
		return -1;
	strcpy(addr.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	/* A stuck jsampled must not hold this thread forever. */
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Frames w (whose first JS_FRAME_HEADER_BYTES were reserved) and sends it. */
static int send_frame(int fd, struct wbuf *w, uint16_t type)
{
	if (w->oom || w->len < JS_FRAME_HEADER_BYTES)
		return -1;
	wbuf_patch_u32(w, 0, (uint32_t)(w->len - 4));
	w->data[4] = (uint8_t)type;
	w->data[5] = (uint8_t)(type >> 8);
	w->data[6] = w->data[7] = 0;
	return sock_send_all(fd, w->data, w->len);
}

static void begin_frame(struct wbuf *w)
{
	wbuf_reset(w);
	wbuf_u64(w, 0); /* header, patched by send_frame */
}

static int send_hello(int fd, struct wbuf *w)
{
	begin_frame(w);
	wbuf_u32(w, JS_AGENT_MAGIC);
	wbuf_u32(w, JS_AGENT_PROTOCOL_VERSION);
	wbuf_u32(w, (uint32_t)getpid());
	wbuf_u8(w, (uint8_t)g_agent.late_attach);
	wbuf_u64(w, g_agent.start_time_ns);
	wbuf_str(w, g_agent.vm_name);
	wbuf_str(w, g_agent.vm_version);
	wbuf_u32(w, JS_AGENT_TAKES_CONFIG);
	return send_frame(fd, w, JS_MSG_HELLO);
}

/* *sent: the last version the batch holds, once it is sent. */
static int send_batch(int fd, struct wbuf *w, uint64_t since, uint32_t max_bytes, int pending, uint64_t *sent)
{
	uint64_t upto;
	int more;
	size_t more_at;

	if (max_bytes > JS_AGENT_MAX_RECORD)
		max_bytes = JS_AGENT_MAX_RECORD;
	if (max_bytes < 4096)
		max_bytes = 4096;
	begin_frame(w);
	wbuf_u64(w, since);
	size_t upto_at = w->len;
	wbuf_u64(w, 0);
	wbuf_u64(w, agent_now_ns()); /* cut time: taken before reading the log */
	more_at = w->len;
	wbuf_u8(w, 0);
	store_write_batch(&g_agent.store, since, max_bytes, w, &upto, &more);
	if (w->oom)
		return -1;
	for (int i = 0; i < 8; i++)
		w->data[upto_at + i] = (uint8_t)(upto >> (8 * i));
	/* Unresolved methods also mean "more": the batch is not complete up
	 * to its cut time yet. */
	w->data[more_at] = (uint8_t)(more || pending);
	if (send_frame(fd, w, JS_MSG_BATCH) != 0)
		return -1;
	*sent = upto;
	return 0;
}

/* Reads and answers one request. Returns -1 when the connection must go. */
/* *sent: the last version sent to jsampled (the push at exit starts after
 * it: an EVENTS record sent twice would count twice). */
static int serve_request(JNIEnv *jni, int fd, struct wbuf *w, uint64_t *sent)
{
	static uint64_t flushed; /* event bytes appended since the last compaction */
	uint8_t hdr[JS_FRAME_HEADER_BYTES], body[MAX_REQUEST_BYTES];
	uint32_t len;
	uint16_t type;
	struct rbuf r;

	if (fd_read_upto(fd, hdr, sizeof(hdr)) != (ssize_t)sizeof(hdr))
		return -1;
	len = (uint32_t)hdr[0] | (uint32_t)hdr[1] << 8 | (uint32_t)hdr[2] << 16 | (uint32_t)hdr[3] << 24;
	type = (uint16_t)(hdr[4] | hdr[5] << 8);
	if (len < 4 || len - 4 > sizeof(body)) {
		agent_log(0, "jsampled sent a malformed frame (length %u); disconnecting", len);
		return -1;
	}
	if (fd_read_upto(fd, body, len - 4) != (ssize_t)(len - 4))
		return -1;
	rbuf_init(&r, body, len - 4);
	switch (type) {
	case JS_MSG_FETCH: {
		uint64_t since = rbuf_u64(&r);
		uint32_t max_bytes = rbuf_u32(&r);

		if (r.err)
			return -1;
		/* Resolve first, so the batch names what its code refers to. */
		size_t pending = resolve_pending_methods(g_agent.jvmti, jni, RESOLVE_PER_FETCH);
		report_unloaded_classes(jni);
		sampled_events_flush(&g_agent.store);
		/* Fetched events are dead weight at once: compact them by bytes. */
		flushed += sampled_events_take_flushed_bytes();
		if (g_agent.store.dead >= COMPACT_DEAD_THRESHOLD || flushed >= COMPACT_EVENT_BYTES) {
			flushed = 0;
			store_compact(&g_agent.store, since); /* jsampled has everything up to since */
		}
		return send_batch(fd, w, since, max_bytes, pending > 0, sent);
	}
	case JS_MSG_CONFIG: {
		uint64_t alloc = rbuf_u64(&r), lock = rbuf_u64(&r);

		if (r.err)
			return -1;
		sampled_events_configure(g_agent.jvmti, jni, alloc, lock);
		return 0;
	}
	case JS_MSG_ERROR: {
		char why[256];
		rbuf_str_copy(&r, why, sizeof(why));
		agent_log(0, "jsampled refused this agent: %s", why);
		return -1;
	}
	default:
		agent_log(0, "jsampled sent unknown message type %u; disconnecting", type);
		return -1;
	}
}

static uint64_t monotonic_ms(void)
{
	return agent_now_ns() / 1000000u;
}

void JNICALL agent_thread_main(jvmtiEnv *jvmti, JNIEnv *jni, void *arg)
{
	struct wbuf w;
	int fd = -1;
	uint64_t next_connect = 0, backoff = RECONNECT_MIN_MS, sent = 0;
	int warned = 0;

	(void)arg;
	wbuf_init(&w);
	while (!atomic_load(&g_agent.shutting_down) && !atomic_load(&g_agent.disabled)) {
		struct pollfd p[2] = {{.fd = g_agent.wake_fd, .events = POLLIN}, {.fd = fd, .events = POLLIN}};

		/* In chunks, so a FETCH waits for one chunk at most. */
		size_t left = resolve_pending_methods(jvmti, jni, RESOLVE_PER_FETCH);
		report_unloaded_classes(jni);
		if (fd < 0 && monotonic_ms() >= next_connect) {
			fd = connect_daemon(g_agent.socket_path);
			if (fd >= 0 && send_hello(fd, &w) != 0) {
				close(fd);
				fd = -1;
			}
			if (fd < 0) {
				if (!warned)
					agent_log(1, "jsampled not reachable at %s; retrying", g_agent.socket_path);
				warned = 1;
				next_connect = monotonic_ms() + backoff;
				backoff = backoff * 2 > RECONNECT_MAX_MS ? RECONNECT_MAX_MS : backoff * 2;
			} else {
				agent_log(1, "connected to jsampled at %s", g_agent.socket_path);
				backoff = RECONNECT_MIN_MS;
				warned = 0;
				sent = 0;
			}
		}
		p[1].fd = fd;
		if (poll(p, fd >= 0 ? 2 : 1, left ? 0 : IDLE_POLL_MS) < 0 && errno != EINTR)
			break;
		if (fd >= 0 && (p[1].revents & (POLLIN | POLLHUP | POLLERR))) {
			if (serve_request(jni, fd, &w, &sent) != 0) {
				agent_log(1, "disconnected from jsampled");
				/* no one to send events to */
				sampled_events_configure(jvmti, jni, 0, 0);
				close(fd);
				fd = -1;
				/* No one is waiting for history now: drop dead code. */
				store_compact(&g_agent.store, UINT64_MAX);
				next_connect = monotonic_ms() + RECONNECT_MIN_MS;
			}
		}
	}
	if (fd >= 0) {
		/* The JVM is exiting: push what jsampled has not fetched yet. */
		sampled_events_flush(&g_agent.store);
		if (send_batch(fd, &w, sent, JS_AGENT_MAX_RECORD, 0, &sent) == 0) {
			begin_frame(&w);
			send_frame(fd, &w, JS_MSG_BYE);
		}
		close(fd);
	}
	wbuf_free(&w);
	if (g_agent.done_fd >= 0)
		eventfd_write(g_agent.done_fd, 1); /* VMDeath may be waiting for this */
}
