/* SPDX-License-Identifier: GPL-2.0-only */
/* jsampled's settings: the command line, and the config file whose
 * `key = value` lines name the same long options (the command line wins).
 * One table (options.c) holds each option's name, type, default, range,
 * help text and whether a SIGHUP reload may change it; the parser, the
 * usage text, the config-file reader and the reload all read it. */
#ifndef JSAMPLED_OPTIONS_H
#define JSAMPLED_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "daemon/ingest/sampler_events.h"

#define JSAMPLED_DEFAULT_SOCKET "/run/jsampled/jsampled.sock"
#define JSAMPLED_DEFAULT_AGENT "/usr/lib/jsampled/libjsagent.so"
#define JSAMPLED_DEFAULT_NATIVE_HELPER "/usr/lib/jsampled/jsampled-unwind"
#define RULE_MAX 16
#define RULE_LEN 128

/* Glob patterns (fnmatch) a process is matched against. */
struct rule_list {
	unsigned n;
	char v[RULE_MAX][RULE_LEN];
};

/* Which processes to profile: a process is profiled unless an exclude rule
 * matches it, and, where include rules of a kind exist, one of them must. */
struct process_rules {
	struct rule_list include_user, exclude_user;     /* user name or uid */
	struct rule_list include_exe, exclude_exe;       /* executable path */
	struct rule_list include_cgroup, exclude_cgroup; /* cgroup v2 path */
};

enum attach_mode { ATTACH_OFF, ATTACH_AUTO };

struct options {
	char config_path[256];  /* empty: none */
	char socket_path[108];
	char agent_socket_path[108];
	char socket_group[64];  /* group that may query (socket mode 0660) */
	char readers_group[64]; /* group that may read every process (the exporter) */
	char agent_path[256];   /* the agent library loaded into JVMs */
	char state_dir[256];    /* empty: profiles are not saved */
	unsigned frequency_hz;
	enum sample_events sample_events; /* which tasks the sampling timers interrupt */
	unsigned fragment_bytes;
	unsigned max_fragment_bytes; /* deep threads' copies grow up to this */
	unsigned fill_bytes;         /* gap-filling windows (bpf/sampler.h JS_SAMPLE_FILL) */
	bool kernel_stacks;          /* JS_SAMPLE_KSTACK records */
	bool native_stacks;          /* copy and unwind native frames */
	bool offcpu;                 /* off-CPU samples (JS_SAMPLE_OFFCPU) */
	bool alloc;                  /* the agents sample allocations (profile type alloc) */
	uint64_t alloc_interval;     /* bytes, mean between sampled allocations */
	bool lock;                   /* the agents sample contended lock waits (profile type lock) */
	uint64_t lock_interval_us;   /* mean wait between sampled lock waits */
	char native_helper_path[256]; /* the sandboxed unwinder (native_helper.h) */
	char native_helper_user[64];  /* the user it runs as */
	size_t native_helper_bytes;   /* its heap */
	unsigned native_deadline_ms;  /* an answer of it comes within this */
	size_t native_queue_bytes;    /* samples waiting for it */
	bool startup_sampling;       /* sample starting JVMs before their agent (jvm_startup.h) */
	size_t ringbuf_bytes;
	size_t wakeup_bytes; /* 0: a quarter of the ring */
	unsigned drain_ms;
	uint64_t retention_s;
	uint64_t hold_ms;
	uint32_t cct_max_nodes;
	uint32_t window_resolution_s; /* the finest time slice */
	size_t window_max_bytes;      /* time slices per process */
	size_t cct_max_bytes;
	unsigned max_processes;
	/* What one process's agent may make jsampled hold (docs/security.md,
	 * "Memory": the bound on a hostile agent). */
	size_t max_model_bytes;   /* the agent's code map, methods, threads */
	size_t held_max_bytes;    /* samples waiting for agent data */
	/* Per user (root exempt): processes tracked, and model + held bytes of
	 * them all; open connections to each socket. */
	unsigned max_processes_per_user;
	size_t max_user_bytes;
	size_t max_total_bytes; /* what all processes make jsampled hold */
	unsigned max_queries_per_user;
	unsigned max_agent_conns_per_user; /* connected, no HELLO yet */
	unsigned max_agent_namespaces;     /* agent sockets inside containers */
	enum attach_mode attach;
	unsigned rescan_s;
	unsigned save_interval_s;
	struct process_rules rules;
	bool keep_caps;
	bool verbose;
	int nice;               /* scheduling priority to take (root) */
	char record_path[4096]; /* empty: no recording */
};

/* 0 to run, 1 if help was printed, -1 on a usage error (message printed,
 * to err if not NULL, else to stderr). */
int options_parse(struct options *o, int argc, char **argv, char *err, size_t errlen);

/* After a reload has parsed fresh settings: copies into fresh every setting
 * a reload may not change from old, calling restart_needed(name) for each
 * that differs. */
/* The usage text (--help). */
void options_usage(FILE *f);

/* The options by index (NULL past the last), and an option's value in o
 * written as the command line spells it; -1 for options without one (flags,
 * rules, unknown names). */
size_t options_count(void);
const char *options_name(size_t i);
int options_format(const struct options *o, const char *name, char *buf, size_t len);

void options_keep_fixed(struct options *fresh, const struct options *old, void (*restart_needed)(const char *name));

#endif
