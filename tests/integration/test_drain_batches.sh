#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# jsampled drains its ring in big batches (a burst of work after a sleep
# runs slowly at first, so fewer, longer bursts cost less per sample), yet
# answers stay current: a query drains the ring before it is answered.
# 1. Idle, jsampled drains every --drain-ms (default 500 ms), and sleeps
#    between: its timer fires for the agents' fetch before a drain and for
#    the drain, not every 10 ms (a wake-up costs tens of us on a VM).
# 2. With a 1 s drain period and no early wake-up, samples taken between
#    two queries 150 ms apart are in the second answer.
. "$(dirname "$0")/lib.sh"
require_environment

global_fields() { # drains, sleeps and the host's execs jsampled saw, from one query
	ctl stats --json | "$PY" -c "import json,sys; g = json.load(sys.stdin); print(g['daemon']['drains'], g['sleeps'], g['discovery']['execs_seen'])"
}

start_daemon
sleep 0.5
read -r d1 s1 e1 < <(global_fields)
sleep 2
read -r d2 s2 e2 < <(global_fields)
note "idle: $((d2 - d1)) drains and $((s2 - s1)) wake-ups in 2 s, while the host ran $((e2 - e1)) execs"
[ $((d2 - d1)) -le 20 ] || fail "$((d2 - d1)) drains in 2 s while idle: not batched"
# A drain and the fetch before it every 500 ms (8 in 2 s), the
# maintenance tick, this test's query: ~12, plus up to one per exec on the
# host (its exec event; a busy machine runs dozens a second). A 10 ms tick
# alone made 200.
allowed=$((30 + 2 * (e2 - e1)))
[ $((s2 - s1)) -le $allowed ] ||
	fail "$((s2 - s1)) wake-ups in 2 s while idle (at most $allowed for $((e2 - e1)) execs): the drain timer fires for nothing"
stop_daemon

start_daemon --frequency 1000 --drain-ms 1000 --wakeup-kb 4194304
start_jvm busy PhasedWorkload 60 "$TMP/go"
wait_profiled "$JVM_PID"
touch "$TMP/go"
sleep 1
grew=0
for pair in 1 2 3 4 5; do
	a=$(stats_field "$JVM_PID" samples)
	sleep 0.15
	b=$(stats_field "$JVM_PID" samples)
	note "pair $pair: $a -> $b samples"
	[ "$b" -gt "$a" ] && grew=$((grew + 1))
done
# Without the drain before an answer, at most one pair in 1 s of them could
# straddle a timer drain.
[ "$grew" -eq 5 ] || fail "only $grew of 5 answers 150 ms apart saw new samples: queries are not drained first"
rm -f "$TMP/go"
kill "$JVM_PID"
stop_daemon
note "passed"
