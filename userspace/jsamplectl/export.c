#include "export.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <jansson.h>

#include "../common/vec.h"
#include "export_queue.h"
#include "pprof_read.h"
#include "process_identity.h"
#include "pyroscope_push.h"
#include "query_client.h"

/* jsampled keeps its finest time slices for 10 minutes: an interval older
 * than this (with a margin) may already be coarsened, and fetching it would
 * count samples of its neighbours too. A restart after a longer stop skips
 * what lies before, counted. */
#define RESUME_LIMIT_S (9 * 60)

/* A push destination: its queue and its one request in flight. */
struct destination {
	const char *name;
	struct export_queue q;
	struct pyroscope_request req;
	int busy;
	char last_error[256];
};

struct exporter {
	const struct export_config *c;
	CURLM *multi;
	struct destination pyroscope;
	int64_t next_from; /* the next interval to fetch starts here */
	/* Pushed processes of the oldest interval not wholly pushed yet (the
	 * queue sends in order): a restart fetches that interval again and
	 * skips them, so nothing is pushed twice. */
	int64_t sent_from;
	VEC(int) sent_pids;
	int64_t resume_from; /* the interval whose resume_pids were pushed before a restart */
	VEC(int) resume_pids;
	char saved_position[8192]; /* what the position file holds */
	uint32_t hz, resolution_s;
	uint64_t windows, exported, empty, query_errors, skipped_windows, identity_failures;
	char last_error[600];
};

static volatile sig_atomic_t stopping;

static void on_stop(int sig)
{
	(void)sig;
	stopping = 1;
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* --- where the exporter stands, and its status, in the state directory --- */

static int write_atomically(const char *dir, const char *name, const char *text, mode_t mode)
{
	char path[512], tmp[520];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "we");
	if (!f)
		return -1;
	fchmod(fileno(f), mode);
	fputs(text, f);
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* Everything before this is pushed or counted dropped at every destination. */
static int64_t taken_care_of(const struct exporter *e)
{
	int64_t oldest = export_queue_oldest_from(&e->pyroscope.q);

	return oldest < e->next_from ? oldest : e->next_from;
}

static void save_position(struct exporter *e)
{
	char text[8192];
	int64_t from = taken_care_of(e);
	size_t n = (size_t)snprintf(text, sizeof(text), "next_from=%" PRId64 "\nsent=", from);

	for (size_t i = 0; e->sent_from == from && i < e->sent_pids.n && n + 16 < sizeof(text); i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "%s%d", i ? "," : "", e->sent_pids.v[i]);
	snprintf(text + n, sizeof(text) - n, "\n");
	if (strcmp(text, e->saved_position) == 0)
		return; /* unchanged: the loop runs every second, the file changes per interval */
	snprintf(e->saved_position, sizeof(e->saved_position), "%s", text);
	if (write_atomically(e->c->state_dir, "position", text, 0644) != 0)
		snprintf(e->last_error, sizeof(e->last_error), "cannot write %s/position: %s", e->c->state_dir,
			 strerror(errno));
}

/* The saved position, and the processes of that interval already pushed. */
static int64_t load_position(struct exporter *e)
{
	char path[512], line[8192];
	long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/position", e->c->state_dir);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "next_from=%lld", &v) == 1)
			continue;
		if (strncmp(line, "sent=", 5) == 0) {
			char *p = line + 5, *end;
			for (long pid; (pid = strtol(p, &end, 10)) > 0 && end != p; p = *end == ',' ? end + 1 : end)
				if (vec_push(&e->resume_pids, (int)pid) != 0)
					break;
		}
	}
	fclose(f);
	e->resume_from = v;
	return v;
}

static int resumed_already(const struct exporter *e, int64_t from, int pid)
{
	for (size_t i = 0; from == e->resume_from && i < e->resume_pids.n; i++)
		if (e->resume_pids.v[i] == pid)
			return 1;
	return 0;
}

static void destination_status(json_t *dests, const struct destination *d, const char *url)
{
	const struct export_counters *k = &d->q.c;

	json_object_set_new(dests, d->name,
			    json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:s}", "url", url, "queued",
				      (json_int_t)k->queued, "sent", (json_int_t)k->sent, "failed",
				      (json_int_t)k->failed, "retried", (json_int_t)k->retried, "dropped",
				      (json_int_t)k->dropped, "dropped_samples", (json_int_t)k->dropped_samples,
				      "sent_bytes", (json_int_t)k->sent_bytes, "waiting",
				      (json_int_t)export_queue_len(&d->q), "waiting_bytes", (json_int_t)d->q.bytes,
				      "last_error", d->last_error));
}

