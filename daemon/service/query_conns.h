/* SPDX-License-Identifier: GPL-2.0-only */
/* The query connections of the event loop. A user other than root may
 * hold only so many open at once (a flood of idle connections from one user
 * leaves the others served). Short answers are written from the loop; a
 * CCT is rendered by a forked child (a copy-on-write snapshot of the tree,
 * streamed to the client), so a large tree never stalls sampling, at most
 * a few at once, and killed past a deadline. */
#ifndef JSAMPLED_QUERY_CONNS_H
#define JSAMPLED_QUERY_CONNS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct daemon;
struct watch;

void queries_accept(struct daemon *d, int listen_fd);
void queries_on_event(struct daemon *d, struct watch *w, uint32_t events);
/* Periodic: request timeouts, waiting renders started, stuck ones killed. */
void queries_maintain(struct daemon *d, uint64_t now);
/* A child exited: true if it was a render (then it is accounted for). */
bool queries_child_exited(struct daemon *d, pid_t pid, int status);
void queries_close_all(struct daemon *d);

#endif
