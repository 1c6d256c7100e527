/* SPDX-License-Identifier: GPL-2.0-only */
/* Making jsampled reachable from inside a JVM's own root (a container: other
 * mount namespace): the agent library must be loadable at a path the JVM
 * sees, and the agent must find a socket to connect to. When our files are
 * visible there (same inode at the same path, as on the host), they are used
 * as they are; otherwise the library is copied into, and a listening socket
 * made in, <the JVM's root>/tmp/.jsampled/.
 *
 * A container's root user may own every file there (without a user
 * namespace it is uid 0, like us), so ownership checks prove nothing about
 * who made a file. What holds instead: every path inside the container is
 * resolved with openat2(RESOLVE_IN_ROOT or RESOLVE_BENEATH, and never
 * through a symlink or a magic link), every change is made through a
 * descriptor from such a resolution or on a name that cannot be a link, and
 * the socket is created with its final mode (no chmod that could follow a
 * link swapped in). No name can lead outside the container. */
#ifndef JSAMPLED_TARGET_ROOT_H
#define JSAMPLED_TARGET_ROOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define TARGET_DIR "/tmp/.jsampled"
#define TARGET_SOCKET_NAME "agent.sock"

/* openat2 with O_CLOEXEC: name resolved under dirfd, no symlinks, no magic
 * links; in_root: ".." and absolute paths stay in dirfd (else they fail). */
int openat_confined(int dirfd, const char *name, int flags, bool in_root);

/* pid's /tmp as an O_PATH directory descriptor, resolved inside pid's root
 * without following links. -1 with errno. */
int target_tmp_open(pid_t pid);

/* Whether path names the same file inside pid's root as in ours. */
bool target_sees_same(pid_t pid, const char *path);

/* The agent library's path as pid sees it, copying it into its root when
 * needed. A copy already there is reused only if it is a regular file of
 * ours, with one link, not writable by others, and byte for byte the
 * agent. 0, or -1 with why set. */
int target_agent_path(pid_t pid, const char *agent_path, char *out, size_t outlen, char *why, size_t whylen);

/* A socket made by target_listen: its fd and the identity of its file. */
struct target_socket {
	int fd;
	uint64_t dev, ino;
};

/* A listening socket at TARGET_DIR/agent.sock in pid's root, mode 0666
 * from its creation. 0, or -1 with why set. */
int target_listen(pid_t pid, struct target_socket *out, char *why, size_t whylen);

/* Whether pid's root still has the socket ts made (same file). */
bool target_socket_present(pid_t pid, const struct target_socket *ts);

/* Removes the socket's file from pid's root, if it is still ours. */
void target_socket_unlink(pid_t pid, const struct target_socket *ts);

#endif
