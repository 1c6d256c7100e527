#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The pipeline's accuracy: a Java program that measures its own phases'
# thread CPU time is profiled at 1 kHz for 12 s (default JVM flags: no
# PreserveFramePointer, no DebugNonSafepoints). Every phase's share in the
# CCT must be within 5 percentage points of the measured share, and at least
# 90% of the samples the process's CPU time calls for must arrive.
. "$(dirname "$0")/lib.sh"
require_environment

FREQ=1000
SECONDS_RUN=12
start_daemon --frequency $FREQ
start_jvm workload PhasedWorkload $SECONDS_RUN "$TMP/go"
wait_profiled "$JVM_PID"

ticks0=$(cpu_ticks "$JVM_PID")
samples0=$(stats_field "$JVM_PID" samples)
touch "$TMP/go"
# Wait for the workload's report, then take the second checkpoint while the
# JVM is still alive.
for _ in $(seq 1 $(( (SECONDS_RUN + 30) * 10 ))); do
	grep -q '^total' "$TMP/workload.out" 2>/dev/null && break
	kill -0 "$JVM_PID" 2>/dev/null || fail "workload died: $(cat "$TMP/workload.err")"
	sleep 0.1
done
grep -q '^total' "$TMP/workload.out" || fail "workload did not finish"
ticks1=$(cpu_ticks "$JVM_PID")
sleep 0.1 # one more drain
samples1=$(stats_field "$JVM_PID" samples)
rm -f "$TMP/go"
wait "$JVM_PID" || fail "workload exited with an error: $(cat "$TMP/workload.err")"

ctl cct "$JVM_PID" --format collapsed >"$TMP/cct.collapsed" || fail "cct query failed"
ctl stats "$JVM_PID" >"$TMP/stats.txt"
cat "$TMP/stats.txt"
hz=$(getconf CLK_TCK)
expected=$(( (ticks1 - ticks0) * FREQ / hz ))
"$PY" "$(dirname "$0")/check_accuracy.py" "$TMP/cct.collapsed" "$TMP/workload.out" \
	$((samples1 - samples0)) "$expected" 5 0.90 || fail "profile does not match the measured phases"
stop_daemon
note "passed"
