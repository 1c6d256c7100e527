/* SPDX-License-Identifier: GPL-2.0-only */
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

#include "userspace/common/vec.h"
#include "clickhouse_http.h"
#include "clickhouse_rows.h"
#include "fleet_init.h"
#include "userspace/profile/gzip.h"
#include "export_queue.h"
#include "url_safety.h"
#include "pprof_read.h"
#include "process_identity.h"
#include "profiles_answer.h"
#include "pyroscope_push.h"
#include "pyroscope_names.h"
#include "query_client.h"

/* jsampled keeps its finest time slices for 10 minutes: an interval older
 * than this (with a margin) may already be coarsened, and fetching it would
 * count samples of its neighbours too. A restart after a longer stop skips
 * what lies before, counted. */
#define RESUME_LIMIT_S (9 * 60)

/* Stacks remembered as written to ClickHouse (about 40 bytes each). */
#define CH_STACKS_REMEMBERED (1u << 20)

enum destination_kind { DEST_PYROSCOPE, DEST_CLICKHOUSE };

/* A push destination: its queue and its one request in flight. */
struct destination {
	const char *name;
	enum destination_kind kind;
	char shown_url[512]; /* the URL without credentials: what status and logs show */
	struct export_queue q;
	struct pyroscope_request preq;
	struct clickhouse_request creq;
	int busy;
	int continuing; /* ClickHouse: the next request is the second of an item */
	char last_error[600];
};

struct exporter {
	const struct export_config *c;
	CURLM *multi;
	struct destination dests[2];
	size_t n_dests;
	struct destination *pyroscope, *clickhouse; /* NULL when not configured */
	struct clickhouse_server ch_server;
	struct ch_stacks_written ch_written;
	struct ch_batch batch; /* ClickHouse: the interval being fetched */
	int64_t next_from;     /* the next interval to fetch starts here */
	/* Pushed processes of the oldest interval not wholly pushed yet (the
	 * queue sends in order): a restart fetches that interval again and
	 * skips them, so nothing is pushed twice to Pyroscope. (ClickHouse
	 * takes the interval whole again: its rows collapse with the first.) */
	int64_t sent_from;
	VEC(int) sent_pids;
	int64_t resume_from; /* the interval whose resume_pids were pushed before a restart */
	VEC(int) resume_pids;
	char saved_position[8192]; /* what the position file holds */
	uint32_t hz, resolution_s;
	uint64_t windows, exported, empty, query_errors, skipped_windows, identity_failures, batch_failures;
	uint64_t rows_bytes; /* ClickHouse rows before compression */
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
	int64_t oldest = e->next_from;

