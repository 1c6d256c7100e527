/* SPDX-License-Identifier: GPL-2.0-only */
/* The event loop's registrations: every descriptor jsampled waits on is a
 * watch with a kind, so the loop in main.c dispatches on the kind alone.
 * Connections (agents, their pidfds, queries) are kept on one list for the
 * periodic timeouts; the rest (timers, signals, listening sockets) on
 * another. */
#ifndef JSAMPLED_WATCH_H
#define JSAMPLED_WATCH_H

#include <stdbool.h>
#include <stdint.h>

enum watch_kind {
	W_DRAIN_TIMER,
	W_MAINT_TIMER,
	W_SIGNAL,
	W_RINGBUF,
	W_EXEC,
	W_AGENT_LISTEN,
	W_AGENT,
	W_AGENT_PIDFD, /* the process of an agent: readable when it exits */
	W_QUERY_LISTEN,
	W_QUERY,
	W_NATIVE, /* the native helper's socket */
};

struct watch {
	enum watch_kind kind;
	int fd;
	void *obj;
	struct watch *next;
	struct watch *peer;     /* an agent's watch and its pidfd's, each other's */
	uint64_t last_fetch_ns; /* agents: when jsampled last asked for records */
	bool dead;              /* deleted; freed once the current events are handled */
};

struct event_loop {
	int epfd;
	struct watch *connections; /* W_AGENT, W_AGENT_PIDFD, W_QUERY */
	struct watch *fixed;
	struct watch *graveyard;   /* deleted while events naming them may be pending */
};

int loop_init(struct event_loop *l);
/* A non-blocking timerfd that fires every ms milliseconds; -1 on failure. */
int timer_fd_every(unsigned ms);
/* A non-blocking timerfd, not armed yet; -1 on failure. */
int timer_fd_new(void);
/* Arms fd to fire once at due_ns (CLOCK_MONOTONIC; at once if past). */
int timer_fd_at(int fd, uint64_t due_ns);
/* Watches fd (not owned) for events; NULL on failure. */
struct watch *watch_add(struct event_loop *l, enum watch_kind kind, int fd, void *obj, uint32_t events);
void watch_mod(struct event_loop *l, struct watch *w, uint32_t events);
/* Stops watching w (the fd stays open). w stays readable, marked dead,
 * until loop_collect: events already returned by epoll_wait may name it.
 * Call it before closing w's fd: epoll forgets a registration only when
 * every descriptor of the open file is closed, and a forked child (a
 * query's render) holds copies; a DEL on a closed fd number fails, and
 * the registration would go on naming a freed watch. */
void watch_del(struct event_loop *l, struct watch *w);
/* Frees the watches deleted since the last call (after each batch of
 * events). */
void loop_collect(struct event_loop *l);
/* Frees the fixed watches and closes the epoll fd; connections must be
 * gone already. */
void loop_free(struct event_loop *l);

#endif
