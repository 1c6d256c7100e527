/* Making jsampled reachable from inside a JVM's own root (a container: other
 * mount namespace): the agent library must be loadable at a path the JVM
 * sees, and the agent must find a socket to connect to. When our files are
 * visible there (same inode at the same path, as on the host), they are used
 * as they are; otherwise the library is copied into, and a listening socket
 * made in, <the JVM's root>/tmp/.jsampled/, a directory owned by root and
 * writable only by it, opened without following links planted inside the
 * container. */
#ifndef JSAMPLED_TARGET_ROOT_H
#define JSAMPLED_TARGET_ROOT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define TARGET_DIR "/tmp/.jsampled"

/* Whether path names the same file inside pid's root as in ours. */
bool target_sees_same(pid_t pid, const char *path);

/* The agent library's path as pid sees it, copying it into its root when
 * needed. 0, or -1 with why set. */
int target_agent_path(pid_t pid, const char *agent_path, char *out, size_t outlen, char *why, size_t whylen);

/* A listening socket at TARGET_DIR/agent.sock in pid's root. Returns the fd
 * (non-blocking), or -1 with why set. */
int target_listen(pid_t pid, char *why, size_t whylen);

#endif
