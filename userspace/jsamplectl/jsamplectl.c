/*
 * jsamplectl: the command-line client of jsampled's query socket.
 *
 *   jsamplectl [--socket PATH] list
 *   jsamplectl [--socket PATH] cct PID [--format tree|collapsed|json]
 *   jsamplectl [--socket PATH] stats [PID] [--json]
 *   jsamplectl [--socket PATH] sampling on|off      (root: pause/resume all sampling)
 *
 * It sends one request line and prints the body of the answer. Exit status:
 * 0 on OK, 1 when jsampled answered ERROR, 2 on usage errors, 3 when
 * jsampled cannot be reached.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define DEFAULT_SOCKET "/run/jsampled/jsampled.sock"

static void usage(FILE *f)
{
	fprintf(f, "usage: jsamplectl [--socket PATH] list\n"
		   "       jsamplectl [--socket PATH] cct PID [--format tree|collapsed|json]\n"
		   "       jsamplectl [--socket PATH] stats [PID] [--json]\n"
		   "       jsamplectl [--socket PATH] sampling on|off   (root: pause or resume all sampling)\n");
}

static int valid_pid(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);

	return *s && !*end && v > 0 && v <= 0x3fffffff;
}

int main(int argc, char **argv)
{
	static const struct option longs[] = {
		{"socket", required_argument, 0, 's'},
		{"format", required_argument, 0, 'f'},
		{"json", no_argument, 0, 'j'},
		{"help", no_argument, 0, 'h'},
		{0, 0, 0, 0},
	};
	const char *socket_path = getenv("JSAMPLED_SOCKET");
	const char *format = "tree";
	int json = 0, c, fd;
	char request[256];
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	char buf[65536];
	size_t got = 0;
	int status = -1;

	if (!socket_path || !*socket_path)
		socket_path = DEFAULT_SOCKET;
	while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
		switch (c) {
		case 's':
			socket_path = optarg;
			break;
		case 'f':
			format = optarg;
			break;
		case 'j':
			json = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	argc -= optind;
	argv += optind;
	if (argc == 1 && strcmp(argv[0], "list") == 0) {
		snprintf(request, sizeof(request), "list\n");
	} else if (argc == 2 && strcmp(argv[0], "cct") == 0 && valid_pid(argv[1])) {
		if (strcmp(format, "tree") && strcmp(format, "collapsed") && strcmp(format, "json")) {
			fprintf(stderr, "jsamplectl: --format must be tree, collapsed or json\n");
			return 2;
		}
		snprintf(request, sizeof(request), "cct %s %s\n", argv[1], format);
	} else if (argc >= 1 && argc <= 2 && strcmp(argv[0], "stats") == 0 &&
		   (argc == 1 || valid_pid(argv[1]))) {
		snprintf(request, sizeof(request), "stats%s%s%s\n", argc == 2 ? " " : "",
			 argc == 2 ? argv[1] : "", json ? " json" : "");
	} else if (argc == 2 && strcmp(argv[0], "sampling") == 0 &&
		   (strcmp(argv[1], "on") == 0 || strcmp(argv[1], "off") == 0)) {
		snprintf(request, sizeof(request), "sampling %s\n", argv[1]);
	} else {
		usage(stderr);
		return 2;
	}
	if (strlen(socket_path) >= sizeof(addr.sun_path)) {
		fprintf(stderr, "jsamplectl: socket path too long\n");
		return 2;
	}
	strcpy(addr.sun_path, socket_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
		fprintf(stderr, "jsamplectl: cannot reach jsampled at %s: %s\n", socket_path,
			strerror(errno));
		return 3;
	}
	if (send(fd, request, strlen(request), MSG_NOSIGNAL) != (ssize_t)strlen(request)) {
		fprintf(stderr, "jsamplectl: cannot send the request: %s\n", strerror(errno));
		return 3;
	}
	/* The first line is the status; the rest is copied through. */
	for (;;) {
		ssize_t n = read(fd, buf + got, sizeof(buf) - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
		if (status < 0) {
			char *nl = memchr(buf, '\n', got);
			if (!nl && got < sizeof(buf))
				continue;
			if (!nl) {
				fprintf(stderr, "jsamplectl: malformed answer\n");
				return 3;
			}
			*nl = 0;
			if (strcmp(buf, "OK") == 0) {
				status = 0;
			} else {
				fprintf(stderr, "jsamplectl: %s\n",
					strncmp(buf, "ERROR ", 6) == 0 ? buf + 6 : buf);
				status = 1;
			}
			size_t rest = got - (size_t)(nl + 1 - buf);
			memmove(buf, nl + 1, rest);
			got = rest;
		}
		if (status >= 0 && got) {
			fwrite(buf, 1, got, status == 0 ? stdout : stderr);
			got = 0;
		}
	}
	close(fd);
	if (status < 0) {
		fprintf(stderr, "jsamplectl: jsampled closed the connection without an answer\n");
		return 3;
	}
	return status;
}
