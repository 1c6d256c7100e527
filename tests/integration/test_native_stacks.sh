#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Native frames (--native-stacks on): a JNI-heavy JVM (WorkloadJni: zlib
# through java.util.zip) and an allocation-heavy one with a small heap (its
# GC threads busy), and one whose Java code is called from native code
# (WorkloadUpcall: Class.forName -> libjvm -> ClassLoader.loadClass). In `jsamplectl cct --view mixed`, libz's inflate frames
# appear above the Java native method Inflater.inflateBytes*, GC threads show
# libjvm's frames under [GC], native frames sit only between the Java and
# the kernel frames except below an upcall, where libjvm's frames sit
# between the native method and the Java code it called; the default (java) view has the same samples without
# them. check_native_stacks.py does the checks and prints the figures.
# The run is recorded: jsreplay unwinds the same native frames again from
# the recording (its REC_MAPS and stack copies) and must find the same mixed
# profile; it prints the replay's cost per sample with and without them.
. "$(dirname "$0")/lib.sh"
require_environment
"$DAEMON" --help 2>&1 | grep -c -- --native-stacks >/dev/null || fail "jsampled has no --native-stacks option"

freeze() { # freeze PID: stopped, and its profile no longer growing
	local prev=-1 cur
	kill -STOP "$1" || fail "cannot stop JVM $1"
	for _ in $(seq 1 40); do
		sleep 0.5
		cur=$(ctl cct "$1" --format collapsed --view mixed | awk '{ s += $NF } END { print s + 0 }')
		[ "$cur" = "$prev" ] && return 0
		prev=$cur
	done
	fail "the profile of JVM $1 did not settle within 20 s after it was stopped"
}

start_daemon --frequency 999 --native-stacks on --record "$TMP/run.jsrec"
start_jvm jni WorkloadJni 30
JNI=$JVM_PID
start_jvm gc -Xmx48m -XX:+UseG1GC -XX:ParallelGCThreads=2 WorkloadCollections 30
GC=$JVM_PID
start_jvm upcall WorkloadUpcall 30
UPCALL=$JVM_PID
wait_profiled "$JNI"
wait_profiled "$GC"
wait_profiled "$UPCALL"
sleep 12
for p in "$JNI" "$GC" "$UPCALL"; do
	kill -0 "$p" 2>/dev/null || fail "JVM $p exited early"
	freeze "$p"
done
ctl cct "$JNI" --format collapsed --view mixed >"$TMP/jni.mixed" || fail "cct --view mixed failed"
ctl cct "$JNI" --format collapsed >"$TMP/jni.java" || fail "cct failed"
ctl cct "$GC" --format collapsed --view mixed >"$TMP/gc.mixed" || fail "cct --view mixed failed"
ctl cct "$GC" --format collapsed >"$TMP/gc.java" || fail "cct failed"
ctl cct "$UPCALL" --format collapsed --view mixed >"$TMP/upcall.mixed" || fail "cct --view mixed failed"
ctl cct "$UPCALL" --format collapsed >"$TMP/upcall.java" || fail "cct failed"
JNI_HELD=$(stats_field "$JNI" held_samples)
UPCALL_HELD=$(stats_field "$UPCALL" held_samples)
"$PY" "$ROOT/tests/integration/check_native_stacks.py" "$TMP/jni.mixed" "$TMP/jni.java" "$TMP/gc.mixed" \
	"$TMP/gc.java" "$TMP/upcall.mixed" "$TMP/upcall.java" | tee "$TMP/check.log"
grep -q '^all native stack checks passed' "$TMP/check.log" || fail "native stack checks failed (see above)"
ctl stats | grep -E '^native_' || true
# The recording ends while the JVMs are still stopped: killed first, their
# threads would run again in the kernel to exit, and a sample taken then
# would be in the replay but not in the live profile read above.
stop_daemon
kill -9 "$JNI" "$GC" "$UPCALL"
for p in "$JNI" "$UPCALL"; do
	"$B/jsreplay" "$TMP/run.jsrec" --cct "$p" --format collapsed --view mixed >"$TMP/replay.$p" ||
		fail "jsreplay --view mixed failed"
done
"$PY" "$ROOT/tests/integration/check_native_stacks.py" --replay "$TMP/jni.mixed" "$TMP/replay.$JNI" "$JNI_HELD" \
	"$TMP/upcall.mixed" "$TMP/replay.$UPCALL" "$UPCALL_HELD" | tee "$TMP/replay.log"
grep -q '^all native stack checks passed' "$TMP/replay.log" || fail "the replay's native frames differ (see above)"
for native in on off; do
	"$B/jsreplay" "$TMP/run.jsrec" --stats --native "$native" --cost 2>&1 >/dev/null | grep 'per sample' ||
		fail "jsreplay --cost printed nothing"
done
note passed
