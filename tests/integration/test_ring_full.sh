#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# A full ring buffer costs counted drops, never a stall: with a 1 MiB ring,
# no early wake-up and a 500 ms drain period, a busy JVM sampled at 10 kHz
# overflows the ring between drains. Records must be dropped and counted
# (bpf ringbuf_full, "dropped"), samples must keep arriving after every
# drain, and sampling must go on at the full rate.
. "$(dirname "$0")/lib.sh"
require_environment

start_daemon --frequency 10000 --ringbuf-mb 1 --wakeup-kb 4194304 --drain-ms 500
start_jvm busy PhasedWorkload 60 "$TMP/go"
wait_profiled "$JVM_PID"
touch "$TMP/go"
sleep 1
s1=$(stats_field "$JVM_PID" samples)
prev=$s1
for window in 1 2 3; do
	sleep 1
	now=$(stats_field "$JVM_PID" samples)
	# Each second brings two drains of a refilled ring (~200 records each).
	[ $((now - prev)) -gt 50 ] || fail "no samples arrived in second $window ($prev -> $now): stalled"
	prev=$now
done
s2=$prev
ctl stats --json >"$TMP/global.json"
read -r full target emitted dropped < <("$PY" -c "
import json; g = json.load(open('$TMP/global.json'))
print(g['bpf']['ringbuf_full'], g['bpf']['target'], g['bpf']['emitted'], g['dropped'])")
note "in 3 s: $((s2 - s1)) samples received; bpf target $target, emitted $emitted, ring full $full; dropped $dropped"
[ "$full" -gt 0 ] || fail "the ring never filled: the test did not test anything"
[ "$dropped" -ge "$full" ] || fail "dropped ($dropped) does not include the ring-full drops ($full)"
# The sampler itself kept its rate: the BPF program saw the busy thread at
# well over 5 kHz over the ~4.5 s run.
[ "$target" -gt 20000 ] || fail "the BPF program saw only $target target events"
kill -0 "$DAEMON_PID" || fail "jsampled died"
rm -f "$TMP/go"
kill "$JVM_PID"
stop_daemon
note "passed"