static void save_status(struct exporter *e)
{
	json_t *st = json_pack("{s:s, s:i, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:s}", "host", e->c->host,
			       "pid", (int)getpid(), "interval_s", (json_int_t)e->c->interval_s, "next_from",
			       (json_int_t)e->next_from, "windows", (json_int_t)e->windows, "profiles",
			       (json_int_t)e->exported, "empty", (json_int_t)e->empty, "query_errors",
			       (json_int_t)e->query_errors, "skipped_windows", (json_int_t)e->skipped_windows,
			       "identity_failures", (json_int_t)e->identity_failures, "last_error", e->last_error);
	json_t *dests = json_object();
	char *text;

	if (!st || !dests) {
		json_decref(st);
		json_decref(dests);
		return;
	}
	if (e->c->pyroscope_url[0])
		destination_status(dests, &e->pyroscope, e->c->pyroscope_url);
	json_object_set_new(st, "destinations", dests);
	text = json_dumps(st, JSON_INDENT(1));
	if (text) {
		char *nl = realloc(text, strlen(text) + 2);
		if (nl) {
			text = nl;
			strcat(text, "\n");
		}
		write_atomically(e->c->state_dir, "status.json", text, 0644);
	}
	free(text);
	json_decref(st);
}

/* --- fetching an interval --- */

/* service{host=..,pid=..,jvm=..,...}: Pyroscope's name with labels. */
static void series_name(char *out, size_t cap, const struct export_config *c, const struct process_identity *id,
			int pid, const char *vm)
{
	char jvm[96], host[128];
	const char *plus = strstr(vm, "Server VM ");
	int n;

	snprintf(host, sizeof(host), "%s", c->host);
	identity_sanitize(host);
	/* "OpenJDK 64-Bit Server VM 17.0.13+11-Debian-2" -> 17.0.13+11-Debian-2 */
	snprintf(jvm, sizeof(jvm), "%s", plus ? plus + 10 : vm);
	identity_sanitize(jvm);
	n = snprintf(out, cap, "%s{host=%s,pid=%d", id->service, host, pid);
	if (jvm[0])
		n += snprintf(out + n, cap - (size_t)n, ",jvm=%s", jvm);
	if (id->unit[0] && (size_t)n < cap)
		n += snprintf(out + n, cap - (size_t)n, ",unit=%s", id->unit);
	if (id->container[0] && (size_t)n < cap)
		n += snprintf(out + n, cap - (size_t)n, ",container=%s", id->container);
	if (id->pod[0] && (size_t)n < cap)
		n += snprintf(out + n, cap - (size_t)n, ",pod=%s", id->pod);
	if ((size_t)n < cap)
		snprintf(out + n, cap - (size_t)n, "}");
}

static void fetch_process(struct exporter *e, json_t *proc, int64_t from, int64_t until)
{
	int pid = (int)json_integer_value(json_object_get(proc, "pid"));
	json_int_t first = json_integer_value(json_object_get(proc, "first_s"));
	json_int_t last = json_integer_value(json_object_get(proc, "last_s"));
	const char *comm = json_string_value(json_object_get(proc, "comm"));
	const char *vm = json_string_value(json_object_get(proc, "vm"));
	struct export_item item = {.from_s = from, .until_s = until, .pid = pid};
	struct process_identity id;
	Perftools__Profiles__Profile *prof;
	char request[128], err[256], *body = NULL;
	size_t len = 0;

	if (resumed_already(e, from, pid))
		return;
	/* No sample in the interval: nothing to fetch. */
	if (pid <= 0 || first == 0 || last < from || first >= until) {
		e->empty++;
		return;
	}
	snprintf(request, sizeof(request), "cct %d pprof %" PRId64 "..%" PRId64, pid, from, until);
	if (query_to_memory(e->c->socket_path, request, &body, &len, err, sizeof(err)) != QUERY_OK) {
		e->query_errors++;
		snprintf(e->last_error, sizeof(e->last_error), "pid %d: %s", pid, err);
		return;
	}
	prof = pprof_read((const uint8_t *)body, len);
	if (!prof) {
		e->query_errors++;
		snprintf(e->last_error, sizeof(e->last_error), "pid %d: jsampled's pprof does not parse", pid);
		free(body);
		return;
	}
	item.samples = pprof_sample_count(prof);
	perftools__profiles__profile__free_unpacked(prof, NULL);
	if (item.samples == 0) {
		e->empty++;
		free(body);
		return;
	}
	/* The process may have exited: its name then comes from what is left. */
	if (process_identity_read(&id, pid, comm, e->c->rules, e->c->n_rules) != 0) {
		e->identity_failures++;
		process_identity_from(&id, "", 0, "", comm, e->c->rules, e->c->n_rules);
	}
	series_name(item.name, sizeof(item.name), e->c, &id, pid, vm ? vm : "");
	item.body = (uint8_t *)body;
	item.len = len;
	e->exported++;
	if (e->c->pyroscope_url[0])
		export_queue_push(&e->pyroscope.q, &item);
	free(item.body); /* NULL if a queue took it */
}

