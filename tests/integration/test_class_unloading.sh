#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# A JVM that defines hidden classes without end (as scripting engines and
# proxy generators do) stays profiled to its end: its agent reports the
# classes the JVM unloads, jsampled drops them (keeping the names its
# profile uses), and its agent data stays under the default --max-model-mb.
# Before class unloading was tracked, this JVM's data passed the limit
# within seconds and jsampled stopped profiling it.
. "$(dirname "$0")/lib.sh"
require_environment

LIMIT_MB=${LIMIT_MB:-40} # the default
SECONDS_RUN=20
start_daemon --frequency 999 --max-model-mb "$LIMIT_MB"
start_jvm churn HiddenClassChurn "$SECONDS_RUN"
wait_profiled "$JVM_PID"
# Polled while it runs: the last answer before it exits is its final state.
: >"$TMP/polls.txt"
while kill -0 "$JVM_PID" 2>/dev/null; do
	ctl stats "$JVM_PID" --json >"$TMP/poll.json" 2>/dev/null && cat "$TMP/poll.json" >>"$TMP/polls.txt" && echo >>"$TMP/polls.txt"
	sleep 0.5
done
wait "$JVM_PID" || fail "the workload failed: $(tail -5 "$TMP/churn.err")"
grep -q "^classes " "$TMP/churn.out" || fail "the workload printed no class count"
ctl stats "$JVM_PID" --json >"$TMP/stats.json"
ctl cct "$JVM_PID" --format collapsed >"$TMP/cct.txt"
"$PY" - "$TMP/polls.txt" "$TMP/stats.json" "$TMP/cct.txt" "$TMP/churn.out" "$LIMIT_MB" <<'PYEOF' || fail "see above"
import json, sys
polls = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
final = json.load(open(sys.argv[2]))
cct = open(sys.argv[3]).read().splitlines()
defined = int(open(sys.argv[4]).read().split()[1])
limit = int(sys.argv[5]) << 20
peak = max(p["model_bytes"] for p in polls)
print(f"[test_class_unloading] {defined} hidden classes defined; jsampled dropped {final['classes_dropped']} "
      f"classes and {final['methods_dropped']} methods; agent data peak {peak / 2**20:.1f} MiB "
      f"(limit {limit >> 20} MiB) over {len(polls)} polls; {final['samples']} samples, "
      f"{final['cpu_covered_pct']:.1f}% of its CPU time profiled")
bad = []
if final["over_limit"] or any(p["over_limit"] for p in polls):
    bad.append("jsampled stopped profiling it: agent data over the limit")
if final["classes_dropped"] <= 0 or final["methods_dropped"] <= 0:
    bad.append("no unloaded class was dropped")
if peak > limit:
    bad.append(f"agent data peaked at {peak} bytes, over the limit")
# Sampled to the end: the samples grew over the last polls too.
tail = [p["samples"] for p in polls[-6:]]
if len(polls) < 10 or tail[-1] <= tail[0]:
    bad.append(f"no samples over its last polls: {tail}")
frames = [f for line in cct for f in line.rsplit(" ", 1)[0].split(";")]
unknown = [f for f in frames if "unknown method" in f or "unknown class" in f]
if unknown:
    bad.append(f"{len(unknown)} frames lost their names, e.g. {unknown[0]}")
for want in ("HiddenClassChurn.churnSpin", "HiddenClassChurn$Template."):
    if not any(want in f for f in frames):
        bad.append(f"no frame of {want} in the profile")
for b in bad:
    print("[test_class_unloading] " + b)
sys.exit(1 if bad else 0)
PYEOF
grep -q "disabled" "$TMP/churn.err" && fail "the agent disabled itself: $(grep disabled "$TMP/churn.err")"
stop_daemon
note "passed"
