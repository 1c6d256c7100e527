/* SPDX-License-Identifier: GPL-2.0-only */
/* Which process instance is on the other end of an agent connection, and
 * whether it still is the program that connected. An agent is trusted only
 * for its own process (SO_PEERCRED, never its word), and only as long as
 * that process is the same instance running the same program: a pid is
 * reused after an exit, and a process may exec another program (a setuid
 * one, say) while a forked helper keeps the connection. The identity is
 * pinned at HELLO (a pidfd of the peer, its start time, effective uid and
 * executable) and checked again by the event loop. */
#ifndef JSAMPLED_PEER_IDENTITY_H
#define JSAMPLED_PEER_IDENTITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct peer_identity {
	pid_t pid;  /* SO_PEERCRED, in our pid namespace */
	uid_t uid;  /* effective uid at connect */
	int pidfd;  /* the peer process instance (SO_PEERPIDFD, else pidfd_open) */
	uint64_t start_time; /* /proc/<pid>/stat field 22 */
	uint64_t exe_dev, exe_ino; /* its executable */
};

enum peer_state {
	PEER_SAME,    /* the instance that connected, same program and user */
	PEER_EXITED,  /* gone (its pid may name another process now) */
	PEER_CHANGED, /* exec'd another program or changed its effective uid */
};

/* From an accepted socket: SO_PEERCRED and a pidfd of the peer. 0 or -1. */
int peer_identity_from_socket(int fd, struct peer_identity *id);
/* Reads what the identity is checked against later (start time, program);
 * 0, or -1 with why if the peer is already gone. */
int peer_identity_pin(struct peer_identity *id, char *why, size_t whylen);
/* Compares the peer with what was pinned (three reads of /proc). */
enum peer_state peer_identity_check(const struct peer_identity *id);
/* Whether the instance still runs: a poll of its pidfd, no /proc read. */
bool peer_identity_running(const struct peer_identity *id);
void peer_identity_close(struct peer_identity *id);

#endif
