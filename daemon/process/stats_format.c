/* SPDX-License-Identifier: GPL-2.0-only */
#include "stats_format.h"

#include "userspace/profile/json.h"

const char *process_state_label(const struct process *p)
{
	/* An attach failed or cannot be made (agent_problem says why). */
	if (p->state == PROCESS_LIVE && !p->link && p->agent_problem[0])
		return "no-agent";
	/* Sampled since its exec, its agent not here yet. */
	if (p->state == PROCESS_LIVE && p->early && !p->agent_since_ns)
		return "starting";
	return process_state_name(p->state);
}

const char *process_state_name(enum process_state s)
{
	switch (s) {
	case PROCESS_LIVE:
		return "live";
	case PROCESS_AGENT_LOST:
		return "agent-lost";
	default:
		return "exited";
	}
}

uint64_t stats_java_samples(const struct decode_stats *s)
{
	return s->resolved + s->incomplete + s->failed;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

double stats_resolved_pct(const struct decode_stats *s)
{
	return pct(s->resolved + s->incomplete, stats_java_samples(s));
}

/* Text: one aligned column of values. */
#define NAME_WIDTH 34

void stats_format_list(const struct stat_field *f, size_t n, struct wbuf *out, bool json)
{
	for (size_t i = 0; i < n; i++)
		if (json)
			wbuf_printf(out, "\"%s\":%llu,", f[i].name, f[i].value);
		else
			wbuf_printf(out, "%-*s %llu\n", NAME_WIDTH, f[i].name, f[i].value);
}

void stats_format_reals(const struct stat_real *f, size_t n, struct wbuf *out, bool json)
{
	for (size_t i = 0; i < n; i++)
		if (json)
			wbuf_printf(out, "\"%s\":%.4f,", f[i].name, f[i].value);
		else
			wbuf_printf(out, "%-*s %.3f\n", NAME_WIDTH, f[i].name, f[i].value);
}

void stats_format_group(const char *group, const struct stat_field *f, size_t n, struct wbuf *out, bool json)
{
	if (json) {
		wbuf_printf(out, "\"%s\":{", group);
		for (size_t i = 0; i < n; i++)
			wbuf_printf(out, "%s\"%s\":%llu", i ? "," : "", f[i].name, f[i].value);
		wbuf_printf(out, "},");
		return;
	}
	for (size_t i = 0; i < n; i++) {
		char name[NAME_WIDTH * 2];

		snprintf(name, sizeof(name), "%s_%s", group, f[i].name);
		wbuf_printf(out, "%-*s %llu\n", NAME_WIDTH, name, f[i].value);
	}
}

void stats_format_decode(const struct decode_stats *s, struct wbuf *out, bool json)
{
	uint64_t java = stats_java_samples(s);
	const struct stat_field f[] = {
		{"samples", s->samples},
		{"java_samples", java},
		{"resolved", s->resolved},
		{"incomplete", s->incomplete},
		{"not_java", s->not_java},
		{"failed", s->failed},
		{"wrong", s->wrong},
		{"wrong_cut", s->wrong_cut},
		{"completed", s->completed},
		{"completed_later", s->completed_later},
		{"held_extended", s->held_extended},
		{"completion_no_image", s->completion_no_image},
		{"vthread_frozen", s->vthread_frozen},
		{"vthread_chunks", s->vthread_chunks},
		{"vthread_chunk_walked", s->vthread_chunk_walked},
		{"vthread_chunk_rejected", s->vthread_chunk_rejected},
		{"vthread_rooted", s->vthread_rooted},
		{"offcpu_samples", s->offcpu_samples},
		{"offcpu_ticks", s->offcpu_ticks},
		{"offcpu_unweighed", s->offcpu_unweighed},
		{"completion_mismatch", s->completion_mismatch},
		{"completion_walk_failed", s->completion_walk_failed},
		{"completion_pending", s->completion_pending},
		{"fills", s->fills},
		{"fills_used", s->fills_used},
		{"walks_joined", s->walks_joined},
		{"frames_joined", s->frames_joined},
		{"walk_memo_bytes", s->walk_memo_bytes},
		{"stack_images_refused", s->stack_images_refused},
		{"stack_images_idled", s->stack_images_idled},
		{"stack_image_bytes", s->stack_image_bytes},
		{"held", s->held_total},
		{"held_for_layout", s->held_for[WAIT_LAYOUT]},
		{"held_for_code", s->held_for[WAIT_CODE]},
		{"held_for_method", s->held_for[WAIT_METHOD]},
		{"held_for_other", s->held_for[WAIT_UNKNOWN]},
		{"held_trimmed", s->held_trimmed},
		{"dropped", s->dropped},
		{"dropped_queue_full", s->dropped_queue_full},
		{"dropped_no_memory", s->dropped_no_memory},
		{"kernel_mode", s->kernel_mode},
		{"stack_bytes", s->stack_bytes},
	};
	const struct {
		const char *name;
		double v;
	} p[] = {
		{"resolved_pct", pct(s->resolved + s->incomplete, java)},
		{"incomplete_pct", pct(s->incomplete, java)},
		{"failed_pct", pct(s->failed, java)},
	};

	stats_format_list(f, STATS_N(f), out, json);
	for (size_t i = 0; i < STATS_N(p); i++)
		if (json)
			wbuf_printf(out, "\"%s\":%.4f,", p[i].name, p[i].v);
		else
			wbuf_printf(out, "%-*s %.2f%%\n", NAME_WIDTH, p[i].name, p[i].v);
	/* Reasons and rules: in JSON all of them, as objects; in text the
	 * ones that occurred, with what they mean. */
	wbuf_printf(out, json ? "\"reasons\":{" : "failed by\n");
	for (int r = 1, first = 1; r < DECODE_FAILURE_COUNT; r++) {
		if (json)
			wbuf_printf(out, "%s\"%s\":%llu", first ? "" : ",", decode_failure_name(r),
				    (unsigned long long)s->reasons[r]);
		else if (s->reasons[r])
			wbuf_printf(out, "  %-*s %llu  (%s)\n", NAME_WIDTH - 2, decode_failure_name(r), (unsigned long long)s->reasons[r],
				    decode_failure_description(r));
		first = 0;
	}
	wbuf_printf(out, json ? "},\"rules\":{" : "decoded by\n");
	for (int r = 1, first = 1; r < DECODE_RULE_COUNT; r++) {
		if (json)
			wbuf_printf(out, "%s\"%s\":%llu", first ? "" : ",", decode_rule_name(r),
				    (unsigned long long)s->rules[r]);
		else if (s->rules[r])
			wbuf_printf(out, "  %-*s %llu  (%s)\n", NAME_WIDTH - 2, decode_rule_name(r), (unsigned long long)s->rules[r],
				    decode_rule_description(r));
		first = 0;
	}
	if (json)
		wbuf_printf(out, "}");
}

void stats_format_process(const struct process *p, struct wbuf *out, bool json)
{
	struct process_memory pm;

	process_memory(p, &pm);
	const struct stat_field f[] = {
		{"pid", (unsigned long long)p->pid},
		{"uid", (unsigned long long)p->uid},
		{"cct_nodes", p->cct.nodes.n},
		{"cct_bytes", cct_bytes(&p->cct)},
		{"cct_overflow_samples", p->cct.overflow_samples},
		{"cct_prunes", p->cct.prunes},
		{"cct_pruned_nodes", p->cct.pruned_nodes},
		{"cct_prune_ms", p->cct.prune_ns / 1000000},
		{"model_bytes", jvm_model_bytes(&p->jvm)},
		{"memory_bytes", process_memory_bytes(p)},
		/* memory_bytes, by what holds it */
		{"memory_code_map_bytes", pm.code_map},
		{"memory_methods_bytes", pm.methods},
		{"memory_shared_names_bytes", pm.shared},
		{"memory_threads_bytes", pm.threads},
		{"memory_trees_bytes", pm.trees},
		{"memory_event_trees_bytes", pm.event_trees},
		{"memory_held_bytes", pm.held},
		{"memory_stack_images_bytes", pm.images},
		{"memory_native_bytes", pm.native},
		{"native_names_bytes", p->names.bytes},
		{"native_names_capped", p->names.capped},
		{"code_blobs", p->jvm.code.blobs.n},
		{"classes", p->jvm.methods.classes.n},
		{"methods", p->jvm.methods.methods.n},
		{"classes_dropped", p->jvm.methods.dropped_classes},
		{"methods_dropped", p->jvm.methods.dropped_methods},
		{"malformed_records", p->jvm.malformed_records},
		{"incomplete_grafted", p->contexts.grafted},
		{"incomplete_truncated", p->contexts.truncated},
		{"held_bytes", p->held.bytes},
		{"held_samples", sample_queue_len(&p->held)},
		{"held_peak_bytes", p->held.peak_bytes},
		{"held_shared_bytes", p->held.shared_bytes},
		{"foreign_threads", p->foreign_threads},
		{"sampled_since_exec", p->early},
		{"agent_said_bye", p->agent_said_bye},
		/* 0 unless the agent came after the start (times from two
		 * sources must not wrap into a huge delay). */
		{"agent_after_exec_ms", p->early && p->agent_since_ns > p->early_since_ns
						? (p->agent_since_ns - p->early_since_ns) / 1000000
						: 0},
		{"cpu_ms", p->cpu_ns / 1000000},
		{"profiled_cpu_ms", p->profiled_ns / 1000000},
		{"profiled_offcpu_ms", p->offcpu_ns / 1000000},
		{"alloc_events", p->events.alloc_events},
		{"monitor_events", p->events.monitor_events},
		{"park_events", p->events.park_events},
		{"events_malformed", p->events.malformed},
		{"events_agent_dropped", p->events.agent_dropped},
		{"events_no_memory", p->events.no_memory},
		{"event_tree_bytes", event_profiles_bytes(&p->events)},
	};
	/* The share of its CPU time (the kernel's count, as last read) that its
	 * profile covers: samples in the tree times the sampling period. */
	const struct stat_real covered[] = {
		{"cpu_covered_pct", p->cpu_ns ? 100.0 * (double)p->profiled_ns / (double)p->cpu_ns : 0.0},
	};

	if (json)
		wbuf_printf(out, "{");
	stats_format_list(f, STATS_N(f), out, json);
	stats_format_reals(covered, STATS_N(covered), out, json);
	if (json) {
		wbuf_printf(out, "\"state\":\"%s\",\"restored\":%s,\"over_limit\":%s,\"comm\":",
			    process_state_label(p), p->restored ? "true" : "false", p->over_limit ? "true" : "false");
		json_quote(out, p->comm);
		wbuf_printf(out, ",\"vm\":");
		json_quote(out, p->vm);
		wbuf_printf(out, ",\"agent_problem\":");
		json_quote(out, p->agent_problem);
		wbuf_printf(out, ",");
	} else {
		wbuf_printf(out, "%-*s %s\n%-*s %s\n%-*s %s\n%-*s %s\n%-*s %s\n", NAME_WIDTH, "state",
			    process_state_label(p), NAME_WIDTH, "restored", p->restored ? "true" : "false",
			    NAME_WIDTH, "over_limit", p->over_limit ? "true" : "false", NAME_WIDTH, "comm", p->comm,
			    NAME_WIDTH, "vm", p->vm);
		wbuf_printf(out, "%-*s %s\n", NAME_WIDTH, "agent_problem", p->agent_problem);
	}
	stats_format_decode(&p->stats, out, json);
	if (json)
		wbuf_printf(out, "}\n");
}
