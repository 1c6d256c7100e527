#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Every sample against the truth. PhasedWorkload (two threads, 6 s, no
# profiler flag: attached zero-config from its exec) logs when each phase
# call began and ended on each of its threads; jsampled samples it at
# 5 kHz and records the run; the replay's traces are matched with the
# timeline by thread and time (check_sample_truth.py). At most 0.2 % of the
# samples taken inside a phase call may name another phase: the shares
# TVD checks can hide misattribution that cancels out, this cannot. Run on
# JDK 17 and on the machine image's JDK 25. (What it guards: JDK 25's C2
# puts shared nodes' descriptors in runs in phaseMatrix's loop, which sends
# 0.9 % of the samples to phaseHash and phaseRecurse unless stray_scopes.c
# sees through such runs; on JDK 17, 2.4 % of phaseSort's go to phaseHash
# without stray_scopes.c, and 10 samples a run to phaseRecurse@20 unless a
# shared node's descriptor beside another's may stand alone.)
. "$(dirname "$0")/lib.sh"
require_environment
public_files

# truth NAME JAVA: one recorded zero-config run of the program with that java.
truth() {
	local name=$1 java=$2 pid
	[ -x "$java" ] || fail "no $java (the machine image's JDK: see ../shared/platform.md)"
	ATTACH=auto start_daemon --frequency 4999 --agent-path "$TMP/libjsagent.so" --rescan-s 3600 \
		--record "$TMP/$name.jsrec"
	JAVA=$java start_plain_jvm "$name" "-Dphased.timeline=$TMP/$name.timeline" PhasedWorkload 6 - 2
	pid=$JVM_PID
	wait "$pid" || fail "the $name JVM failed: $(cat "$TMP/$name.err")"
	stop_daemon
	[ -s "$TMP/$name.timeline" ] || fail "the $name JVM wrote no timeline"
	"$B/jsreplay" "$TMP/$name.jsrec" --traces >"$TMP/$name.traces" 2>"$TMP/$name.replay.err" ||
		fail "jsreplay of the $name run failed: $(tail -3 "$TMP/$name.replay.err")"
	# At least half the samples the phase threads' own CPU time makes at
	# 4999 Hz (on a busy machine they get less of it, and fewer samples).
	cpu_ns=$(awk '$1 == "total" { print $2 }' "$TMP/$name.out")
	[ -n "$cpu_ns" ] || fail "the $name JVM printed no phase CPU time: $(cat "$TMP/$name.out")"
	min_samples=$(awk -v ns="$cpu_ns" 'BEGIN { printf "%d", ns / 1e9 * 4999 / 2 }')
	note "$name: its phase threads had $(awk -v ns="$cpu_ns" 'BEGIN { printf "%.2f", ns / 1e9 }') s of CPU: at least $min_samples samples"
	"$PY" "$(dirname "$0")/check_sample_truth.py" "$TMP/$name.timeline" "$TMP/$name.traces" 0.2 "$min_samples" \
		>"$TMP/$name.truth" || { cat "$TMP/$name.truth"; fail "$name: samples name the wrong phase"; }
	cat "$TMP/$name.truth" >&2
	note "$name: $(tail -1 "$TMP/$name.truth")"
}

truth jdk17 "$JAVA"
truth jdk25 "${JDK25_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java"
note passed
