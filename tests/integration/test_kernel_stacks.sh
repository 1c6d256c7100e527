#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Kernel stacks: a JVM that spends most of its CPU in syscalls
# (WorkloadSyscalls: pwrite64 in writeLoop, stat in statLoop) profiled with
# jsampled's default --kernel-stacks on. `jsamplectl cct --view mixed` shows
# kernel frames (`_[k]`) at the leaf end of the stacks, above the Java
# frames that made the syscall (the write path above writeLoop, the stat
# path above statLoop); the default view (= --view java) hides them and
# gives their samples to the Java frame below, so it has the same samples.
# Then a daemon with --kernel-stacks off: no kernel frame in any view.
# check_kernel_stacks.py does the checks and prints the figures.
. "$(dirname "$0")/lib.sh"
require_environment
[ -f "$B/java/WorkloadSyscalls.class" ] || fail "WorkloadSyscalls not built (run 'make java')"
"$DAEMON" --help 2>&1 | grep -c -- --kernel-stacks >/dev/null || fail "jsampled has no --kernel-stacks option"

# fetch_view PID VIEW FILE: the collapsed CCT in that view (java: the default,
# no --view; java-explicit: --view java).
fetch_view() {
	local args=(cct "$1" --format collapsed)
	case $2 in
	java) ;;
	java-explicit) args+=(--view java) ;;
	*) args+=(--view "$2") ;;
	esac
	ctl "${args[@]}" >"$3" 2>"$TMP/ctl.err" || fail "jsamplectl ${args[*]} failed: $(cat "$TMP/ctl.err")"
}

# freeze PID: stops the JVM (no more samples) and waits until its mixed
# view's sample count stops changing (the daemon has drained what was
# recorded), so that the views fetched next are of the same samples.
freeze() {
	local prev=-1 cur
	kill -STOP "$1" || fail "cannot stop JVM $1"
	for _ in $(seq 1 40); do
		sleep 0.5
		fetch_view "$1" mixed "$TMP/settle.txt"
		cur=$(awk '{ s += $NF } END { print s + 0 }' "$TMP/settle.txt")
		[ "$cur" = "$prev" ] && return 0
		prev=$cur
	done
	fail "the profile of JVM $1 did not settle within 20 s after it was stopped (last count $cur)"
}

# views PID NAME: the three views of a frozen profile into $TMP/NAME.{mixed,java,java-explicit}.
views() {
	fetch_view "$1" mixed "$TMP/$2.mixed"
	fetch_view "$1" java "$TMP/$2.java"
	fetch_view "$1" java-explicit "$TMP/$2.java-explicit"
}

# run_check on|off: check_kernel_stacks.py on the views named after the mode.
run_check() {
	local rc=0
	"$PY" "$ROOT/tests/integration/check_kernel_stacks.py" "$1" "$TMP/$1.mixed" "$TMP/$1.java" \
		"$TMP/$1.java-explicit" >"$TMP/check-$1.log" 2>&1 || rc=$?
	cat "$TMP/check-$1.log"
	[ $rc -eq 0 ] && grep -q '^all kernel stack checks passed' "$TMP/check-$1.log" ||
		fail "kernel stack checks failed with --kernel-stacks $1 (see above; the views are $TMP/$1.*)"
}

# 1. --kernel-stacks on (the default).
start_daemon --frequency 999
start_jvm syscalls -Djava.io.tmpdir="$TMP" WorkloadSyscalls 30
ON=$JVM_PID
wait_profiled "$ON"
sleep 10
kill -0 "$ON" 2>/dev/null || fail "WorkloadSyscalls exited early: $(cat "$TMP/syscalls.err")"
read -r u s < <(awk '{ sub(/^.*\) /, ""); print $12, $13 }' "/proc/$ON/stat")
note "WorkloadSyscalls so far: utime $u, stime $s ticks"
freeze "$ON"
views "$ON" on
run_check on
kill -9 "$ON"
wait "$ON" 2>/dev/null || true
stop_daemon

# 2. --kernel-stacks off: the same workload, no kernel frames.
start_daemon --frequency 999 --kernel-stacks off
start_jvm syscalls-off -Djava.io.tmpdir="$TMP" WorkloadSyscalls 12
OFF=$JVM_PID
wait_profiled "$OFF"
sleep 5
kill -0 "$OFF" 2>/dev/null || fail "WorkloadSyscalls exited early: $(cat "$TMP/syscalls-off.err")"
freeze "$OFF"
views "$OFF" off
run_check off
kill -9 "$OFF"
wait "$OFF" 2>/dev/null || true
stop_daemon
note passed
