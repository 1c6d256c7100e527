#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Profiles people look at, read back with real tools: pprof by go tool pprof
# and protoc, the flame-graph page and SVG in headless Chromium with no
# network, time windows and a diff of a workload whose hot method changes,
# and the live view (jsamplectl serve) refreshing (check_outputs.py). The
# page's own behaviour is checked on example data (check_flamegraph_page.py).
# Screenshots go to build/screenshots/.
. "$(dirname "$0")/lib.sh"
require_environment
for tool in chromium chromedriver go protoc; do
	command -v "$tool" >/dev/null || fail "$tool is not installed (run 'make deps')"
done
SHOTS=$B/screenshots
mkdir -p "$SHOTS"

"$PY" "$ROOT/tests/integration/check_flamegraph_page.py" --screenshot "$SHOTS" >"$TMP/page.log" 2>&1 ||
	{ cat "$TMP/page.log"; fail "the flame-graph page failed its checks"; }
note "flame-graph page: $(grep -c '^ok' "$TMP/page.log") checks passed"

# Windows to the second, so a window inside a phase has only that phase.
start_daemon --frequency 499 --window-resolution-s 1
start_jvm phased PhasedWorkload 10 "$TMP/go"
PHASED=$JVM_PID
start_jvm shifting ShiftingWorkload 10 "$TMP/go"
SHIFTING=$JVM_PID
start_jvm live PhasedWorkload 120
LIVE=$JVM_PID
for p in $PHASED $SHIFTING $LIVE; do wait_profiled "$p"; done
touch "$TMP/go"
for _ in $(seq 1 400); do
	grep -q '^total' "$TMP/phased.out" 2>/dev/null && grep -q '^done' "$TMP/shifting.out" 2>/dev/null && break
	sleep 0.1
done
grep -q '^total' "$TMP/phased.out" || fail "PhasedWorkload did not finish"
grep -q '^done' "$TMP/shifting.out" || fail "ShiftingWorkload did not finish"

"$PY" "$ROOT/tests/integration/check_outputs.py" --ctl "$B/jsamplectl" --socket "$TMP/q.sock" \
	--phased "$PHASED" --shifting "$SHIFTING" --shifting-out "$TMP/shifting.out" --live "$LIVE" \
	--screenshots "$SHOTS" | tee "$TMP/outputs.log"
grep -q '^all output checks passed' "$TMP/outputs.log" || fail "output checks failed (see above)"
rm -f "$TMP/go"
stop_daemon
note "passed; screenshots in $SHOTS"
