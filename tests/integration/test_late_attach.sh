#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The agent loaded into a running JVM with `jcmd <pid> JVMTI.agent_load`
# (no flag at JVM start): existing code is replayed with GenerateEvents and
# the process is profiled like one started with -agentpath.
. "$(dirname "$0")/lib.sh"
require_environment
[ -x "$JCMD" ] || fail "no jcmd at $JCMD"

start_daemon --frequency 999
"$JAVA" -cp "$B/java" PhasedWorkload 30 >"$TMP/late.out" 2>"$TMP/late.err" &
JVM_PID=$!
JVM_PIDS+=("$JVM_PID")
sleep 3 # let it run and JIT-compile before the agent arrives
"$JCMD" "$JVM_PID" JVMTI.agent_load "$AGENT" "socket:$TMP/agent.sock" >"$TMP/jcmd.out" 2>&1 ||
	fail "jcmd failed: $(cat "$TMP/jcmd.out")"
wait_profiled "$JVM_PID"
sleep 5
ctl stats "$JVM_PID" --json >"$TMP/stats.json"
read -r samples pct < <("$PY" -c "
import json; s = json.load(open('$TMP/stats.json')); print(s['samples'], s['resolved_pct'])")
note "late attach: $samples samples, $pct% resolved"
[ "$samples" -gt 2000 ] || fail "only $samples samples in 5 s"
"$PY" -c "import sys; sys.exit(0 if $pct >= 95 else 1)" || fail "only $pct% resolved after a late attach"
ctl cct "$JVM_PID" --format collapsed >"$TMP/cct.txt"
for phase in phaseMatrix phaseHash phaseSort phaseRecurse; do
	grep -q "PhasedWorkload.$phase" "$TMP/cct.txt" || fail "$phase missing from the CCT"
done
# Loading it a second time is refused by the agent itself, harmlessly.
"$JCMD" "$JVM_PID" JVMTI.agent_load "$AGENT" "socket:$TMP/agent.sock" >"$TMP/jcmd2.out" 2>&1 || true
sleep 1
kill -0 "$JVM_PID" || fail "the JVM died after a second load"
ctl list | awk -v p="$JVM_PID" '$1 == p && $2 == "live" {f=1} END {exit !f}' || fail "the second load disturbed profiling"
kill "$JVM_PID"
stop_daemon
note "passed"
