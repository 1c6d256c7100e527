/* Whether a process's program is a Java launcher (java, javac, jshell, a
 * jpackage launcher...): an ELF executable that links libjli.so or
 * libjvm.so. Read through /proc/PID/exe, so it works for programs in
 * containers too; answers are cached per file (device, inode, size, mtime),
 * since the same few programs are exec'd over and over. */
#ifndef JSAMPLED_JAVA_LAUNCHER_H
#define JSAMPLED_JAVA_LAUNCHER_H

#include <sys/types.h>

/* 1 if pid's program links the JVM's launcher library or the JVM itself,
 * 0 if not, -1 if it cannot be read (gone, not ELF). */
int java_launcher_check(pid_t pid);
/* The same for an open file (read, not mapped). */
int java_launcher_file(int fd);

#endif
