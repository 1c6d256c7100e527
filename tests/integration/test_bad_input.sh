#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Bad input gets a clear error and loses nothing, and nothing crashes the
# daemon (run here as its ASan/UBSan build): an unknown pid, malformed
# requests, agents that send garbage or lie, and a JVM killed mid-stream
# whose profile must stay queryable.
. "$(dirname "$0")/lib.sh"
DAEMON=$B/asan/jsampled
require_environment
RAW="$PY $(dirname "$0")/rawclient.py"

start_daemon --frequency 499

# An unknown pid: a clear error and exit status 1.
out=$(ctl cct 999999 2>&1) && fail "cct of an unknown pid succeeded"
[ "$out" = "jsamplectl: no profiled process 999999" ] || fail "unexpected message: $out"
ctl stats 999999 >/dev/null 2>&1 && fail "stats of an unknown pid succeeded"

# Malformed requests on the query socket.
ans=$($RAW query "$TMP/q.sock" "b'cct 1 2 3 4 5 6 7 8 9\n'")
[[ "$ans" == "ERROR too many arguments"* ]] || fail "too many arguments: $ans"
ans=$($RAW query "$TMP/q.sock" "b'\x00\x01\x02\n'")
[[ "$ans" == ERROR* ]] || fail "binary request: $ans"
ans=$($RAW query "$TMP/q.sock" long:5000)
[[ "$ans" == "ERROR request too long"* ]] || fail "long request: $ans"
ans=$($RAW query "$TMP/q.sock" "b'cct abc\n'")
[[ "$ans" == "ERROR pid must be"* ]] || fail "bad pid: $ans"
note "query socket: malformed requests answered with ERROR"

# Agents that misbehave are disconnected; the daemon stays up.
for mode in garbage bad-magic huge-frame lying-batch silent; do
	$RAW agent "$TMP/agent.sock" $mode >"$TMP/agent-$mode.txt" || fail "agent '$mode' was not disconnected: $(cat "$TMP/agent-$mode.txt")"
done
kill -0 "$DAEMON_PID" || fail "jsampled died"
note "agent socket: garbage, bad magic, huge frame, lying batch and a silent client were all disconnected"

# A real JVM, killed with SIGKILL while being sampled.
start_jvm victim PhasedWorkload 60 "$TMP/go"
wait_profiled "$JVM_PID"
touch "$TMP/go"
sleep 3
before=$(stats_field "$JVM_PID" samples)
[ "$before" -gt 100 ] || fail "only $before samples after 3 s"
kill -9 "$JVM_PID"
wait "$JVM_PID" 2>/dev/null || true
for _ in $(seq 1 60); do
	ctl list | awk -v p="$JVM_PID" '$1 == p && $2 == "exited" {f=1} END {exit !f}' && break
	sleep 0.1
done
ctl list | awk -v p="$JVM_PID" '$1 == p && $2 == "exited" {f=1} END {exit !f}' || fail "killed JVM not marked exited: $(ctl list)"
after=$(stats_field "$JVM_PID" samples)
[ "$after" -ge "$before" ] || fail "samples went from $before to $after"
ctl cct "$JVM_PID" --format collapsed | grep "PhasedWorkload.phase" >/dev/null || fail "the exited JVM's CCT lost its phases"
note "killed JVM: $after samples kept, CCT still queryable, state exited"

ctl stats >"$TMP/global.txt" || fail "global stats failed"
stop_daemon
note "passed"