	for (size_t i = 0; i < e->n_dests; i++) {
		int64_t o = export_queue_oldest_from(&e->dests[i].q);
		if (o < oldest)
			oldest = o;
	}
	return oldest;
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

static void destination_status(json_t *dests, const struct destination *d)
{
	const struct export_counters *k = &d->q.c;

	json_object_set_new(dests, d->name,
			    json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:s}", "url", d->shown_url, "queued",
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
	json_object_set_new(st, "batch_failures", json_integer((json_int_t)e->batch_failures));
	json_object_set_new(st, "clickhouse_rows_bytes", json_integer((json_int_t)e->rows_bytes));
	for (size_t i = 0; i < e->n_dests; i++)
		destination_status(dests, &e->dests[i]);
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

/* "OpenJDK 64-Bit Server VM 17.0.13+11-Debian-2" -> 17.0.13+11-Debian-2 */
static void jvm_version(const char *vm, char *out, size_t cap)
{
	const char *plus = strstr(vm, "Server VM ");

	snprintf(out, cap, "%s", plus ? plus + 10 : vm);
	identity_sanitize(out);
}

/* service{host=..,pid=..,jvm=..,...}: Pyroscope's name with labels. */
static void series_name(char *out, size_t cap, const struct export_config *c, const struct process_identity *id,
			int pid, const char *jvm, unsigned type)
{
	char host[128];
	int n;

	snprintf(host, sizeof(host), "%s", c->host);
	identity_sanitize(host);
	/* cpu as ever; the other types with Pyroscope's suffix of a type
	 * (the name Java's wall-clock profiles have there: SERVICE.wall). */
	n = snprintf(out, cap, "%s%s%s{host=%s,pid=%d", id->service, type ? "." : "", type ? export_type_names[type] : "",
		     host, pid);
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

/* One process's profile of [from, until): pprof its frame of the
 * "profiles" answer, NULL when it had none (no sample in the window). */
static void export_process(struct exporter *e, json_t *proc, int64_t from, int64_t until, const uint8_t *pprof,
			   size_t len, unsigned type)
{
	int pid = (int)json_integer_value(json_object_get(proc, "pid"));
	const char *comm = json_string_value(json_object_get(proc, "comm"));
	const char *vm = json_string_value(json_object_get(proc, "vm"));
	/* What a restart remembers as pushed: the pid, and the type above its
	 * bits (pids are below 2^22). */
	int key = pid | (int)(type << 24);
	struct export_item item = {.from_s = from, .until_s = until, .pid = key};
	int to_pyroscope = e->pyroscope && !resumed_already(e, from, key);
	struct process_identity id;
	Perftools__Profiles__Profile *prof;
	char jvm[96];

	if (!to_pyroscope && !e->clickhouse)
		return;
	if (!pprof) {
		e->empty++;
		return;
	}
	prof = pprof_read(pprof, len);
	if (!prof) {
		e->query_errors++;
		snprintf(e->last_error, sizeof(e->last_error), "pid %d: jsampled's pprof does not parse", pid);
		return;
	}
	item.samples = pprof_sample_count(prof);
	if (item.samples == 0) {
		e->empty++;
		perftools__profiles__profile__free_unpacked(prof, NULL);
		return;
	}
	/* The process may have exited: its name then comes from what is left. */
	if (process_identity_read(&id, pid, comm, e->c->rules, e->c->n_rules) != 0) {
		e->identity_failures++;
		process_identity_from(&id, "", 0, "", comm, e->c->rules, e->c->n_rules);
	}
	jvm_version(vm ? vm : "", jvm, sizeof(jvm));
	e->exported++;
	if (e->clickhouse) {
		const char *labels[] = {"jvm", jvm, "unit", id.unit, "container", id.container, "pod", id.pod};

		if (ch_batch_add_profile(&e->batch, &e->ch_written, prof, export_type_names[type], id.service, pid,
					 labels, sizeof(labels) / sizeof(labels[0]) / 2) != 0)
			snprintf(e->last_error, sizeof(e->last_error), "out of memory building ClickHouse rows");
	}
	if (to_pyroscope) {
		struct wbuf java;
		int r;

		/* Pyroscope's names of Java's alloc and lock types */
		wbuf_init(&java);
		r = pyroscope_java_profile(prof, export_type_names[type], &java);
		if (r == 0 && !java.oom) {
			pprof = java.data;
			len = java.len;
		} else if (r < 0) {
			wbuf_free(&java);
			perftools__profiles__profile__free_unpacked(prof, NULL);
			e->pyroscope->q.c.dropped++;
			e->pyroscope->q.c.dropped_samples += item.samples;
			return;
		}
		series_name(item.name, sizeof(item.name), e->c, &id, pid, jvm, type);
		item.body = malloc(len);
		if (item.body)
			memcpy(item.body, pprof, len);
		wbuf_free(&java);
	}
	perftools__profiles__profile__free_unpacked(prof, NULL);
	if (to_pyroscope) {
		if (!item.body) {
			e->pyroscope->q.c.dropped++;
			e->pyroscope->q.c.dropped_samples += item.samples;
			return;
		}
		item.len = len;
		export_queue_push(&e->pyroscope->q, &item);
		free(item.body); /* NULL if the queue took it */
	}
}

/* The interval's ClickHouse rows, one batch for all processes. */
static void queue_batch(struct exporter *e, int64_t from, int64_t until)
{
	struct ch_batch *b = &e->batch;
	struct export_item item = {.from_s = from, .until_s = until};

	if (b->oom) {
		/* Rows missing: the whole interval is counted lost, not half-sent. */
		e->batch_failures++;
		e->clickhouse->q.c.dropped++;
		e->clickhouse->q.c.dropped_samples += b->samples_total;
	} else if (b->rows) {
		struct wbuf samples, stacks;

		/* Gzipped on the wire (and in the queue): rows repeat a lot. */
		wbuf_init(&samples);
		wbuf_init(&stacks);
		if (gzip_into(b->samples.data, b->samples.len, &samples) != 0 ||
		    (b->stacks.len && gzip_into(b->stacks.data, b->stacks.len, &stacks) != 0)) {
			wbuf_free(&samples);
			wbuf_free(&stacks);
			e->batch_failures++;
			e->clickhouse->q.c.dropped++;
			e->clickhouse->q.c.dropped_samples += b->samples_total;
			ch_batch_free(b);
			return;
		}
		e->rows_bytes += b->samples.len + b->stacks.len;
		snprintf(item.name, sizeof(item.name), "%s", b->batch_id);
		item.body = samples.data;
		item.len = samples.len;
		if (stacks.len) {
			item.stacks = stacks.data;
			item.stacks_len = stacks.len;
		} else {
			wbuf_free(&stacks);
		}
		item.new_stacks = b->new_stacks.v;
		item.n_new_stacks = b->new_stacks.n;
		item.samples = b->samples_total;
		b->new_stacks.v = NULL;
		b->new_stacks.n = 0;
		export_queue_push(&e->clickhouse->q, &item);
	}
	ch_batch_free(b);
}

/* The frames of a "profiles" answer; -1 if it is malformed or cut short. */
static int read_frames(const char *body, size_t len, struct profile_frame **out, size_t *n)
{
	size_t off = 0, cap = 0;
	struct profile_frame f;
	int r;

	*out = NULL;
	*n = 0;
	while ((r = profiles_next(body, len, &off, &f)) == PROFILES_FRAME) {
		if (*n == cap) {
			struct profile_frame *v = realloc(*out, (cap = cap ? 2 * cap : 64) * sizeof(*v));
			if (!v)
				break;
			*out = v;
		}
		(*out)[(*n)++] = f;
	}
	if (r != PROFILES_END) {
		free(*out);
		*out = NULL;
		*n = 0;
		return -1;
	}
	return 0;
}

/* pid's frame; frames come in the list's order, so *hint usually has it. */
static const struct profile_frame *frame_of(const struct profile_frame *v, size_t n, size_t *hint, int pid)
{
	for (size_t k = 0; k < n; k++) {
		size_t i = (*hint + k) % n;
		if (v[i].pid == pid) {
			*hint = i + 1;
			return &v[i];
		}
	}
	return NULL;
}

/* The interval's settings jsampled reports in its list. */
static void note_settings(struct exporter *e, json_t *proc)
{
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
}

/* One profile type's profiles of the interval, exported process by process. */
static int fetch_type(struct exporter *e, json_t *list, int64_t from, int64_t until, unsigned type)
{
	char *profiles = NULL, err[256], request[128];
	size_t plen = 0, i, n_frames = 0, hint = 0;
	struct profile_frame *frames = NULL;
	json_t *proc;
	int rc = -1;

	snprintf(request, sizeof(request), "profiles %" PRId64 "..%" PRId64 "%s%s%s %s", from, until,
		 e->c->view[0] ? " " : "", e->c->view, e->c->threads ? " threads" : "", export_type_names[type]);
	if (query_to_memory(e->c->socket_path, request, &profiles, &plen, err, sizeof(err)) != QUERY_OK) {
		e->query_errors++;
		snprintf(e->last_error, sizeof(e->last_error), "profiles: %s", err);
		goto cleanup;
	}
	if (read_frames(profiles, plen, &frames, &n_frames) != 0) {
		e->query_errors++;
		snprintf(e->last_error, sizeof(e->last_error), "profiles: jsampled's answer is malformed or cut short");
		goto cleanup;
	}
	json_array_foreach(list, i, proc) {
		const struct profile_frame *f =
			frame_of(frames, n_frames, &hint, (int)json_integer_value(json_object_get(proc, "pid")));

		note_settings(e, proc); /* whichever types are exported */
		export_process(e, proc, from, until, f ? f->pprof : NULL, f ? f->len : 0, type);
	}
	rc = 0;
cleanup:
	free(frames);
	free(profiles);
	return rc;
}

/* One interval: the list of processes, then one "profiles" query per
 * profile type exported, whose answer holds every process's pprof, built in
 * one child for all of them (a render per process forked its whole heap
 * fifty times an interval). */
static int fetch_interval(struct exporter *e, int64_t from, int64_t until)
{
	char *body = NULL, err[256];
	size_t len;
	json_error_t jerr;
	json_t *list = NULL;
	int rc = -1;

	if (e->clickhouse)
		ch_batch_init(&e->batch, e->c->host, from, (uint32_t)(until - from));
	if (query_to_memory(e->c->socket_path, "list json", &body, &len, err, sizeof(err)) != QUERY_OK) {
		e->query_errors++;
		snprintf(e->last_error, sizeof(e->last_error), "list: %s", err);
		goto cleanup;
	}
	list = json_loadb(body, len, 0, &jerr);
	if (!json_is_array(list)) {
		e->query_errors++;
		snprintf(e->last_error, sizeof(e->last_error), "list: not a JSON array: %s", jerr.text);
		goto cleanup;
	}
	for (unsigned t = 0; t < EXPORT_TYPES && json_array_size(list); t++)
		if ((e->c->types & (1u << t)) && fetch_type(e, list, from, until, t) != 0)
			goto cleanup;
	rc = 0;
	if (e->clickhouse)
		queue_batch(e, from, until);
cleanup:
	if (rc != 0 && e->clickhouse)
		ch_batch_free(&e->batch);
	free(body);
	json_decref(list);
	return rc;
}

/* --- pushing --- */

static CURL *request_easy(struct destination *d)
{
	return d->kind == DEST_PYROSCOPE ? d->preq.easy : d->creq.easy;
}

static void request_free(struct destination *d)
{
	if (d->kind == DEST_PYROSCOPE)
		pyroscope_request_free(&d->preq);
	else
		clickhouse_request_free(&d->creq);
}

/* ClickHouse: an item is two INSERTs, its new stacks, then its samples
 * (a stack is in the store before any sample that names it). */
static int clickhouse_request_for(struct exporter *e, struct destination *d, const struct export_item *it)
{
	int stacks = it->stacks && !it->stacks_done;
	char sql[160];

	snprintf(sql, sizeof(sql), "INSERT INTO %s.%s FORMAT JSONEachRow", e->c->clickhouse_database,
		 stacks ? "stacks" : "samples");
	return clickhouse_request_init(&d->creq, &e->ch_server, sql, stacks ? it->stacks : it->body,
				       stacks ? it->stacks_len : it->len);
}

static void start_push(struct exporter *e, struct destination *d, uint64_t now)
{
	struct export_item *it = export_queue_peek(&d->q);
	int rc;

	if (d->busy || !it || now < d->q.next_try_ms)
		return;
	rc = d->kind == DEST_PYROSCOPE ? pyroscope_request_init(&d->preq, e->c, it, e->hz)
				       : clickhouse_request_for(e, d, it);
	if (rc != 0) {
		snprintf(d->last_error, sizeof(d->last_error), "cannot set up a request");
		export_queue_failed(&d->q, now, 0);
		return;
	}
	curl_easy_setopt(request_easy(d), CURLOPT_PRIVATE, d);
	if (curl_multi_add_handle(e->multi, request_easy(d)) != CURLM_OK) {
		request_free(d);
		export_queue_failed(&d->q, now, 0);
		return;
	}
	if (!d->continuing)
		it->attempts++;
	d->continuing = 0;
	d->busy = 1;
}

/* An item is through: Pyroscope remembers the process as pushed (for a
 * restart), ClickHouse its stacks as written. */
static void item_pushed(struct exporter *e, struct destination *d, struct export_item *it)
{
	if (d->kind == DEST_PYROSCOPE) {
		if (it->from_s != e->sent_from) {
			e->sent_from = it->from_s;
			e->sent_pids.n = 0;
		}
		vec_push(&e->sent_pids, it->pid);
	} else {
		ch_stacks_written_add(&e->ch_written, it->new_stacks, it->n_new_stacks, it->from_s / 86400);
	}
	export_queue_done(&d->q);
}

/* Whether ClickHouse's error says the schema is missing: UNKNOWN_TABLE
 * (60) or UNKNOWN_DATABASE (81), "Code: 60, e.displayText() = ..." on
 * 18.16, "Code: 60. DB::Exception: ..." on current releases. */
static int schema_missing_error(const char *body, size_t len)
{
	for (size_t i = 0; i + 9 <= len; i++)
		if (memcmp(body + i, "Code: ", 6) == 0 && (!memcmp(body + i + 6, "60", 2) || !memcmp(body + i + 6, "81", 2)) &&
		    (body[i + 8] == ',' || body[i + 8] == '.'))
			return 1;
	return 0;
}

/* 2xx: pushed. A 4xx other than 408/429 will fail again: dropped,
 * counted. Anything else (no connection, 5xx, timeout): retried. A
 * missing schema is retried too (nothing is lost until the queue is full),
 * with what to do in the status. */
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
		struct export_item *it = export_queue_peek(&d->q);

		if (d->kind == DEST_CLICKHOUSE && it->stacks && !it->stacks_done) {
			it->stacks_done = 1; /* the samples go next, at once */
			d->continuing = 1;
		} else {
			item_pushed(e, d, it);
		}
	} else {
		int permanent = msg->data.result == CURLE_OK && code >= 400 && code < 500 && code != 408 && code != 429;
		const char *why = d->kind == DEST_PYROSCOPE ? d->preq.error : d->creq.error;

		if (msg->data.result != CURLE_OK)
			snprintf(d->last_error, sizeof(d->last_error), "%s",
				 why[0] ? why : curl_easy_strerror(msg->data.result));
		else if (d->kind == DEST_CLICKHOUSE &&
			 schema_missing_error((const char *)d->creq.response.data, d->creq.response.len)) {
			char why[600];

			if (fleet_schema_check(&e->ch_server, e->c->clickhouse_database, why, sizeof(why)) == 1)
				snprintf(why, sizeof(why), "HTTP %ld: %.*s", code,
					 (int)(d->creq.response.len > 250 ? 250 : d->creq.response.len),
					 (const char *)d->creq.response.data);
			snprintf(d->last_error, sizeof(d->last_error), "%s", why);
			permanent = 0;
		} else if (d->kind == DEST_CLICKHOUSE && d->creq.response.len)
			/* ClickHouse says why in the body ("Code: 60. DB::Exception: ..."). */
			snprintf(d->last_error, sizeof(d->last_error), "HTTP %ld: %.*s", code,
				 (int)(d->creq.response.len > 250 ? 250 : d->creq.response.len),
				 (const char *)d->creq.response.data);
		else
			snprintf(d->last_error, sizeof(d->last_error), "HTTP %ld", code);
		d->continuing = 0;
		export_queue_failed(&d->q, now, permanent);
	}
	curl_multi_remove_handle(e->multi, msg->easy_handle);
	request_free(d);
	d->busy = 0;
}

static void pump(struct exporter *e)
{
	CURLMsg *msg;
	int running, left;

	for (size_t i = 0; i < e->n_dests; i++)
		start_push(e, &e->dests[i], mono_ms());
	curl_multi_perform(e->multi, &running);
	while ((msg = curl_multi_info_read(e->multi, &left)))
		if (msg->msg == CURLMSG_DONE)
			finish_push(e, msg);
	for (size_t i = 0; i < e->n_dests; i++)
		start_push(e, &e->dests[i], mono_ms());
}

/* How long the loop may sleep: until the earliest back-off ends (at most
 * max_ms); requests in flight wake curl_multi_poll themselves. */
static long idle_ms(const struct exporter *e, long max_ms)
{
	uint64_t m = mono_ms();
	long wait = max_ms;

	for (size_t i = 0; i < e->n_dests; i++) {
		const struct destination *d = &e->dests[i];
		long w;

		if (d->busy || !export_queue_len(&d->q))
			continue;
		w = d->q.next_try_ms > m ? (long)(d->q.next_try_ms - m) : 0;
		if (w < wait)
			wait = w;
	}
	return wait;
}

static int all_sent(const struct exporter *e)
{
	for (size_t i = 0; i < e->n_dests; i++)
		if (e->dests[i].busy || export_queue_len(&e->dests[i].q))
			return 0;
	return 1;
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

static void add_destination(struct exporter *e, const char *name, enum destination_kind kind, const char *url)
{
	struct destination *d = &e->dests[e->n_dests++];

	d->name = name;
	d->kind = kind;
	url_redacted(url, d->shown_url, sizeof(d->shown_url));
	export_queue_init(&d->q, e->c->queue_bytes);
	if (kind == DEST_PYROSCOPE)
		e->pyroscope = d;
	else
		e->clickhouse = d;
}

int export_run(const struct export_config *c)
{
	struct exporter e = {.c = c};
	struct sigaction sa = {.sa_handler = on_stop};
	uint64_t collected = 0;

	if (!c->pyroscope_url[0] && !c->clickhouse_url[0]) {
		fprintf(stderr, "jsamplectl export: no destination (set pyroscope_url or clickhouse_url in the "
				"config, or --pyroscope-url / --clickhouse-url)\n");
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
	if (c->pyroscope_url[0])
		add_destination(&e, "pyroscope", DEST_PYROSCOPE, c->pyroscope_url);
	if (c->clickhouse_url[0])
		add_destination(&e, "clickhouse", DEST_CLICKHOUSE, c->clickhouse_url);
	e.ch_server = (struct clickhouse_server){.url = c->clickhouse_url, .user = c->clickhouse_user,
						 .password = c->clickhouse_password, .timeout_s = c->timeout_s,
						 .gzip_body = 1};
	ch_stacks_written_init(&e.ch_written, CH_STACKS_REMEMBERED);
	e.next_from = first_interval(&e, (int64_t)time(NULL));
	fprintf(stderr, "jsamplectl export: host %s, intervals of %us from %" PRId64 " to", c->host, c->interval_s,
		e.next_from);
	for (size_t i = 0; i < e.n_dests; i++)
		fprintf(stderr, " %s", e.dests[i].shown_url);
	fprintf(stderr, "\n");
	if (c->pyroscope_url[0] &&
	    url_credentials_in_clear(c->pyroscope_url, c->pyroscope_user[0] || c->pyroscope_password[0] ||
								   c->pyroscope_token[0]))
		fprintf(stderr, "jsamplectl export: warning: Pyroscope credentials go in clear text over http:// "
				"to %s (use https://)\n", e.pyroscope->shown_url);
	if (c->clickhouse_url[0] &&
	    url_credentials_in_clear(c->clickhouse_url, c->clickhouse_user[0] || c->clickhouse_password[0]))
		fprintf(stderr, "jsamplectl export: warning: ClickHouse credentials go in clear text over http:// "
				"to %s (use https://)\n", e.clickhouse->shown_url);
	if (e.clickhouse) {
		char why[600];
		int ok = fleet_schema_check(&e.ch_server, c->clickhouse_database, why, sizeof(why));

		if (ok == 0) {
			fprintf(stderr, "jsamplectl export: %s; until then the intervals wait in the queue\n", why);
			snprintf(e.clickhouse->last_error, sizeof(e.clickhouse->last_error), "%s", why);
		} else if (ok < 0) {
			fprintf(stderr, "jsamplectl export: cannot check ClickHouse's schema yet: %s\n", why);
		}
	}

	while (!stopping) {
		int64_t now = (int64_t)time(NULL);

		/* Every interval that ended lag_s ago, in order. */
		while (!stopping && (!c->max_intervals || collected < c->max_intervals) &&
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
		if (c->max_intervals && collected >= c->max_intervals && all_sent(&e))
			break;
		curl_multi_poll(e.multi, NULL, 0, (int)idle_ms(&e, 1000), NULL);
	}
	for (size_t i = 0; i < e.n_dests; i++) {
		if (e.dests[i].busy) {
			curl_multi_remove_handle(e.multi, request_easy(&e.dests[i]));
			request_free(&e.dests[i]);
		}
	}
	save_position(&e);
	save_status(&e);
	fprintf(stderr, "jsamplectl export: stopped: %" PRIu64 " intervals, %" PRIu64 " profiles", e.windows,
		e.exported);
	for (size_t i = 0; i < e.n_dests; i++) {
		const struct export_counters *k = &e.dests[i].q.c;
		fprintf(stderr, "; %s sent %" PRIu64 ", failed %" PRIu64 ", dropped %" PRIu64, e.dests[i].name,
			k->sent, k->failed, k->dropped);
		export_queue_free(&e.dests[i].q);
	}
	fputc('\n', stderr);
	ch_stacks_written_free(&e.ch_written);
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
