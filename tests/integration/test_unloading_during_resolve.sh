#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The agent resolves a new method's names, lines and call targets on its own
# thread, often after the method's class became garbage: hidden classes of
# scripting engines and proxies live for a moment. Here they are defined and
# dropped while a concurrent mark starts every 50 classes (System.gc() with
# -XX:+ExplicitGCInvokesConcurrent), so classes are unloaded while their
# methods wait to be resolved. The JVM must live to its end with its profile
# named. Before the agent held a class through a weak reference while asking
# about it (userspace/agent/class_refs.h), such a JVM could die in
# GetConstantPool reading the freed class; the window was microseconds wide,
# so this test caught it rarely, and with a 2 ms pause put into that window
# (a throwaway build) in one of a few runs.
. "$(dirname "$0")/lib.sh"
require_environment

SECONDS_RUN=15
GC_EVERY=50
start_daemon --frequency 999
start_jvm churn -XX:+ExplicitGCInvokesConcurrent "-XX:ErrorFile=$TMP/hs_err_%p.log" \
	HiddenClassChurn "$SECONDS_RUN" "$GC_EVERY"
wait_profiled "$JVM_PID"
rc=0
wait "$JVM_PID" || rc=$?
for f in "$TMP"/hs_err_*.log; do
	[ -f "$f" ] && fail "the JVM crashed (exit $rc) in $(grep -m1 -A3 '^Native frames' "$f" | tail -3 |
		tr -s ' ' | tr '\n' ';') (hs_err: $f)"
done
[ "$rc" = 0 ] || fail "the workload failed (exit $rc): $(tail -5 "$TMP/churn.err")"
grep -q "disabled" "$TMP/churn.err" && fail "the agent disabled itself: $(grep disabled "$TMP/churn.err")"
defined=$(awk '$1 == "classes" {print $2}' "$TMP/churn.out")
[ -n "$defined" ] || fail "the workload printed no class count"
ctl stats "$JVM_PID" --json >"$TMP/stats.json"
ctl cct "$JVM_PID" --format collapsed >"$TMP/cct.txt"
"$PY" - "$TMP/stats.json" "$TMP/cct.txt" "$defined" <<'PYEOF' || fail "see above"
import json, sys
final = json.load(open(sys.argv[1]))
cct = open(sys.argv[2]).read().splitlines()
defined = int(sys.argv[3])
print(f"[test_unloading_during_resolve] {defined} hidden classes defined; jsampled dropped "
      f"{final['classes_dropped']} unloaded classes; {final['samples']} samples")
bad = []
if final["classes_dropped"] <= 0:
    bad.append("no unloaded class was reported")
frames = [f for line in cct for f in line.rsplit(" ", 1)[0].split(";")]
for want in ("HiddenClassChurn.churnSpin", "HiddenClassChurn$Template."):
    if not any(want in f for f in frames):
        bad.append(f"no frame of {want} in the profile")
for b in bad:
    print("[test_unloading_during_resolve] " + b)
sys.exit(1 if bad else 0)
PYEOF
stop_daemon
note "passed"
