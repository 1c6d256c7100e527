/* SPDX-License-Identifier: GPL-2.0-only */
/* The two sockets' protocol handling without the event loop: query
 * requests (good, malformed, someone else's process) and agent connections
 * over a socketpair (a valid HELLO, then lies and garbage). */
#include <fcntl.h>
#include <stdlib.h>
#include <signal.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon/jvm/admission.h"
#include "daemon/jvm/agent_conns.h"
#include "daemon/jvm/agent_link.h"
#include "daemon/service/daemon.h"
#include "daemon/service/query_server.h"
#include "check.h"
#include "model_builder.h"

static struct daemon D;

static char *answer(uid_t uid, const char *line)
{
	static struct wbuf out;

	wbuf_free(&out);
	wbuf_init(&out);
	query_answer(&D, &(struct viewer){.uid = uid, .conn_fd = -1}, line, &out);
	wbuf_u8(&out, 0);
	return (char *)out.data;
}

static bool starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static void setup_daemon(void)
{
	struct process_limits lim = {.cct_max_nodes = 1000, .held_max_bytes = 1 << 20, .hold_ns = 1};
	struct process *p;
	struct trace_frame f = {.method_id = 1, .type = FRAME_COMPILED, .bci = -1};

	memset(&D, 0, sizeof(D));
	D.started_ns = monotonic_ns();
	process_table_init(&D.processes, &lim);
	p = process_create(&D.processes, 4242, 1000, "vm");
	CHECK(p != NULL);
	CHECK(tb_apply_class(&p->jvm, 1, "LMine;", "") == 0);
	CHECK(tb_apply_method(&p->jvm, 1, 1, 0, 0, 0, "run") == 0);
	CHECK(cct_add(&p->cct, &f, 1, 3) == 0);
	p->stats.samples = 3;
	p->stats.resolved = 3;
	p = process_create(&D.processes, 4343, 2000, "vm");
	CHECK(p != NULL);
}

