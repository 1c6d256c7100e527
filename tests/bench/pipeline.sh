#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Pipeline figures: profiles PhasedWorkload on as many busy threads as CPUs
# for RUN_S seconds at each frequency given (default 1000 10000) and prints,
# per frequency: samples/s expected (the JVM's CPU time x frequency) and
# received, resolved %, incomplete %, jsampled's own CPU % and RSS, and the
# BPF program's cost (kernel.bpf_stats_enabled, restored afterwards).
#   usage: tests/bench/pipeline.sh [FREQ...]      (root; after `make`)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=$ROOT/build
JAVA=${JAVA:-/usr/lib/jvm/java-17-openjdk-amd64/bin/java}
RUN_S=${RUN_S:-20}
THREADS=${THREADS:-$(nproc)}
FREQS=("$@")
[ ${#FREQS[@]} -gt 0 ] || FREQS=(1000 10000)
[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 1; }
TMP=$(mktemp -d /tmp/jsampled-bench.XXXXXX)
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
DAEMON=
JVM=
cleanup() {
	[ -n "$JVM" ] && kill -9 "$JVM" 2>/dev/null || true
	[ -n "$DAEMON" ] && kill -INT "$DAEMON" 2>/dev/null && wait "$DAEMON" 2>/dev/null || true
	sysctl -q kernel.bpf_stats_enabled="$old_stats"
	rm -rf "$TMP"
}
trap cleanup EXIT
sysctl -q kernel.bpf_stats_enabled=1
hz=$(getconf CLK_TCK)
ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }
field() { "$B/jsamplectl" --socket "$TMP/q.sock" stats "$1" --json | /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['$2'])"; }
bpf_prog() { # run_time_ns run_cnt of this jsampled's BPF program
	"$B/jsamplectl" --socket "$TMP/q.sock" stats --json | /usr/bin/python3 -c "
import json, sys; b = json.load(sys.stdin)['bpf']; print(b['run_time_ns'], b['run_cnt'])"
}

printf "%-7s %10s %10s %9s %9s %11s %10s %10s %12s %12s\n" "Hz" "expected/s" "received/s" "received%" \
	"resolved%" "incomplete%" "jsampled%" "rss_MiB" "bpf_ns/call" "bpf_ns/sample"
for f in "${FREQS[@]}"; do
	rm -f "$TMP"/*.sock "$TMP/go"
	"$B/jsampled" --socket "$TMP/q.sock" --frequency "$f" 2>"$TMP/daemon-$f.log" &
	DAEMON=$!
	for _ in $(seq 200); do [ -S "$TMP/q.sock" ] && break; sleep 0.05; done
	"$JAVA" "-agentpath:$B/libjsagent.so=socket:$TMP/agent.sock" -cp "$B/java" \
		PhasedWorkload $((RUN_S + 3)) "$TMP/go" "$THREADS" >"$TMP/w.out" &
	JVM=$!
	for _ in $(seq 300); do
		"$B/jsamplectl" --socket "$TMP/q.sock" list 2>/dev/null | grep "^$JVM " >/dev/null && break
		sleep 0.05
	done
	touch "$TMP/go"
	sleep 2 # past JIT warm-up
	read -r bt0 bc0 < <(bpf_prog)
	j0=$(ticks "$JVM"); d0=$(ticks "$DAEMON"); s0=$(field "$JVM" samples); t0=$(date +%s.%N)
	r0=$(field "$JVM" resolved); i0=$(field "$JVM" incomplete); f0=$(field "$JVM" failed)
	sleep "$RUN_S"
	read -r bt1 bc1 < <(bpf_prog)
	j1=$(ticks "$JVM"); d1=$(ticks "$DAEMON"); s1=$(field "$JVM" samples); t1=$(date +%s.%N)
	r1=$(field "$JVM" resolved); i1=$(field "$JVM" incomplete); f1=$(field "$JVM" failed)
	rss=$(awk '/VmRSS/ {print $2}' "/proc/$DAEMON/status")
	emitted=$(( s1 - s0 ))
	/usr/bin/python3 - "$f" "$j0" "$j1" "$d0" "$d1" "$s0" "$s1" "$t0" "$t1" "$r0" "$r1" "$i0" "$i1" "$f0" "$f1" \
		"$bt0" "$bt1" "$bc0" "$bc1" "$rss" "$hz" <<'PY'
import sys
(f, j0, j1, d0, d1, s0, s1, t0, t1, r0, r1, i0, i1, f0, f1, bt0, bt1, bc0, bc1, rss, hz) = map(float, sys.argv[1:])
wall = t1 - t0
expected = (j1 - j0) / hz * f / wall
received = (s1 - s0) / wall
java = (r1 - r0) + (i1 - i0) + (f1 - f0)
calls = max(1.0, bc1 - bc0)
print(f"{int(f):<7d} {expected:10.0f} {received:10.0f} {100 * received / max(1, expected):8.1f}% "
      f"{100 * ((r1 - r0) + (i1 - i0)) / max(1, java):8.2f}% {100 * (i1 - i0) / max(1, java):10.3f}% "
      f"{100 * (d1 - d0) / hz / wall:9.2f}% {rss / 1024:10.1f} {(bt1 - bt0) / calls:12.0f} "
      f"{(bt1 - bt0) / max(1, s1 - s0):12.0f}")
PY
	rm -f "$TMP/go"
	kill "$JVM" 2>/dev/null; wait "$JVM" 2>/dev/null || true
	JVM=
	kill -INT "$DAEMON"; wait "$DAEMON" || true
	DAEMON=
done
echo "expected/s: the JVM's CPU seconds per second x Hz; bpf_ns/call averages every"
echo "invocation (other processes exit early); bpf_ns/sample divides by samples received."
