/* jsampled's command line. */
#ifndef JSAMPLED_OPTIONS_H
#define JSAMPLED_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

#define JSAMPLED_DEFAULT_SOCKET "/run/jsampled/jsampled.sock"

struct options {
	char socket_path[108];
	char agent_socket_path[108];
	unsigned frequency_hz;
	unsigned fragment_bytes;
	unsigned max_fragment_bytes; /* deep threads' copies grow up to this; 0: never */
	size_t ringbuf_bytes;
	size_t wakeup_bytes; /* 0: a sixteenth of the ring */
	unsigned drain_ms;
	uint64_t retention_s;
	uint64_t hold_ms;
	uint32_t cct_max_nodes;
	size_t held_max_bytes;
	int verbose;
	int nice;               /* scheduling priority to take (root) */
	char record_path[4096]; /* empty: no recording */
};

/* 0 to run, 1 if help was printed, -1 on a usage error (message printed). */
int options_parse(struct options *o, int argc, char **argv);

#endif