static void test_queries(void)
{
	char *a;

	a = answer(0, "list");
	CHECK(strncmp(a, "OK\n", 3) == 0 && strstr(a, "4242") && strstr(a, "4343"));
	a = answer(1000, "list"); /* uid 1000 sees only its own */
	CHECK(strstr(a, "4242") && !strstr(a, "4343"));
	a = answer(1000, "cct 4242 collapsed");
	CHECK_STR(a, "OK\nMine.run_[j] 3\n");
	a = answer(1000, "cct 4343");
	CHECK_STR(a, "ERROR no profiled process 4343\n"); /* indistinguishable from missing */
	a = answer(0, "cct 999999");
	CHECK_STR(a, "ERROR no profiled process 999999\n");
	a = answer(0, "cct 4242 bogus");
	CHECK(strncmp(a, "ERROR format", 12) == 0);
	a = answer(0, "cct 4242 svg");
	CHECK(starts(a, "OK\n<?xml") && strstr(a, "Mine.run") && strstr(a, "</svg>"));
	a = answer(0, "cct 4242 html");
	CHECK(starts(a, "OK\n<!DOCTYPE html>") && strstr(a, "Mine.run") && !strstr(a, "/*JSAMPLED_DATA*/null"));
	/* Every view names the same samples here (no kernel or carrier frames). */
	a = answer(1000, "cct 4242 collapsed carrier");
	CHECK_STR(a, "OK\nMine.run_[j] 3\n");
	a = answer(1000, "cct 4242 collapsed mixed,carrier");
	CHECK_STR(a, "OK\nMine.run_[j] 3\n");
	a = answer(0, "cct 4242 collapsed carriers");
	CHECK(strncmp(a, "ERROR window", 12) == 0);
	a = answer(0, "cct 4242 collapsed 1..2"); /* a window long ago: no samples */
	CHECK_STR(a, "OK\n");
	a = answer(0, "cct 4242 collapsed 5..4");
	CHECK(strncmp(a, "ERROR window", 12) == 0);
	a = answer(0, "cct 4242 collapsed x..");
	CHECK(strncmp(a, "ERROR window", 12) == 0);
	a = answer(1000, "diff 4242 4242 text");
	CHECK(starts(a, "OK\nbase:") && strstr(a, "Mine.run"));
	a = answer(1000, "diff 4242 4343 text"); /* not its process */
	CHECK_STR(a, "ERROR no profiled process 4343\n");
	a = answer(0, "diff 4242@1..2 4242 page");
	CHECK(starts(a, "OK\n{\"title\"") && strstr(a, "\"diff\":{"));
	a = answer(1000, "list json");
	CHECK(starts(a, "OK\n[{\"pid\":4242") && !strstr(a, "4343"));
	a = answer(0, "cct -1");
	CHECK(strncmp(a, "ERROR pid", 9) == 0);
	a = answer(0, "cct 12abc");
	CHECK(strncmp(a, "ERROR pid", 9) == 0);
	a = answer(0, "cct");
	CHECK(strncmp(a, "ERROR unknown request", 21) == 0);
	a = answer(0, "");
	CHECK(strncmp(a, "ERROR empty", 11) == 0);
	a = answer(0, "rm -rf /");
	CHECK(strncmp(a, "ERROR", 5) == 0);
	a = answer(0, "a b c d e f g h i");
	CHECK(strncmp(a, "ERROR too many", 14) == 0);
	/* Thread selectors: %XX-escaped, bounded, at most 8 stars. */
	a = answer(1000, "cct 4242 collapsed wall thread=");
	CHECK(strncmp(a, "ERROR thread=", 13) == 0);
	a = answer(1000, "cct 4242 collapsed thread=a%2");
	CHECK(strncmp(a, "ERROR thread=", 13) == 0);
	a = answer(1000, "cct 4242 collapsed thread=a%00b");
	CHECK(strncmp(a, "ERROR thread=", 13) == 0);
	a = answer(1000, "cct 4242 collapsed thread=*%2A*a*a*a*a*a*a*");
	CHECK(strncmp(a, "ERROR thread=", 13) == 0);
	a = answer(1000, "cct 4242 collapsed wall threads thread=C2%20Compiler*");
	CHECK(strncmp(a, "OK\n", 3) == 0);
	a = answer(1000, "diff 4242 4242 text wall thread=main");
	CHECK(strncmp(a, "OK\n", 3) == 0);
	a = answer(1000, "diff 4242 4242 text thread=%zz");
	CHECK(strncmp(a, "ERROR thread=", 13) == 0);
	a = answer(1000, "diff 4242 4242 text 4242 wall");
	CHECK(strncmp(a, "ERROR usage: diff", 17) == 0);
	a = answer(1000, "stats 4242 json");
	CHECK(strncmp(a, "OK\n{\"pid\":4242", 14) == 0 && strstr(a, "\"resolved\":3"));
	a = answer(1000, "stats");
	CHECK(strncmp(a, "OK\n", 3) == 0 && strstr(a, "samples"));
	a = answer(1000, "stats json");
	CHECK(strncmp(a, "OK\n{", 4) == 0 && strstr(a, "\"samples\":3,")); /* only its own */
}

/* "profiles": a frame per process the client may see with samples in
 * the window, each "<pid> <length>" and that many bytes, then "end". */
static void test_profiles_query(void)
{
	struct trace_frame f = {.method_id = 1, .type = FRAME_COMPILED, .bci = -1};
	struct process *mine = process_create(&D.processes, 4244, 1000, "vm");
	struct process *theirs = process_create(&D.processes, 4344, 2000, "vm");
	char *a, *nl;
	size_t len;

	CHECK(mine && theirs);
	if (!mine || !theirs)
		return;
	CHECK(tb_apply_class(&mine->jvm, 1, "LMine;", "") == 0);
	CHECK(tb_apply_method(&mine->jvm, 1, 1, 0, 0, 0, "run") == 0);
	CHECK(cct_add_at(&mine->cct, &f, 1, 5, 100) == 0);
	CHECK(cct_add_at(&theirs->cct, &f, 1, 5, 100) == 0);

	a = answer(1000, "profiles 50..200"); /* its own, in the window: 4244 only */
	CHECK(starts(a, "OK\n4244 "));
	len = strtoul(a + 8, &nl, 10);
	CHECK(*nl == '\n' && len > 0 && strcmp(nl + 1 + len, "end\n") == 0);
	a = answer(0, "profiles 50..200 mixed"); /* root: both */
	CHECK(starts(a, "OK\n4244 "));
	len = strtoul(a + 8, &nl, 10);
	CHECK(*nl == '\n' && starts(nl + 1 + len, "4344 "));
	a = answer(1000, "profiles 300..400"); /* no sample then */
	CHECK_STR(a, "OK\nend\n");
	a = answer(0, "profiles 5..4");
	CHECK(starts(a, "ERROR window"));
	a = answer(0, "profiles 50..200 bogus");
	CHECK(starts(a, "ERROR usage: profiles"));
	a = answer(0, "profiles");
	CHECK(starts(a, "ERROR unknown request"));
}

