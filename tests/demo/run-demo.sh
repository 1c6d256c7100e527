#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The demo: jsampled profiles a bundled Java workload (tests/java/
# PhasedWorkload.java, four phases of known CPU shares) at 999 Hz without any
# special JVM flag but our agent, then prints the process's calling-context
# tree, the same profile in collapsed form, and the decoder's counters, and
# writes its flame-graph page (build/demo/flamegraph.html) and SVG.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=$ROOT/build
JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
SECONDS_RUN=${DEMO_SECONDS:-10}
DIR=$(mktemp -d /tmp/jsampled-demo.XXXXXX)
SOCK=$DIR/jsampled.sock

[ "$(id -u)" = 0 ] || { echo "the demo needs root (BPF and perf events)" >&2; exit 1; }
cleanup() {
	[ -n "${JVM:-}" ] && kill "$JVM" 2>/dev/null || true
	[ -n "${DAEMON:-}" ] && kill -INT "$DAEMON" 2>/dev/null && wait "$DAEMON" 2>/dev/null || true
	rm -rf "$DIR"
}
trap cleanup EXIT

echo "== starting jsampled (999 Hz, socket $SOCK)"
"$B/jsampled" --socket "$SOCK" --frequency 999 2>"$DIR/jsampled.log" &
DAEMON=$!
for _ in $(seq 100); do [ -S "$SOCK" ] && break; sleep 0.05; done
[ -S "$SOCK" ] || { cat "$DIR/jsampled.log" >&2; exit 1; }

echo "== running PhasedWorkload for $SECONDS_RUN s with -agentpath:$B/libjsagent.so"
"$JAVA_HOME/bin/java" "-agentpath:$B/libjsagent.so=socket:$DIR/agent.sock" -cp "$B/java" \
	PhasedWorkload "$SECONDS_RUN" "$DIR/go" >"$DIR/workload.out" &
JVM=$!
for _ in $(seq 300); do
	"$B/jsamplectl" --socket "$SOCK" list 2>/dev/null | grep "^$JVM " >/dev/null && break
	sleep 0.05
done
touch "$DIR/go"
while ! grep -q '^total' "$DIR/workload.out" 2>/dev/null; do
	kill -0 "$JVM" 2>/dev/null || { echo "workload failed" >&2; exit 1; }
	sleep 0.2
done

echo
echo "== jsamplectl list"
"$B/jsamplectl" --socket "$SOCK" list
echo
echo "== jsamplectl cct $JVM   (frames: _[j] compiled, _[i] inlined, _[0] interpreted)"
"$B/jsamplectl" --socket "$SOCK" cct "$JVM" | awk 'NR <= 40'
echo "   ..."
echo
echo "== jsamplectl cct $JVM --format collapsed   (heaviest 8 stacks, FlameGraph input)"
"$B/jsamplectl" --socket "$SOCK" cct "$JVM" --format collapsed | sort -t' ' -k2 -nr | awk 'NR <= 8'
echo
echo "== what the workload measured itself (thread CPU time per phase)"
awk '$1 == "phase" { t[$2] = $3; s += $3 } END { for (p in t) printf "   %-14s %6.2f%%\n", p, 100 * t[p] / s }' "$DIR/workload.out" | sort
echo
echo "== jsamplectl stats $JVM"
"$B/jsamplectl" --socket "$SOCK" stats "$JVM"
mkdir -p "$B/demo"
"$B/jsamplectl" --socket "$SOCK" cct "$JVM" --format html -o "$B/demo/flamegraph.html"
"$B/jsamplectl" --socket "$SOCK" cct "$JVM" --format svg -o "$B/demo/flamegraph.svg"
echo
echo "== the flame graph: open it in a browser"
echo "   $B/demo/flamegraph.html   (interactive page: search, zoom, time windows)"
echo "   $B/demo/flamegraph.svg"
rm -f "$DIR/go"
wait "$JVM" || true
JVM=
