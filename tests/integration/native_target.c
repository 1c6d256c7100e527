/* SPDX-License-Identifier: GPL-2.0-only */
/* A native program for test_hostile.sh: loads a (crafted) library, calls
 * FUNCTION in it over and over for SECONDS, so that samples of it land in
 * that library and jsampled's helper must read it. With "flap" it also
 * truncates the library's file under itself and restores it, over and
 * over: whoever maps the file while it is long may find it short.
 * Usage: native_target LIBRARY FUNCTION SECONDS [flap] */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *lib_path;
static char *lib_bytes;
static size_t lib_len;
static volatile int stop;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Its first 8 KiB (headers and code) stay; the rest comes and goes. */
static void *flap(void *arg)
{
	int fd = open(lib_path, O_WRONLY);

	(void)arg;
	while (fd >= 0 && !stop) {
		if (ftruncate(fd, 8192) != 0 || pwrite(fd, lib_bytes, lib_len, 0) != (ssize_t)lib_len)
			break;
		usleep(200);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	void *h;
	int (*fn)(int);
	double until;
	volatile int sink = 0;
	pthread_t t;

	if (argc < 4) {
		fprintf(stderr, "usage: native_target LIBRARY FUNCTION SECONDS [flap]\n");
		return 2;
	}
	lib_path = argv[1];
	if (!(h = dlopen(lib_path, RTLD_NOW)) || !(fn = (int (*)(int))dlsym(h, argv[2]))) {
		fprintf(stderr, "native_target: %s\n", dlerror());
		return 1;
	}
	if (argc > 4 && strcmp(argv[4], "flap") == 0) {
		struct stat st;
		int fd = open(lib_path, O_RDONLY);

		if (fd < 0 || fstat(fd, &st) != 0 || !(lib_bytes = malloc((size_t)st.st_size)) ||
		    read(fd, lib_bytes, (size_t)st.st_size) != st.st_size)
			return 1;
		lib_len = (size_t)st.st_size;
		close(fd);
		pthread_create(&t, NULL, flap, NULL);
	}
	printf("native_target %d ready\n", (int)getpid());
	fflush(stdout);
	until = now() + atof(argv[3]);
	while (now() < until)
		sink += fn(sink);
	stop = 1;
	return sink == 42;
}