/* Every number in a JSON stats answer also stands in the text one: member
 * "x" as line "x", member "x" of object "g" as line "g_x" (the failure
 * reasons and rules excepted: text lists only those that occurred). The
 * JSON is also checked to be balanced and to have no empty member. */
static void check_text_has_json_fields(uid_t uid, const char *json_req, const char *text_req)
{
	char *json = strdup(answer(uid, json_req));
	char *text = strdup(answer(uid, text_req));
	char group[64] = "", key[64];
	int depth = 0, fields = 0;

	CHECK(strncmp(json, "OK\n{", 4) == 0 && strncmp(text, "OK\n", 3) == 0);
	for (const char *c = json + 3; *c; c++) {
		if (*c == '{')
			depth++;
		else if (*c == '}')
			depth--, group[0] = depth >= 2 ? group[0] : 0;
		else if (*c == ',')
			CHECK(c[1] != ',' && c[1] != '}');
		if (*c != '"' || c[-1] == '\\')
			continue;
		const char *end = strchr(c + 1, '"');
		size_t n = (size_t)(end - c - 1);

		CHECK(end && n > 0 && n < sizeof(key));
		if (!end || n == 0 || n >= sizeof(key))
			break;
		memcpy(key, c + 1, n);
		key[n] = 0;
		c = end;
		CHECK(c[1] == ':');
		if (c[2] == '"') /* a string value: step over it */
			c = strchr(c + 3, '"');
		if (!c)
			break;
		if (c[2] == '{') {
			snprintf(group, sizeof(group), "%s", key);
			continue;
		}
		if (depth == 1 || (strcmp(group, "reasons") != 0 && strcmp(group, "rules") != 0)) {
			char line[160];

			snprintf(line, sizeof(line), "\n%s%s%s ", depth == 1 ? "" : group, depth == 1 ? "" : "_", key);
			if (!strstr(text, line))
				fprintf(stderr, "  text answer to '%s' lacks %s\n", text_req, line + 1);
			CHECK(strstr(text, line) != NULL);
			fields++;
		}
	}
	CHECK_EQ(depth, 0);
	CHECK(fields > 10);
	free(json);
	free(text);
}

static void test_stats_text_and_json_agree(void)
{
	check_text_has_json_fields(0, "stats json", "stats");
	check_text_has_json_fields(1000, "stats json", "stats");
	check_text_has_json_fields(1000, "stats 4242 json", "stats 4242");
}

static int hellos, batches;
static struct process *fake_process;

static struct process *on_hello(void *ctx, struct agent_link *l, const char *name, const char *ver, char *why,
				size_t whylen)
{
	(void)ctx;
	(void)name;
	(void)ver;
	(void)why;
	(void)whylen;
	hellos++;
	fake_process = process_create(&D.processes, l->peer.pid, l->peer.uid, "vm");
	return fake_process;
}

static int on_batch(void *ctx, struct agent_link *l, const void *payload, size_t len, struct batch_info *info,
		    char *why, size_t whylen)
{
	(void)ctx;
	(void)why;
	(void)whylen;
	batches++;
	return process_apply_batch(&D.processes, l->proc, payload, len, info, 0, monotonic_ns());
}

static void on_config(void *ctx, uint64_t *alloc_interval, uint64_t *lock_interval)
{
	(void)ctx;
	*alloc_interval = 524288;
	*lock_interval = 1000000;
}

