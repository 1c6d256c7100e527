/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * jsampled's side of one agent connection (agent_protocol.h). The link is
 * non-blocking and driven by the event loop: it frames input, validates the
 * HELLO against the peer's identity (SO_PEERCRED and a pidfd: the kernel's
 * word, never the agent's), and pulls the agent's records with FETCH
 * whenever its process needs them. Until HELLO a connection may send only a
 * small frame; anything malformed closes the link with a logged reason.
 */
#ifndef JSAMPLED_AGENT_LINK_H
#define JSAMPLED_AGENT_LINK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "userspace/common/wire.h"
#include "peer_identity.h"

struct process;
struct process_table;
struct batch_info;

/* Largest frame before HELLO (a HELLO is a few dozen bytes). */
#define AGENT_LINK_HELLO_MAX 4096

struct agent_link {
	int fd;
	struct peer_identity peer; /* the process on the other end */
	uint64_t connected_ns;
	struct process *proc; /* after HELLO */
	uint8_t *in;
	size_t in_len, in_cap;
	struct wbuf out;
	size_t out_off;
	uint64_t since;         /* next FETCH asks for records after this version */
	bool fetch_in_flight;
	uint64_t fetch_sent_ns;
	uint64_t peer_checked_ns; /* its program and user last compared (agents_maintain) */
	uint64_t batches, batch_bytes;
	uint32_t quiet_batches; /* answers in a row that brought no record (agent_conns.c) */
	bool said_bye; /* the JVM announced its exit (VMDeath) */
	uint32_t features; /* its HELLO's (enum js_agent_features) */
	bool counted_pending; /* counts against its user's pending connections */
	char why_closed[160];
};

/* What the link asks of the rest of the daemon. */
struct agent_link_hooks {
	void *ctx;
	/* A verified agent said HELLO: return its (new) process, or NULL with
	 * why set to refuse it. */
	struct process *(*on_hello)(void *ctx, struct agent_link *l, const char *vm_name, const char *vm_version,
				    char *why, size_t whylen);
	/* A BATCH arrived for the link's process: apply it (filling info).
	 * Non-zero if it is malformed or over a limit (why says which). */
	int (*on_batch)(void *ctx, struct agent_link *l, const void *payload, size_t len, struct batch_info *info,
			char *why, size_t whylen);
	/* What the agent is to sample (CONFIG): intervals, 0 for off. NULL:
	 * nothing is sent. */
	void (*config)(void *ctx, uint64_t *alloc_interval, uint64_t *lock_interval);
};

/* Takes ownership of fd (accepted, non-blocking); reads the peer's
 * identity. NULL if it cannot be had. */
struct agent_link *agent_link_new(int fd, uint64_t now_ns);
void agent_link_free(struct agent_link *l);

/* Reads what is available and handles whole messages. Returns -1 when the
 * link must close (why_closed says why). */
int agent_link_on_readable(struct agent_link *l, const struct agent_link_hooks *h);
/* Handles the whole messages already in l->in (the framing and message
 * layer without the socket: agent_link_on_readable after each read, and
 * the fuzzer). -1 when the link must close. */
int agent_link_take_frames(struct agent_link *l, const struct agent_link_hooks *h);
/* Flushes pending output; -1 on error. */
int agent_link_flush(struct agent_link *l);
bool agent_link_wants_write(const struct agent_link *l);
/* Queues a CONFIG (if the agent takes one) and flushes; -1 on error. */
int agent_link_configure(struct agent_link *l, uint64_t alloc_interval, uint64_t lock_interval);
/* Queues a FETCH for everything after the last version received. */
int agent_link_fetch(struct agent_link *l, uint64_t now_ns);
/* Sets why_closed (printf-style). */
void agent_link_close_reason(struct agent_link *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
