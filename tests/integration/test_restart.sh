#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Profiles survive a restart of jsampled: saved to the state directory at
# stop (and periodically), restored at start, and a JVM still running goes
# on in the same tree once its agent reconnects. A damaged state file is
# reported and set aside, never trusted.
source "$(dirname "$0")/lib.sh"
require_environment
public_files
mkdir -p "$TMP/state"

fib_samples() { # samples under PhasedWorkload.fib in a collapsed CCT
	ctl cct "$1" --format collapsed | awk '/PhasedWorkload\.fib/ {s += $NF} END {print s + 0}'
}

# --verbose: an attach that is slow shows each step in daemon.log.
ATTACH=auto start_daemon --agent-path "$TMP/libjsagent.so" --frequency 499 --state-dir "$TMP/state" --save-interval-s 2 --verbose
start_plain_jvm live PhasedWorkload 120 - 1
LIVE=$JVM_PID
start_plain_jvm short PhasedWorkload 3 - 1
SHORT=$JVM_PID
wait_profiled "$LIVE"
wait_profiled "$SHORT"
wait "$SHORT" || fail "the short JVM failed"
sleep 3
before=$(list_field "$LIVE" 3)
fib_before=$(fib_samples "$LIVE")
short_before=$(list_field "$SHORT" 3)
[ "$(list_field "$SHORT" 2)" = exited ] || fail "the short JVM is not recorded as exited"
stop_daemon
[ -s "$TMP/state/profiles.bin" ] || fail "no state saved at stop"
note "before restart: live $before samples ($fib_before in fib), exited $short_before"

ATTACH=auto start_daemon --agent-path "$TMP/libjsagent.so" --frequency 499 --state-dir "$TMP/state"
# Both JVMs' profiles (and any other JVM's the daemon met meanwhile).
grep -qE "restored [0-9]+ profiles" "$TMP/daemon.log" || fail "profiles not restored"
after0=$(list_field "$LIVE" 3)
[ "$after0" -ge "$before" ] || fail "restored count $after0 < $before saved"
[ "$(list_field "$SHORT" 3)" = "$short_before" ] || fail "the exited JVM's profile changed across the restart"
[ "$(list_field "$SHORT" 2)" = exited ] || fail "the exited JVM is not exited after restore"
wait_profiled "$LIVE"
sleep 3
after=$(list_field "$LIVE" 3)
fib_after=$(fib_samples "$LIVE")
[ "$after" -gt "$before" ] || fail "the live JVM's profile did not continue ($before -> $after)"
[ "$fib_after" -gt "$fib_before" ] || fail "fib samples did not continue in the same tree ($fib_before -> $fib_after)"
grep -q "agent of pid $LIVE is back" "$TMP/daemon.log" || fail "the agent did not reconnect to the restored profile"
ctl cct "$LIVE" --format collapsed | grep -q "unknown method" && fail "method names lost across the restart"
note "after restart: live $after0 restored, $after after 3 s ($fib_before -> $fib_after in fib)"
stop_daemon

# A damaged state file: reported, set aside, the daemon still starts.
printf 'garbage' | dd of="$TMP/state/profiles.bin" bs=1 seek=100 conv=notrunc status=none
ATTACH=off start_daemon --state-dir "$TMP/state"
grep -q "cannot restore profiles.*checksum" "$TMP/daemon.log" || fail "a damaged state file was not reported"
[ -f "$TMP/state/profiles.bin.bad" ] || fail "the damaged state file was not set aside"
stop_daemon
note "damaged state: reported and set aside"
note "ok"