static const struct agent_link_hooks hooks = {.on_hello = on_hello, .on_batch = on_batch, .config = on_config};

/* A socketpair with the daemon end non-blocking. */
static struct agent_link *pair(int *peer)
{
	int sv[2];
	struct agent_link *l;

	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	l = agent_link_new(sv[0], monotonic_ns());
	CHECK(l != NULL);
	CHECK(l && l->peer.pid == getpid() && l->peer.pidfd >= 0);
	*peer = sv[1];
	return l;
}

static void send_frame(int fd, uint16_t type, const void *payload, uint32_t len)
{
	struct wbuf w;

	wbuf_init(&w);
	wbuf_u32(&w, len + 4);
	wbuf_u16(&w, type);
	wbuf_u16(&w, 0);
	wbuf_put(&w, payload, len);
	CHECK(write(fd, w.data, w.len) == (ssize_t)w.len);
	wbuf_free(&w);
}

static void hello_payload(struct wbuf *w, uint32_t magic, uint32_t version)
{
	wbuf_u32(w, magic);
	wbuf_u32(w, version);
	wbuf_u32(w, 1);
	wbuf_u8(w, 0);
	wbuf_u64(w, 0);
	wbuf_str(w, "TestVM");
	wbuf_str(w, "1");
}

/* An agent's connection closed while a forked child (a query's render)
 * holds copies of jsampled's descriptors: its watch must leave epoll
 * before its fd closes, or the registration, kept alive by the child's
 * copy, goes on naming the freed watch (a use-after-free that test_hostile
 * met on a busy machine). */
