#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Virtual threads in the wall-clock profile (JDK 25): WorkloadVirtualWaits's
# virtual threads alternate vtHot (CPU work) with sleeps, timing their own
# vtHot calls. jsampled (--offcpu on) must give vtHot its time in the wall
# profile (on CPU, or runnable: preempted on a busy machine), within 25 % of
# what the threads measured, as a virtual thread's ([virtual thread] root,
# or the unmounted marker where no frozen frames came with the sample) in
# the default view, at least a quarter with their frozen frames, and below
# the carriers' Continuation.enterSpecial in --view carrier.
# (An unmounted virtual thread's sleep is on no OS thread: its carrier runs
# another, or parks in the scheduler, and the wall profile shows that.)
. "$(dirname "$0")/lib.sh"
require_environment
JDK25=${JDK25_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
[ -x "$JDK25/bin/javac" ] || fail "no JDK 25 at $JDK25 (the machine image's: see ../shared/platform.md)"
mkdir -p "$TMP/classes"
"$JDK25/bin/javac" -d "$TMP/classes" "$ROOT/tests/java21/WorkloadVirtualWaits.java" ||
	fail "cannot compile WorkloadVirtualWaits with JDK 25"

HZ=199
start_daemon --frequency $HZ --offcpu on
JAVA=$JDK25/bin/java start_jvm vthreads -cp "$TMP/classes" WorkloadVirtualWaits 10 8
pid=$JVM_PID
wait_profiled "$pid"
wait "$pid" || fail "WorkloadVirtualWaits failed: $(cat "$TMP/vthreads.err")"
for view in java carrier; do
	ctl cct "$pid" --format collapsed --type wall --view $view >"$TMP/wall.$view" 2>"$TMP/ctl.err" ||
		fail "jsamplectl cct --type wall --view $view failed: $(cat "$TMP/ctl.err")"
done
ctl stats "$pid" >"$TMP/stats" 2>&1 || true
ctl stats >"$TMP/global-stats" 2>&1 || true
stop_daemon
note "frozen frames: $(grep -hE '^(vthread_(chunks|chunk_walked|rooted|frozen)|bpf_chunks(_unread)?) ' "$TMP/stats" "$TMP/global-stats" | tr -s ' ' | tr '\n' ' ')"

hot=$(awk '$1 == "hot" { print $2 }' "$TMP/vthreads.out")
[ -n "$hot" ] && [ "$hot" -gt 0 ] || fail "WorkloadVirtualWaits printed no truth: $(cat "$TMP/vthreads.out")"
"$PY" - "$hot" $HZ "$TMP/wall.java" "$TMP/wall.carrier" <<'PY' || fail "virtual threads' wall time is misattributed (see above)"
import sys
hot, hz = int(sys.argv[1]), int(sys.argv[2])
period = 1e9 / hz
VT, FROZEN = "[virtual_thread]", "[virtual_thread:_older_frames_unmounted]"
def read(path):
    for line in open(path):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        f = stack.split(";")
        if any(x.startswith("WorkloadVirtualWaits.vtHot_") for x in f):
            yield f, int(n)
ok = True
java = list(read(sys.argv[3]))
total = sum(n for _, n in java)
got = total * period
rooted = sum(n for f, n in java if f[0] == VT)
frozen = sum(n for f, n in java if f[0] == FROZEN)
ratio = got / hot
print(f"[test_offcpu_vthreads] vtHot: the threads measured {hot / 1e6:.0f} ms, the wall profile gives "
      f"{got / 1e6:.0f} ms ({100 * ratio:.1f} %); of its {total} samples {rooted} under [virtual thread], "
      f"{frozen} with their older frames unmounted (no frozen frames came with the sample)")
if not 0.75 <= ratio <= 1.25:
    print("FAIL: vtHot's wall time is not within 25 % of the truth"); ok = False
if rooted + frozen < 0.95 * total:
    print("FAIL: vtHot's samples are not a virtual thread's"); ok = False
# Frozen frames come with CPU samples and with preempted carriers' (kept
# with their stash) once the carrier is known; how many depends on the
# thaws the JVM did, so the bound is loose, but none at all is a failure.
if rooted < 0.25 * total:
    print("FAIL: most vtHot samples came without their frozen frames"); ok = False
carrier = list(read(sys.argv[4]))
whole = sum(n for f, n in carrier if f[0] != FROZEN)
below = sum(n for f, n in carrier if VT in f and
            any(x.startswith("jdk.internal.vm.Continuation.enterSpecial_") for x in f))
print(f"[test_offcpu_vthreads] --view carrier: {below} of the {whole} vtHot samples with all their frames below "
      f"Continuation.enterSpecial;[virtual thread]")
if below < 0.9 * whole:
    print("FAIL: in --view carrier, vtHot is not below its carriers"); ok = False
sys.exit(0 if ok else 1)
PY
note passed
