/* SPDX-License-Identifier: GPL-2.0-only */
/* HotSpot's dynamic attach protocol, spoken by us (the JDK's own client is
 * Java: sun.tools.attach.VirtualMachineImpl in jdk.attach):
 *   1. create /tmp/.attach_pid<pid> (pid as the JVM sees it, in its own pid
 *      namespace; /tmp of its own root), then send SIGQUIT: the JVM's signal
 *      dispatcher sees the file and starts its attach listener instead of
 *      printing a thread dump;
 *   2. connect to the listener's socket /tmp/.java_pid<pid>, send
 *      "1\0load\0<agent path>\0true\0<options>\0" (protocol 1, absolute path);
 *   3. read "<status>\n" (0: the operation ran) and the agent's
 *      Agent_OnAttach return code.
 * The JVM accepts only peers with its own euid/egid or root, and only
 * trigger files owned by them, so the work runs in a child process that
 * takes the JVM's effective uid and gid and drops every capability (this
 * also keeps user-namespaced containers working, where our root is not
 * theirs). The target is pinned before the fork: a pidfd of the JVM
 * instance (SIGQUIT goes through it, so never to a reused pid) and a
 * descriptor of its /tmp resolved inside its root without links; the child
 * only works relative to those. The listener is trusted only if it is a
 * socket owned by the JVM's user and the peer on the other end is the JVM
 * itself (SO_PEERCRED). SIGQUIT is sent only when the JVM catches it
 * (SigCgt), so a JVM still starting or run with -Xrs is never killed by
 * it. The parent enforces the deadline (the child runs as the JVM's user,
 * who may stop it). */
#ifndef JSAMPLED_HOTSPOT_ATTACH_H
#define JSAMPLED_HOTSPOT_ATTACH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum attach_result {
	ATTACH_OK = 0,
	ATTACH_GONE,          /* the process exited (or its pid names another now) */
	ATTACH_NOT_READY,     /* SIGQUIT not caught (yet): starting, or -Xrs */
	ATTACH_CREDENTIALS,   /* cannot take the JVM's uid/gid */
	ATTACH_NO_TMP,        /* the JVM's /tmp is unusable (missing, a symlink) */
	ATTACH_TRIGGER,       /* cannot create .attach_pid */
	ATTACH_SIGNAL,        /* SIGQUIT could not be sent */
	ATTACH_NO_LISTENER,   /* no .java_pid socket in time (DisableAttachMechanism?) */
	ATTACH_CONNECT,       /* the listener refused the connection */
	ATTACH_NOT_THE_JVM,   /* .java_pid is not the JVM's own socket (a link, another owner or peer) */
	ATTACH_PROTOCOL,      /* unreadable reply */
	ATTACH_LOAD_FAILED,   /* the JVM could not load the library */
	ATTACH_AGENT_FAILED,  /* Agent_OnAttach returned an error */
	ATTACH_TIMEOUT,       /* the exchange passed its deadline (the child was killed) */
	ATTACH_CRASHED,       /* the attach child died otherwise */
	ATTACH_NOT_LIVE,      /* the JVM takes agents only in its live phase (JDK 25), not yet there */
	ATTACH_RESULT_COUNT
};

const char *attach_result_name(int r);

/* The JVM instance an attach works on. */
struct attach_target {
	pid_t pid;
	int pidfd; /* the instance: signals go through it */
	int tmpfd; /* its /tmp (O_PATH), resolved inside its root */
};

/* Pins pid (start_time from /proc/<pid>/stat, to tell a reused pid): fills
 * t, or returns ATTACH_GONE / ATTACH_NO_TMP with t closed. */
enum attach_result attach_target_open(pid_t pid, uint64_t start_time, struct attach_target *t);
void attach_target_close(struct attach_target *t);

/* Forks a child that attaches agent_path (a path valid in the JVM's own
 * mount namespace) with options. Returns the child's pid, or -1. The
 * caller keeps t (the child has its own copies of the descriptors). When
 * the JVM refuses the library or the agent fails, the child writes the
 * JVM's words (hotspot_reply_text) to report_fd (-1: nowhere). */
pid_t hotspot_attach_start(const struct attach_target *t, const char *agent_path, const char *options, int report_fd);

/* The outcome, from the child's waitpid status. */
enum attach_result hotspot_attach_result(int wait_status);

/* The attach itself, as the child runs it (exported for tests). */
enum attach_result hotspot_attach_run(const struct attach_target *t, const char *agent_path, const char *options,
				      int report_fd);

/* What the JVM said after a reply's status line ("libjsagent.so was not
 * loaded.; ...: version `GLIBC_2.34' not found"), lines joined with "; ",
 * printable ASCII only, cut to outlen - 1. Returns its length. */
#define ATTACH_REPORT_MAX 240
size_t hotspot_reply_text(const char *buf, size_t len, char *out, size_t outlen);

/* Interprets a listener's whole reply to "load". */
enum attach_result hotspot_parse_reply(const char *buf, size_t len);

#endif
