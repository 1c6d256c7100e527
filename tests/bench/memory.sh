#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# jsampled's memory with many JVMs: N JVMs (default 50) of T threads (default
# 200) each, started without flags and found by zero-config attach; prints
# jsampled's RSS and heap use while they run and after they exit.
#   tests/bench/memory.sh [jvms] [threads] [seconds] [frequency]     (root)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=$ROOT/build
JAVA=${JAVA:-/usr/lib/jvm/java-17-openjdk-amd64/bin/java}
N=${1:-50}
T=${2:-200}
SECONDS_RUN=${3:-240}
HZ=${4:-99}
TMP=$(mktemp -d /tmp/jsampled-memory.XXXXXX)
trap 'pkill -f "ManyThreads $T $SECONDS_RUN" 2>/dev/null || true; kill -INT $D 2>/dev/null || true; wait $D 2>/dev/null || true; rm -rf "$TMP"' EXIT

[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 1; }
"$B/jsampled" --socket "$TMP/q.sock" --agent-socket "$TMP/agent.sock" --agent-path "$B/libjsagent.so" \
	--frequency "$HZ" --attach auto >"$TMP/daemon.log" 2>&1 &
D=$!
for _ in $(seq 1 100); do [ -S "$TMP/q.sock" ] && break; sleep 0.1; done
rss_mib() { awk '/VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$D/status"; }
hwm_mib() { awk '/VmHWM/ {printf "%.1f", $2 / 1024}' "/proc/$D/status"; }
echo "jsampled at start: RSS $(rss_mib) MiB"
for i in $(seq 1 "$N"); do
	"$JAVA" -Xmx48m -Xss256k -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp "$B/java" ManyThreads "$T" "$SECONDS_RUN" \
		>/dev/null 2>&1 &
	sleep 0.5 # a fleet host does not start 50 JVMs in the same instant
done
start=$(date +%s)
while :; do
	live=$("$B/jsamplectl" --socket "$TMP/q.sock" list 2>/dev/null | awk '$2 == "live"' | wc -l)
	threads=$(ps -eLo comm | grep -c '^worker-' || true)
	r=$(rss_mib)
	echo "t=$(( $(date +%s) - start ))s  profiled JVMs $live/$N  worker threads $threads  jsampled RSS $r MiB"
	pgrep -f "ManyThreads $T $SECONDS_RUN" >/dev/null || break
	sleep 15
done
"$B/jsamplectl" --socket "$TMP/q.sock" stats --json >"$TMP/stats.json"
python3 - "$TMP/stats.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print(f"samples {s['samples']}, resolved {s['resolved_pct']:.2f}%, processes {s['processes']}, "
      f"jsampled cpu {s['cpu_s']:.1f} s")
PY
echo "jsampled peak RSS (VmHWM): $(hwm_mib) MiB with $N JVMs x $T threads at $HZ Hz; now $(rss_mib) MiB"
