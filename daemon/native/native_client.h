/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * jsampled's side of the native helper (native_helper.h): starts it in its
 * sandbox, sends it messages (native_protocol.h) without ever blocking on
 * it, matches its answers to the walks they answer, and ends it when an
 * answer is late or wrong. A helper that exits, is killed or breaks the
 * protocol is counted and started again (after 1 s, doubling up to 60 s
 * while it keeps failing); the walks it held are lost to it (on_lost: the
 * oldest one, the walk it was working on, is the one to blame) and fall
 * back to the Java view.
 *
 * The sandbox, set up between fork and exec: its own uid and gid (no
 * supplementary groups), so no capability survives; no_new_privs; not
 * dumpable; only its socket and jsampled's stderr open; RLIMIT_DATA (its
 * heap) and RLIMIT_AS, RLIMIT_CPU, RLIMIT_NOFILE, no core dumps, no child
 * processes; killed with jsampled. It runs at jsampled's own priority: it
 * must keep up with the samples.
 * The helper then adds its seccomp filter itself (native_helper_main.c).
 */
#ifndef JSAMPLED_NATIVE_CLIENT_H
#define JSAMPLED_NATIVE_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "userspace/common/wire.h"

struct native_client_config {
	char helper_path[256];   /* the helper's executable */
	uid_t uid;               /* what it runs as */
	gid_t gid;
	size_t memory_bytes;     /* its heap: RLIMIT_DATA */
	uint64_t deadline_ns;    /* an answer later than this, on which the helper spent half of
				  * it in CPU time, or 15 times as late: it stalled */
	size_t queue_bytes;      /* walks waiting to be sent, at most */
};

struct native_client_hooks {
	/* A walk's answer (the FRAMES message, len bytes, checked: the walk's
	 * own seq). */
	void (*on_frames)(void *ctx, void *walk, const uint8_t *msg, size_t len);
	/* A walk that will get no answer; blamed: the helper died or was late
	 * while working on it. */
	void (*on_lost)(void *ctx, void *walk, bool blamed);
	/* The helper wants the debug files of build ID id of process key:
	 * fds[0] in the process's root, fds[1] ours, -1 each if none. */
	void (*on_want_debug)(void *ctx, uint32_t key, const unsigned char *id, unsigned n, int fds[2]);
	/* A new helper runs: it knows no process yet. */
	void (*on_restart)(void *ctx);
	/* The helper's socket to wait on for events (EPOLLIN, EPOLLOUT), or
	 * fd -1: no more (called before it is closed). */
	void (*watch)(void *ctx, int fd, uint32_t events);
	void *ctx;
};

struct native_client_counters {
	uint64_t starts;       /* helpers started */
	uint64_t exits;        /* ... that exited or were killed */
	uint64_t timeouts;     /* ... killed because an answer was late */
	uint64_t bad_answers;  /* ... ended for an answer out of protocol */
	uint64_t start_failed;
	uint64_t walks;        /* walks sent */
	uint64_t answers;
	uint64_t lost;         /* walks that got no answer (helper gone) */
	uint64_t queue_full;   /* walks not sent: the queue was full or no helper ran */
	uint64_t debug_asks;
	uint64_t bytes_sent;
};

struct native_client;

/* Prepares a client (the helper starts at the first message). NULL if out
 * of memory. */
struct native_client *native_client_new(const struct native_client_config *cfg,
					 const struct native_client_hooks *hooks);
void native_client_free(struct native_client *c);

/* The helper's socket (the watch hook says what to wait for), or -1 while
 * none runs. */
int native_client_fd(const struct native_client *c);
bool native_client_wants_out(const struct native_client *c);
/* Whether a helper runs (started now if none does and its backoff is
 * over). */
bool native_client_ready(struct native_client *c);
/* Which helper incarnation runs (0: none yet): a process it was told about
 * under another incarnation must be told again. */
uint64_t native_client_generation(const struct native_client *c);

/* Queues a message (msg: its bytes, written from NATIVE_MSG_HEAD on; the
 * header is filled in here) with up to two descriptors (taken: closed once
 * sent, or now on failure). walk: the WALK's context for the hooks (NULL
 * for other messages). Starts the helper if none runs. 0, or -1 (a walk:
 * the queue is full or no helper can run; counted, the walk is not the
 * client's). */
int native_client_send(struct native_client *c, uint32_t type, uint32_t key, struct wbuf *msg, int *fds,
		       unsigned nfds, void *walk);

/* The socket is ready (epoll events): reads answers, writes the queue. */
void native_client_on_event(struct native_client *c, uint32_t events);
/* Every second or so: a late answer kills the helper; a dead one is
 * restarted when its backoff is over. */
void native_client_tick(struct native_client *c, uint64_t now_ns);
/* A child was reaped: true if it was the helper. */
bool native_client_child_exited(struct native_client *c, pid_t pid, int status);

/* The cause of the helper's failures is gone (its process gets no more
 * walks): a helper waiting out its backoff starts at the next walk. */
void native_client_forgive(struct native_client *c);

const struct native_client_counters *native_client_counters(const struct native_client *c);
/* The running helper's CPU time so far (0: none runs). */
uint64_t native_client_helper_cpu_ns(const struct native_client *c);
/* Bytes of walks queued and in flight now. */
size_t native_client_queued_bytes(const struct native_client *c);

#endif
