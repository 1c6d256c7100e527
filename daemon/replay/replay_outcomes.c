/* SPDX-License-Identifier: GPL-2.0-only */
#include "replay_outcomes.h"

#include <stdlib.h>
#include <string.h>

#include "userspace/profile/cct_format.h"

static const char *const status_names[] = {"resolved", "incomplete", "not_java", "retry", "failed"};

const char *outcome_status_name(enum decode_status st)
{
	return (unsigned)st < sizeof(status_names) / sizeof(status_names[0]) ? status_names[st] : "unknown";
}

const char *outcome_name(enum decode_status st, int reason, const struct trace *tr)
{
	return st == DECODE_FAILED ? decode_failure_name(reason) : decode_rule_name(tr->top_rule);
}

void outcome_print_line(FILE *f, const struct process *p, const struct js_sample *s, enum decode_status st,
			int reason, const struct trace *tr)
{
	char name[512];

	fprintf(f, "%u %llu %s %s%s |", s->tid, (unsigned long long)s->time_ns, status_names[st],
		outcome_name(st, reason, tr), st == DECODE_RESOLVED && tr->from_image ? "+image" : "");
	for (uint32_t i = 0; st != DECODE_FAILED && p && i < tr->n; i++) {
		cct_frame_name(&p->jvm.methods, tr->frames[i].method_id, tr->frames[i].type, name, sizeof(name));
		fprintf(f, "%s%s@%d", i ? ";" : " ", name, tr->frames[i].bci);
	}
	fprintf(f, "\n");
}

void trace_log_init(struct trace_log *l)
{
	memset(&l->v, 0, sizeof(l->v));
}

void trace_log_free(struct trace_log *l)
{
	for (size_t i = 0; i < l->v.n; i++)
		free(l->v.v[i].frames);
	vec_free(&l->v);
}

int trace_log_add(struct trace_log *l, const struct process *p, const struct js_sample *s, enum decode_status st,
		  int reason, const struct trace *tr)
{
	struct kept_trace k = {.pid = p->pid, .tid = s->tid, .time_ns = s->time_ns, .status = st,
			       .reason = reason, .rule = tr->top_rule};

	if (st != DECODE_FAILED && tr->n) {
		k.frames = malloc(tr->n * sizeof(*k.frames));
		if (!k.frames)
			return -1;
		memcpy(k.frames, tr->frames, tr->n * sizeof(*k.frames));
		k.n = tr->n;
	}
	if (vec_push(&l->v, k) != 0) {
		free(k.frames);
		return -1;
	}
	return 0;
}

static const char *const frame_kinds[FRAME_TYPE_COUNT] = {"interpreted", "compiled", "inlined", "native", ""};

static void print_frame(FILE *f, const struct method_table *m, const struct trace_frame *fr)
{
	char name[512];
	const struct method_info *mi;
	const char *source;
	int line;

	if (fr->type == FRAME_PSEUDO || fr->type >= FRAME_TYPE_COUNT) {
		cct_frame_name(m, fr->method_id, FRAME_PSEUDO, name, sizeof(name));
		fprintf(f, "    %s\n", name);
		return;
	}
	method_table_name(m, fr->method_id, name, sizeof(name));
	fprintf(f, "    %s", name);
	mi = method_table_get(m, fr->method_id);
	source = mi ? method_table_class_source(m, mi->class_id) : NULL;
	line = method_table_line(m, fr->method_id, fr->bci);
	if (source && source[0] && line >= 0)
		fprintf(f, " (%s:%d)", source, line);
	if (fr->bci >= 0)
		fprintf(f, " bci %d,", fr->bci);
	fprintf(f, " %s%s\n", frame_kinds[fr->type], fr->flags & FRAME_FLAG_VIA_VM ? ", called through the VM" : "");
}

void trace_log_print(FILE *f, const struct trace_log *l, const struct process_table *table)
{
	for (size_t i = 0; i < l->v.n; i++) {
		const struct kept_trace *k = &l->v.v[i];
		const struct process *p = process_lookup(table, k->pid);

		fprintf(f, "sample tid %u time %llu: ", k->tid, (unsigned long long)k->time_ns);
		if (k->status == DECODE_FAILED) {
			fprintf(f, "failed, %s\n", decode_failure_name(k->reason));
			continue;
		}
		fprintf(f, "%s by %s\n", status_names[k->status],
			k->status == DECODE_NOT_JAVA ? "thread role" : decode_rule_name(k->rule));
		for (uint32_t j = k->n; p && j-- > 0;)
			print_frame(f, &p->jvm.methods, &k->frames[j]);
	}
}