/* Fetches [from, until) of every process jsampled lets us see. */
static int fetch_interval(struct exporter *e, int64_t from, int64_t until)
{
	char *body = NULL, err[256];
	size_t len, i;
	json_error_t jerr;
	json_t *list, *proc;

	if (query_to_memory(e->c->socket_path, "list json", &body, &len, err, sizeof(err)) != QUERY_OK) {
		e->query_errors++;
		snprintf(e->last_error, sizeof(e->last_error), "list: %s", err);
		return -1;
	}
	list = json_loadb(body, len, 0, &jerr);
	free(body);
	if (!json_is_array(list)) {
		e->query_errors++;
		snprintf(e->last_error, sizeof(e->last_error), "list: not a JSON array: %s", jerr.text);
		json_decref(list);
		return -1;
	}
	json_array_foreach(list, i, proc) {
		json_int_t hz = json_integer_value(json_object_get(proc, "frequency_hz"));
		json_int_t res = json_integer_value(json_object_get(proc, "window_resolution_s"));
		if (hz > 0)
			e->hz = (uint32_t)hz;
		if (res > 0 && (uint32_t)res != e->resolution_s) {
			e->resolution_s = (uint32_t)res;
			if (e->c->interval_s % e->resolution_s)
				fprintf(stderr,
					"jsamplectl export: interval %us is not a multiple of jsampled's window "
					"resolution %us: intervals share slices at their edges\n",
					e->c->interval_s, e->resolution_s);
		}
		fetch_process(e, proc, from, until);
	}
	json_decref(list);
	return 0;
}

/* --- pushing --- */

static void start_push(struct exporter *e, struct destination *d, uint64_t now)
{
	struct export_item *it = export_queue_peek(&d->q);

	if (d->busy || !it || now < d->q.next_try_ms)
		return;
	if (pyroscope_request_init(&d->req, e->c, it, e->hz) != 0) {
		snprintf(d->last_error, sizeof(d->last_error), "cannot set up a request");
		export_queue_failed(&d->q, now, 0);
		return;
	}
	curl_easy_setopt(d->req.easy, CURLOPT_PRIVATE, d);
	if (curl_multi_add_handle(e->multi, d->req.easy) != CURLM_OK) {
		pyroscope_request_free(&d->req);
		export_queue_failed(&d->q, now, 0);
		return;
	}
	it->attempts++;
	d->busy = 1;
}

/* 2xx: pushed. A 4xx other than 408/429 will fail again: dropped,
 * counted. Anything else (no connection, 5xx, timeout): retried. */
static void finish_push(struct exporter *e, CURLMsg *msg)
{
	struct destination *d = NULL;
	long code = 0;
	uint64_t now = mono_ms();

	curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&d);
	if (!d)
		return;
	curl_easy_getinfo(msg->easy_handle, CURLINFO_RESPONSE_CODE, &code);
	if (msg->data.result == CURLE_OK && code >= 200 && code < 300) {
		const struct export_item *it = export_queue_peek(&d->q);
		if (it->from_s != e->sent_from) {
			e->sent_from = it->from_s;
			e->sent_pids.n = 0;
		}
		vec_push(&e->sent_pids, it->pid);
		export_queue_done(&d->q);
	} else {
		int permanent = msg->data.result == CURLE_OK && code >= 400 && code < 500 && code != 408 && code != 429;
		if (msg->data.result != CURLE_OK)
			snprintf(d->last_error, sizeof(d->last_error), "%s",
				 d->req.error[0] ? d->req.error : curl_easy_strerror(msg->data.result));
		else
			snprintf(d->last_error, sizeof(d->last_error), "HTTP %ld", code);
		export_queue_failed(&d->q, now, permanent);
	}
	curl_multi_remove_handle(e->multi, msg->easy_handle);
	pyroscope_request_free(&d->req);
	d->busy = 0;
}