static void test_agent_closed_while_forked(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct epoll_event evs[8];
	struct watch *w = NULL;
	struct daemon saved = D;
	int lfd, cfd, n;
	pid_t child;

	memset(&D, 0, sizeof(D));
	uid_counts_init(&D.agent_conns);
	D.opt.max_agent_conns_per_user = 16;
	CHECK_EQ(loop_init(&D.loop), 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/tmp/jsampled-test-links-%d.sock", (int)getpid());
	unlink(sa.sun_path);
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	CHECK(lfd >= 0 && bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) == 0 && listen(lfd, 4) == 0);
	cfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(cfd >= 0 && connect(cfd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	agents_accept(&D, lfd);
	for (struct watch *x = D.loop.connections; x; x = x->next)
		if (x->kind == W_AGENT)
			w = x;
	CHECK(w != NULL);
	if (!w)
		goto cleanup;
	child = fork();
	if (child == 0) {
		close(cfd); /* the agent's end is the agent's */
		sleep(5);   /* and holds a copy of every descriptor of jsampled's */
		_exit(0);
	}
	close(cfd); /* the agent hangs up */
	n = epoll_wait(D.loop.epfd, evs, 8, 2000);
	CHECK(n >= 1);
	for (int i = 0; i < n; i++)
		if (evs[i].data.ptr == w)
			agents_on_event(&D, w, evs[i].events);
	CHECK(D.loop.connections == NULL); /* closed, with its pidfd's watch */
	loop_collect(&D.loop);
	n = epoll_wait(D.loop.epfd, evs, 8, 200);
	CHECK_EQ(n, 0); /* nothing names the freed watches */
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
cleanup:
	close(lfd);
	unlink(sa.sun_path);
	loop_free(&D.loop);
	uid_counts_free(&D.agent_conns);
	D = saved;
}

static void test_agent_link_good(void)
{
	int peer;
	struct agent_link *l = pair(&peer);
	struct wbuf w;
	uint8_t got[64];

	wbuf_init(&w);
	hello_payload(&w, JS_AGENT_MAGIC, JS_AGENT_PROTOCOL_VERSION);
	send_frame(peer, JS_MSG_HELLO, w.data, (uint32_t)w.len);
	CHECK(agent_link_on_readable(l, &hooks) == 0);
	CHECK_EQ(hellos, 1);
	CHECK(l->proc == fake_process && l->fetch_in_flight);
	/* The link asked for everything since 0. */
	CHECK(read(peer, got, sizeof(got)) == 8 + 12);
	CHECK_EQ(got[4], JS_MSG_FETCH);
	/* An empty batch up to version 7. */
	wbuf_reset(&w);
	wbuf_u64(&w, 0);
	wbuf_u64(&w, 7);
	wbuf_u64(&w, 99);
	wbuf_u8(&w, 0);
	wbuf_u32(&w, 0);
	send_frame(peer, JS_MSG_BATCH, w.data, (uint32_t)w.len);
	CHECK(agent_link_on_readable(l, &hooks) == 0);
	CHECK_EQ(batches, 1);
	CHECK_EQ(l->since, 7);
	CHECK(!l->fetch_in_flight);
	CHECK_EQ(fake_process->agent_cut_ns, 99);
	/* A second HELLO is a protocol violation. */
	wbuf_reset(&w);
	hello_payload(&w, JS_AGENT_MAGIC, JS_AGENT_PROTOCOL_VERSION);
	send_frame(peer, JS_MSG_HELLO, w.data, (uint32_t)w.len);
	CHECK(agent_link_on_readable(l, &hooks) == -1);
	CHECK_STR(l->why_closed, "second HELLO");
	wbuf_free(&w);
	agent_link_free(l);
	close(peer);
}

/* An agent that takes CONFIG gets the sampling settings before its first
 * FETCH; one that does not (the test above) gets the FETCH alone. */
static void test_agent_link_config(void)
{
	int peer;
	struct agent_link *l = pair(&peer);
	struct wbuf w;
	uint8_t got[64];
	struct rbuf r;

	wbuf_init(&w);
	hello_payload(&w, JS_AGENT_MAGIC, JS_AGENT_PROTOCOL_VERSION);
	wbuf_u32(&w, JS_AGENT_TAKES_CONFIG);
	send_frame(peer, JS_MSG_HELLO, w.data, (uint32_t)w.len);
	CHECK(agent_link_on_readable(l, &hooks) == 0);
	CHECK_EQ(l->features, JS_AGENT_TAKES_CONFIG);
	CHECK(read(peer, got, sizeof(got)) == (8 + 16) + (8 + 12));
	CHECK_EQ(got[4], JS_MSG_CONFIG);
	rbuf_init(&r, got + 8, 16);
	CHECK_EQ(rbuf_u64(&r), 524288);
	CHECK_EQ(rbuf_u64(&r), 1000000);
	CHECK_EQ(got[24 + 4], JS_MSG_FETCH);
	wbuf_free(&w);
	agent_link_free(l);
	close(peer);
}

static void expect_closed(const void *bytes, size_t n, const char *why)
{
	int peer;
	struct agent_link *l = pair(&peer);

	CHECK(write(peer, bytes, n) == (ssize_t)n);
	shutdown(peer, SHUT_WR);
	CHECK(agent_link_on_readable(l, &hooks) == -1);
	CHECK_STR(l->why_closed, why);
	agent_link_free(l);
	close(peer);
}

static void test_agent_link_garbage(void)
{
	struct wbuf w;
	int before = hellos;

	wbuf_init(&w);
	hello_payload(&w, 0x12345678, JS_AGENT_PROTOCOL_VERSION);
	/* Wrong magic, wrong version, truncated HELLO. */
	{
		struct wbuf f;
		wbuf_init(&f);
		wbuf_u32(&f, (uint32_t)w.len + 4);
		wbuf_u16(&f, JS_MSG_HELLO);
		wbuf_u16(&f, 0);
		wbuf_put(&f, w.data, w.len);
		expect_closed(f.data, f.len, "malformed HELLO");
		wbuf_free(&f);
	}
	/* A frame length beyond the limit. */
	expect_closed((uint8_t[]){0xff, 0xff, 0xff, 0x7f, 1, 0, 0, 0}, 8, "frame too long before HELLO");
	/* Before HELLO, a frame of more than a few KiB is refused as soon as
	 * its header is in: nothing of it is buffered. */
	expect_closed((uint8_t[]){0x00, 0x00, 0x10, 0x00, 1, 0, 0, 0}, 8, "frame too long before HELLO");
	/* A frame length too small to hold a type. */
	expect_closed((uint8_t[]){2, 0, 0, 0, 1, 0, 0, 0}, 8, "bad frame length");
	/* A batch before HELLO. */
	expect_closed((uint8_t[]){4, 0, 0, 0, JS_MSG_BATCH, 0, 0, 0}, 8, "message before HELLO");
	/* Random bytes. */
	expect_closed("GET / HTTP/1.1\r\n\r\n", 18, "frame too long before HELLO");
	/* Closing mid-frame. */
	expect_closed((uint8_t[]){100, 0, 0, 0, 1, 0, 0, 0, 1, 2}, 10, "closed before HELLO");
	CHECK_EQ(hellos, before);
	wbuf_free(&w);
}

/* A tree of about bytes bytes of distinct paths. */
static void grow(struct process *p, size_t bytes)
{
	struct trace_frame f[3] = {{.method_id = 1, .type = FRAME_COMPILED, .bci = -1}};

	for (uint32_t i = 0; cct_bytes(&p->cct) < bytes && i < 4000000; i++) {
		f[1] = (struct trace_frame){.method_id = 2 + i, .type = FRAME_COMPILED, .bci = -1};
		f[2] = (struct trace_frame){.method_id = 7 + i % 5, .type = FRAME_INTERPRETED, .bci = (int32_t)i};
		if (cct_add(&p->cct, f, 3, 1) != 0)
			break;
	}
}

/* A user's processes, trees and all, stay under --max-user-mb: an exited
 * profile is forgotten first, then the live trees grow no more, and a new
 * process of that user is refused; another user is not held back. */
static void test_memory_limits(void)
{
	struct daemon saved = D;
	struct process_limits lim = {.cct_max_nodes = 1u << 22, .held_max_bytes = 1 << 20, .hold_ns = 1};
	struct process *live, *gone, *other;
	char why[160];
	size_t before;

	memset(&D, 0, sizeof(D));
	process_table_init(&D.processes, &lim);
	D.opt.max_user_bytes = 4u << 20;
	D.opt.max_total_bytes = 64u << 20;
	D.opt.max_processes = 100;
	D.opt.max_processes_per_user = 100;
	live = process_create(&D.processes, 100, 1000, "vm");
	gone = process_create(&D.processes, 101, 1000, "vm");
	other = process_create(&D.processes, 102, 2000, "vm");
	CHECK(live && gone && other);
	grow(gone, 2u << 20);
	gone->state = PROCESS_EXITED;
	grow(live, 3u << 20);
	grow(other, 3u << 20);
	CHECK(admission_user_memory(&D, 1000) > D.opt.max_user_bytes);
	admission_memory_pressure(&D);
	CHECK(process_lookup(&D.processes, 101) == NULL); /* the exited one went first */
	CHECK(admission_user_memory(&D, 1000) < D.opt.max_user_bytes);
	CHECK_EQ(D.counters.trees_frozen, 0);
	grow(live, 5u << 20);
	admission_memory_pressure(&D);
	CHECK_EQ(D.counters.trees_frozen, 1);
	before = cct_bytes(&live->cct);
	grow(live, before + (1u << 20)); /* stops at its cap (pruning itself to fit) */
	CHECK(cct_bytes(&live->cct) <= before);
	D.opt.max_user_bytes = cct_bytes(&live->cct) / 2;
	CHECK(!admission_make_room(&D, 1000, why, sizeof(why)) && strstr(why, "max-user-mb"));
	D.opt.max_user_bytes = 4u << 20;
	CHECK(admission_make_room(&D, 2000, why, sizeof(why))); /* another user: not held back */
	D.opt.max_total_bytes = 4u << 20;
	CHECK(!admission_make_room(&D, 2000, why, sizeof(why)) && strstr(why, "max-total-mb"));
	process_table_free(&D.processes);
	D = saved;
}

int main(void)
{
	setup_daemon();
	RUN(test_memory_limits);
	RUN(test_queries);
	RUN(test_profiles_query);
	RUN(test_stats_text_and_json_agree);
	RUN(test_agent_closed_while_forked);
	RUN(test_agent_link_good);
	RUN(test_agent_link_config);
	RUN(test_agent_link_garbage);
	answer(0, "list");
	process_table_free(&D.processes);
	int rc = CHECK_DONE();
	return rc;
}
