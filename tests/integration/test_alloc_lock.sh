#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Allocation and lock-contention profiles against the truth.
# WorkloadAllocations allocates about 50/30/20 % of its bytes on three
# sites (64 KiB arrays, int arrays of mixed sizes, small objects from an
# inlined helper), measuring each site's bytes with the JVM's own count;
# WorkloadLocks contends for a monitor, a ReentrantLock and a write lock,
# timing its own waits. jsampled (--alloc on --lock on) profiles both;
# check_event_truth.py matches the pprof profiles' values (bytes and
# objects; wait time and contentions) with the truth by TVD. On JDK 17 and
# on the machine image's JDK 25. First, with both off, the agent samples
# nothing, a reload turns allocation sampling on in a running JVM, and
# `jsamplectl alloc off` stops it.
. "$(dirname "$0")/lib.sh"
require_environment
for c in WorkloadAllocations WorkloadLocks; do
	[ -f "$B/java/$c.class" ] || fail "$c not built (run 'make java')"
done
SECONDS_RUN=6

# raw FILE: go tool pprof's reading of a profile, into FILE.raw.
raw() {
	HOME=$TMP GOCACHE=$TMP/gocache go tool pprof -raw "$1" >"$1.raw" 2>"$TMP/pprof.err" ||
		fail "go tool pprof -raw $1: $(cat "$TMP/pprof.err")"
}

# wait_truth NAME PID: until the JVM printed its truth and exited.
wait_truth() {
	for _ in $(seq 1 $((SECONDS_RUN * 10 + 150))); do
		grep -q '^run ' "$TMP/$1.out" 2>/dev/null && break
		sleep 0.1
	done
	wait "$2" || fail "the $1 JVM failed: $(cat "$TMP/$1.err")"
	grep -q '^run ' "$TMP/$1.out" || fail "$1 printed no truth: $(cat "$TMP/$1.err")"
	! grep -q "Re-registering" "$TMP/$1.out" "$TMP/$1.err" || fail "$1: the JVM warned of the park hook"
}

# Off means off; a reload turns sampling on in the running JVM.
reload_phase() {
	local pid n
	printf 'alloc = off\nlock = off\n' >"$TMP/jsampled.conf"
	start_daemon --config "$TMP/jsampled.conf"
	start_jvm reload WorkloadAllocations 8
	pid=$JVM_PID
	wait_profiled "$pid"
	sleep 2
	n=$(stats_field "$pid" alloc_events)
	[ "$n" = 0 ] || fail "with --alloc off the agent sampled $n allocations"
	printf 'alloc = on\nlock = off\n' >"$TMP/jsampled.conf"
	kill -HUP "$DAEMON_PID"
	for _ in $(seq 1 50); do
		n=$(stats_field "$pid" alloc_events)
		[ "$n" -gt 0 ] && break
		sleep 0.1
	done
	[ "$n" -gt 0 ] || fail "a reload with alloc = on did not start allocation sampling"
	note "alloc off: 0 events; after a reload with alloc = on: $n within seconds"
	# jsamplectl alloc off: the agent stops at once (what it had buffered
	# still comes with the next fetch).
	ctl alloc off >/dev/null || fail "jsamplectl alloc off failed"
	sleep 2.5
	local before after
	before=$(stats_field "$pid" alloc_events)
	sleep 2
	after=$(stats_field "$pid" alloc_events)
	[ "$after" = "$before" ] || fail "after jsamplectl alloc off the agent still sampled ($before, then $after)"
	note "jsamplectl alloc off: no more events ($after)"
	kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true
	stop_daemon
}

# truth NAME JAVA
truth() {
	local name=$1 java=$2 pid kind
	[ -x "$java" ] || fail "no $java (the machine image's JDK: see ../shared/platform.md)"
	start_daemon --alloc on --alloc-interval-kb 128 --lock on --lock-interval-us 200
	for kind in alloc lock; do
		local prog=WorkloadAllocations
		[ $kind = lock ] && prog=WorkloadLocks
		JAVA=$java start_jvm "$name-$kind" $prog $SECONDS_RUN
		pid=$JVM_PID
		wait_profiled "$pid"
		wait_truth "$name-$kind" "$pid"
		ctl cct "$pid" --format pprof --type $kind -o "$TMP/$name.$kind.pb.gz" 2>"$TMP/ctl.err" ||
			fail "jsamplectl cct --format pprof --type $kind failed: $(cat "$TMP/ctl.err")"
		ctl cct "$pid" --format collapsed --type $kind >"$TMP/$name.$kind.collapsed" 2>"$TMP/ctl.err" ||
			fail "jsamplectl cct --type $kind failed: $(cat "$TMP/ctl.err")"
		raw "$TMP/$name.$kind.pb.gz"
		ctl stats "$pid" >"$TMP/$name.$kind.stats" 2>&1 || true
		"$PY" "$(dirname "$0")/check_event_truth.py" $kind "$TMP/$name-$kind.out" "$TMP/$name.$kind.pb.gz.raw" \
			>"$TMP/$name.$kind.truth" 2>&1 || { cat "$TMP/$name.$kind.truth"; fail "$name: the $kind profile misses the truth"; }
		sed "s/^/[$TEST_NAME] $name: /" "$TMP/$name.$kind.truth"
		# The CPU profile holds none of it.
		ctl cct "$pid" --format collapsed --type cpu >"$TMP/$name.$kind.cpu"
		! grep -qE ';(byte\[\]|int\[\]|java\.lang\.Object) [0-9]+$' "$TMP/$name.$kind.cpu" ||
			fail "$name: the CPU profile holds allocated classes"
		grep -E '^(alloc_events|monitor_events|park_events|events_)' "$TMP/$name.$kind.stats" | tr -s ' ' | tr '\n' ' ' |
			sed "s/^/[$TEST_NAME] $name: /"
		echo
	done
	stop_daemon
}

reload_phase
truth jdk17 "$JAVA"
truth jdk25 "${JDK25_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java"
note passed
