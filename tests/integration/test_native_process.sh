#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# A non-Java process, profiled only on request: `jsamplectl profile PID`
# (root or the process's owner; another user is told there is no such
# process). perfmap_jit runs code from anonymous memory that only its
# /tmp/perf-PID.map names, called from a C function: its profile (native
# frames by default for such a process) must show run_jit;jit_spin_loop, and
# the process must be dropped from sampling when it exits.
. "$(dirname "$0")/lib.sh"
require_environment
gcc -O1 -fno-omit-frame-pointer -o "$TMP/perfmap_jit" "$(dirname "$0")/perfmap_jit.c" || fail "cannot build perfmap_jit"

ensure_test_user # before the daemon: its socket is for group jsampled
usermod -a -G jsampled "$TEST_USER" || fail "cannot add $TEST_USER to group jsampled"
start_daemon --frequency 999 --native-stacks on
"$TMP/perfmap_jit" 14 &
JIT=$!
for _ in $(seq 1 50); do [ -s "/tmp/perf-$JIT.map" ] && break; sleep 0.1; done
[ -s "/tmp/perf-$JIT.map" ] || fail "perfmap_jit wrote no perf map"
sleep 1
ctl list | grep -qw "$JIT" && fail "a non-Java process was profiled without being asked"
public_files # the other user must reach the socket and the client
cp "$B/jsamplectl" "$TMP/jsamplectl"
if setpriv --reuid="$TEST_USER" --regid="$(id -g "$TEST_USER")" --init-groups "$TMP/jsamplectl" \
	--socket "$TMP/q.sock" profile "$JIT" >"$TMP/other.out" 2>&1; then
	fail "another user could start profiling root's process: $(cat "$TMP/other.out")"
fi
grep -q "no process $JIT of yours" "$TMP/other.out" || fail "unexpected refusal: $(cat "$TMP/other.out")"
ctl profile "$JIT" >"$TMP/profile.out" || fail "profile $JIT failed: $(cat "$TMP/profile.out")"
ctl profile "$JIT" >/dev/null 2>&1 && fail "a second profile request for the same process was accepted"
sleep 6
ctl cct "$JIT" --format collapsed >"$TMP/jit.collapsed" || fail "cct of the native process failed"
ctl cct "$JIT" --format collapsed --view java >"$TMP/jit.java" || fail "cct --view java failed"
"$PY" - "$TMP/jit.collapsed" "$TMP/jit.java" <<'PYEOF' || fail "the native process's profile is wrong (see above)"
import sys
total = jit = 0
for line in open(sys.argv[1]):
    stack, _, n = line.rstrip("\n").rpartition(" ")
    total += int(n)
    frames = stack.split(";")
    if "jit_spin_loop" in frames and "run_jit" in frames and frames.index("run_jit") + 1 == frames.index("jit_spin_loop") \
            and "main" in frames[:frames.index("run_jit")]:
        jit += int(n)
print(f"     {total} samples, {jit} ({100.0 * jit / max(total, 1):.1f} %) in main;...;run_jit;jit_spin_loop")
java = sum(int(l.rsplit(" ", 1)[1]) for l in open(sys.argv[2]) if l.strip())
print(f"     java view: {java} samples")
sys.exit(0 if total > 0 and jit >= 0.5 * total else 1)
PYEOF
wait "$JIT" || fail "perfmap_jit failed"
sleep 2.5
ctl stats "$JIT" >"$TMP/stats" || fail "the exited process is no longer queryable"
ctl list | grep -w "$JIT" | grep -qiE "exited|gone" || fail "the exited process is still listed as live: $(ctl list | grep -w "$JIT")"
stop_daemon
note passed
