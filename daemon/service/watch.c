/* SPDX-License-Identifier: GPL-2.0-only */
#include "watch.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "daemon/support/log.h"

int loop_init(struct event_loop *l)
{
	l->connections = l->fixed = l->graveyard = NULL;
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	return l->epfd >= 0 ? 0 : -1;
}

int timer_fd_new(void)
{
	return timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
}

int timer_fd_every(unsigned ms)
{
	struct itimerspec its = {
		.it_interval = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000},
		.it_value = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000},
	};
	int fd = timer_fd_new();

	if (fd >= 0 && timerfd_settime(fd, 0, &its, NULL) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

int timer_fd_at(int fd, uint64_t due_ns)
{
	/* An it_value of zero would disarm it: the epoch's first nanosecond
	 * is as past as any. */
	struct itimerspec its = {
		.it_value = {.tv_sec = (time_t)(due_ns / 1000000000u), .tv_nsec = (long)(due_ns % 1000000000u)},
	};

	if (due_ns == 0)
		its.it_value.tv_nsec = 1;
	return timerfd_settime(fd, TFD_TIMER_ABSTIME, &its, NULL);
}

static bool is_connection(enum watch_kind k)
{
	return k == W_AGENT || k == W_AGENT_PIDFD || k == W_QUERY;
}

struct watch *watch_add(struct event_loop *l, enum watch_kind kind, int fd, void *obj, uint32_t events)
{
	struct watch *w = calloc(1, sizeof(*w));
	struct epoll_event ev = {.events = events};

	if (!w)
		return NULL;
	w->kind = kind;
	w->fd = fd;
	w->obj = obj;
	ev.data.ptr = w;
	if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
		free(w);
		return NULL;
	}
	if (is_connection(kind)) {
		w->next = l->connections;
		l->connections = w;
	} else {
		w->next = l->fixed;
		l->fixed = w;
	}
	return w;
}

void watch_mod(struct event_loop *l, struct watch *w, uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.ptr = w};

	epoll_ctl(l->epfd, EPOLL_CTL_MOD, w->fd, &ev);
}

void watch_del(struct event_loop *l, struct watch *w)
{
	struct watch **pp;

	if (epoll_ctl(l->epfd, EPOLL_CTL_DEL, w->fd, NULL) != 0)
		log_err("watch of fd %d (kind %d) not removed: %s", w->fd, (int)w->kind, strerror(errno));
	for (pp = is_connection(w->kind) ? &l->connections : &l->fixed; *pp; pp = &(*pp)->next)
		if (*pp == w) {
			*pp = w->next;
			break;
		}
	w->dead = true;
	w->next = l->graveyard;
	l->graveyard = w;
}

void loop_collect(struct event_loop *l)
{
	while (l->graveyard) {
		struct watch *w = l->graveyard;
		l->graveyard = w->next;
		free(w);
	}
}

void loop_free(struct event_loop *l)
{
	loop_collect(l);
	while (l->fixed) {
		struct watch *w = l->fixed;
		l->fixed = w->next;
		free(w);
	}
	if (l->epfd >= 0)
		close(l->epfd);
	l->epfd = -1;
}
