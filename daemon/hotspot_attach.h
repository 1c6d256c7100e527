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
 * takes the JVM's effective uid and gid (this also keeps user-namespaced
 * containers working, where our root is not theirs). SIGQUIT is sent only
 * when the JVM catches it (SigCgt), so a JVM still starting or run with -Xrs
 * is never killed by it. */
#ifndef JSAMPLED_HOTSPOT_ATTACH_H
#define JSAMPLED_HOTSPOT_ATTACH_H

#include <sys/types.h>

enum attach_result {
	ATTACH_OK = 0,
	ATTACH_GONE,          /* the process exited */
	ATTACH_NOT_READY,     /* SIGQUIT not caught (yet): starting, or -Xrs */
	ATTACH_CREDENTIALS,   /* cannot take the JVM's uid/gid */
	ATTACH_NO_TMP,        /* the JVM's /tmp is unusable (missing, a symlink) */
	ATTACH_TRIGGER,       /* cannot create .attach_pid */
	ATTACH_SIGNAL,        /* kill(SIGQUIT) failed */
	ATTACH_NO_LISTENER,   /* no .java_pid socket in time (DisableAttachMechanism?) */
	ATTACH_CONNECT,       /* the listener refused the connection */
	ATTACH_PROTOCOL,      /* unreadable reply */
	ATTACH_LOAD_FAILED,   /* the JVM could not load the library */
	ATTACH_AGENT_FAILED,  /* Agent_OnAttach returned an error */
	ATTACH_TIMEOUT,       /* the whole exchange took too long */
	ATTACH_CRASHED,       /* the attach child died otherwise */
	ATTACH_RESULT_COUNT
};

const char *attach_result_name(int r);

/* Forks a child that attaches agent_path (a path valid in the JVM's own
 * mount namespace) with options to pid. Returns the child's pid, or -1. */
pid_t hotspot_attach_start(pid_t pid, const char *agent_path, const char *options);

/* The outcome, from the child's waitpid status. */
enum attach_result hotspot_attach_result(int wait_status);

/* The attach itself, as the child runs it (exported for tests). */
enum attach_result hotspot_attach_run(pid_t pid, const char *agent_path, const char *options);

#endif
