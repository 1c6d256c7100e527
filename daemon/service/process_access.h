/* SPDX-License-Identifier: GPL-2.0-only */
/* Who may read a process's profile, as the kernel decides who may read its
 * memory (ptrace's PTRACE_MODE_READ_FSCREDS): root, or a requester whose
 * filesystem uid and gid equal the target's real, effective and saved
 * uids and gids, of a dumpable target (not setuid or setgid, not made
 * undumpable), in the requester's own user namespace, whose permitted
 * capabilities are a subset of the requester's. ssh-agent (setgid) or
 * an sshd session process of the same user fail it, as they fail ptrace
 * and perf. */
#ifndef JSAMPLED_PROCESS_ACCESS_H
#define JSAMPLED_PROCESS_ACCESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct proc_creds {
	uid_t uid[4];     /* real, effective, saved, filesystem */
	gid_t gid[4];
	uint64_t cap_prm; /* permitted capabilities */
	uint64_t userns;  /* inode of /proc/PID/ns/user, 0 if unknown */
	bool dumpable;    /* /proc/PID belongs to its effective uid (the kernel gives it to root otherwise) */
	uint64_t start_time;
	uint64_t exe_dev, exe_ino;
};

/* Reads pid's credentials. 0, or -1 if it is gone or unreadable. */
int proc_creds_read(pid_t pid, struct proc_creds *c);
/* The Uid:, Gid: and CapPrm: lines of a /proc/PID/status text. 0, or -1
 * if one is missing. */
int proc_creds_parse_status(const char *status, struct proc_creds *c);

/* The credentials of the process at the other end of a Unix socket (as
 * it is now; SO_PEERPIDFD ties the reading to the process that connected).
 * 0, or -1 if it is gone. */
int proc_creds_of_peer(int sockfd, struct proc_creds *c);

/* Whether requester may read target (see above); why says what fails. */
bool proc_may_read(const struct proc_creds *requester, const struct proc_creds *target, char *why, size_t whylen);
/* Whether a process's own user may read it: target's effective ids as
 * the requester, in its namespace, with its capabilities. */
bool proc_owner_may_read(const struct proc_creds *target);
/* Whether pid still is the process (instance, program and credentials)
 * that creds describe. */
bool proc_creds_unchanged(pid_t pid, const struct proc_creds *creds);

#endif