static void pump(struct exporter *e)
{
	CURLMsg *msg;
	int running, left;

	start_push(e, &e->pyroscope, mono_ms());
	curl_multi_perform(e->multi, &running);
	while ((msg = curl_multi_info_read(e->multi, &left)))
		if (msg->msg == CURLMSG_DONE)
			finish_push(e, msg);
	start_push(e, &e->pyroscope, mono_ms());
}

/* The first interval to fetch: after the saved position if jsampled still
 * has it exactly, else the one that just ended. */
static int64_t first_interval(struct exporter *e, int64_t now)
{
	int64_t step = e->c->interval_s;
	int64_t latest = (now - (int64_t)e->c->lag_s) / step * step - step;
	int64_t saved = load_position(e);

	if (saved > 0 && saved % step == 0 && saved <= latest + step) {
		int64_t oldest = now - RESUME_LIMIT_S;
		if (saved >= oldest)
			return saved;
		e->skipped_windows = (uint64_t)((oldest - saved + step - 1) / step);
		return (oldest + step - 1) / step * step;
	}
	return latest;
}

int export_run(const struct export_config *c)
{
	struct exporter e = {.c = c};
	struct sigaction sa = {.sa_handler = on_stop};
	uint64_t collected = 0;

	if (!c->pyroscope_url[0]) {
		fprintf(stderr, "jsamplectl export: no destination (set pyroscope_url in the config or "
				"--pyroscope-url)\n");
		return 2;
	}
	if (mkdir(c->state_dir, 0750) != 0 && errno != EEXIST) {
		fprintf(stderr, "jsamplectl export: %s: %s\n", c->state_dir, strerror(errno));
		return 2;
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK || !(e.multi = curl_multi_init())) {
		fprintf(stderr, "jsamplectl export: cannot initialise libcurl\n");
		return 2;
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	e.pyroscope.name = "pyroscope";
	export_queue_init(&e.pyroscope.q, c->queue_bytes);
	e.next_from = first_interval(&e, (int64_t)time(NULL));
	fprintf(stderr, "jsamplectl export: host %s, intervals of %us from %" PRId64 " to %s\n", c->host,
		c->interval_s, e.next_from, c->pyroscope_url);

	while (!stopping) {
		int64_t now = (int64_t)time(NULL);
		long wait_ms = 1000;

		/* Every interval that ended lag_s ago, in order. */
		while (!stopping && (!c->max_windows || collected < c->max_windows) &&
		       e.next_from + c->interval_s + (int64_t)c->lag_s <= now) {
			fetch_interval(&e, e.next_from, e.next_from + c->interval_s);
			e.next_from += c->interval_s;
			e.windows++;
			collected++;
			save_position(&e);
		}
		pump(&e);
		save_position(&e);
		save_status(&e);
		if (c->max_windows && collected >= c->max_windows && !e.pyroscope.busy &&
		    !export_queue_len(&e.pyroscope.q))
			break;
		if (!e.pyroscope.busy && export_queue_len(&e.pyroscope.q)) {
			uint64_t m = mono_ms();
			wait_ms = e.pyroscope.q.next_try_ms > m ? (long)(e.pyroscope.q.next_try_ms - m) : 0;
			if (wait_ms > 1000)
				wait_ms = 1000;
		}
		curl_multi_poll(e.multi, NULL, 0, (int)wait_ms, NULL);
	}
	if (e.pyroscope.busy) {
		curl_multi_remove_handle(e.multi, e.pyroscope.req.easy);
		pyroscope_request_free(&e.pyroscope.req);
	}
	save_position(&e);
	save_status(&e);
	fprintf(stderr,
		"jsamplectl export: stopped: %" PRIu64 " intervals, %" PRIu64 " profiles; pyroscope sent %" PRIu64
		", failed %" PRIu64 ", dropped %" PRIu64 "\n",
		e.windows, e.exported, e.pyroscope.q.c.sent, e.pyroscope.q.c.failed, e.pyroscope.q.c.dropped);
	export_queue_free(&e.pyroscope.q);
	vec_free(&e.sent_pids);
	vec_free(&e.resume_pids);
	curl_multi_cleanup(e.multi);
	curl_global_cleanup();
	return 0;
}

int export_print_status(const struct export_config *c)
{
	char path[512], buf[4096];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/status.json", c->state_dir);
	f = fopen(path, "re");
	if (!f) {
		fprintf(stderr, "jsamplectl export: no status at %s: %s\n", path, strerror(errno));
		return 3;
	}
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		fwrite(buf, 1, n, stdout);
	fclose(f);
	return 0;
}
