#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Zero-config from the first millisecond: JVMs started without any flag
# while jsampled runs are sampled from their exec (their samples held until
# the agent attaches, at the moment the JVM installs its SIGQUIT handler)
# and decoded retroactively.
#  1. A JVM that lives about 1 s (two busy threads), on JDK 17 and on the
#     machine image's Temurin 25: its profile must hold
#     at least 99% of the samples taken of it, stand for at least 90% of
#     the CPU time the kernel counted for it (the rest: sampling noise, and
#     the launcher's exit after the agent's goodbye), and its agent must
#     have come within 1 s + 4 x the time the VM took from its start to
#     main (the VM measures it; ~0.1 s idle, more on a busy machine, which
#     delays the attach alike).
#  2. A 10 s phased program (two threads, work from its first instruction,
#     on JDK 17 and, zero-config only, on the machine image's JDK 25,
#     sampled at 5 kHz so that sampling noise stays well below the bound):
#     the profiled phase shares within 0.005 total variation distance of
#     the CPU time the program measured for each phase. The same program
#     with the agent loaded at its start runs next, for comparison in the
#     log (when both fail, the fault is not in the start-up).
#  3. A JVM whose pid still has another user's stale /tmp/.java_pid socket
#     (left by a killed JVM) is attached all the same.
#  4. So is a user's JVM behind root's stale socket (which it cannot replace).
. "$(dirname "$0")/lib.sh"
require_environment
public_files

FREQ=4999
ATTACH=auto start_daemon --frequency $FREQ --agent-path "$TMP/libjsagent.so" --rescan-s 3600

# wait_exited_profile PID: until jsampled lists the process as exited.
wait_exited_profile() {
	for _ in $(seq 1 200); do
		ctl list 2>/dev/null | awk -v p="$1" '$1 == p && $2 == "exited" {f=1} END {exit !f}' && return 0
		sleep 0.05
	done
	fail "pid $1 is not listed as exited: $(ctl list)"
}

# --- 1. a JVM of one second, on JDK 17 and on the machine's JDK 25 ------
# short_jvm NAME JAVA: starts a 1-s PhasedWorkload with that java, checks
# its profile covers its life and notes the figures.
short_jvm() {
	local name=$1 java=$2 pid
	[ -x "$java" ] || fail "no $java (the machine image's JDK: see ../shared/platform.md)"
	JAVA=$java start_plain_jvm "$name" -Dphased.startup=true PhasedWorkload 1 - 2
	pid=$JVM_PID
	wait "$pid" || fail "the $name JVM failed: $(cat "$TMP/$name.err")"
	wait_exited_profile "$pid"
	ctl stats "$pid" --json >"$TMP/$name.json" || fail "no stats for the $name JVM"
	ctl cct "$pid" --format collapsed >"$TMP/$name.collapsed" || fail "no profile for the $name JVM"
	"$PY" - "$TMP/$name.json" "$TMP/$name.collapsed" "$TMP/$name.out" <<'PYEOF' || fail "the $name JVM's profile does not cover its life"
import json, sys
s = json.load(open(sys.argv[1]))
# The agent comes within a second of the exec on an idle machine, where
# the VM reaches main in about 0.1 s; a busy machine stretches the VM's
# start and the attach alike, so the bound grows with what this run's VM
# took to reach main (its own clock).
main_ms = max(0, next((int(l.split()[1]) for l in open(sys.argv[3]) if l.startswith("main_after_exec_ms ")), 0))
limit_ms = 1000 + 4 * main_ms
in_tree = sum(int(l.rsplit(" ", 1)[1]) for l in open(sys.argv[2]) if l.strip())
java = sum(int(l.rsplit(" ", 1)[1]) for l in open(sys.argv[2]) if "PhasedWorkload" in l)
share = in_tree / max(1, s["samples"])
print(f"sampled since exec: {s['sampled_since_exec']}, main {main_ms} ms and agent {s['agent_after_exec_ms']} ms "
      f"after the exec (at most {limit_ms}); "
      f"{s['samples']} samples taken, {in_tree} in the profile ({100 * share:.2f}%), {java} under PhasedWorkload; "
      f"CPU {s['cpu_ms']} ms counted by the kernel, {s['profiled_cpu_ms']} ms profiled "
      f"({s['cpu_covered_pct']:.1f}%); failed {s['failed']}, before_agent {s['reasons'].get('before_agent', 0)}, "
      f"unknown_code {s['reasons'].get('unknown_code', 0)}; agent said goodbye: {s['agent_said_bye']}; failed by: "
      + ", ".join(f"{k} {v}" for v, k in sorted(((v, k) for k, v in s["reasons"].items() if v), reverse=True)[:5]))
# The agent's goodbye: its last code news reached jsampled before the JVM
# exited (without it, samples held for code compiled last fail).
ok = (s["sampled_since_exec"] == 1 and 0 < s["agent_after_exec_ms"] < limit_ms and share >= 0.99
      and s["cpu_covered_pct"] >= 90.0 and java > 0 and s["agent_said_bye"] == 1)
sys.exit(0 if ok else 1)
PYEOF
	note "1. a 1-s JVM ($name): $("$PY" -c "
import json,sys; s=json.load(open(sys.argv[1])); print(f\"{s['samples']} samples, agent after {s['agent_after_exec_ms']} ms, CPU covered {s['cpu_covered_pct']:.1f}%\")" "$TMP/$name.json")"
}
short_jvm short "$JAVA"
# JDK 25 refuses an agent before its live phase, and its main thread
# leaves a stack page untouched while it starts the VM (docs/internals.md,
# "Sampled from the exec").
short_jvm short25 "${JDK25_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java"

# --- 2. a phased program, zero-config ------------------------------------
# tvd NAME: the total variation distance of a finished phased JVM's profile
# from the phase times it measured (check_accuracy.py also checks that each
# phase is within 5 pp and every sample arrived).
tvd() {
	local pid=$1 name=$2 samples
	wait_exited_profile "$pid"
	ctl cct "$pid" --format collapsed >"$TMP/$name.collapsed" || fail "no profile for the $name JVM"
	samples=$(stats_field "$pid" samples)
	"$PY" "$(dirname "$0")/check_accuracy.py" "$TMP/$name.collapsed" "$TMP/$name.out" "$samples" "$samples" 5 0.99 \
		>"$TMP/$name.accuracy" || { cat "$TMP/$name.accuracy"; fail "the $name profile does not match the measured phases"; }
	cat "$TMP/$name.accuracy" >&2
	awk '/^total variation distance/ {print $4}' "$TMP/$name.accuracy"
}
# close_enough TVD: within the bound.
close_enough() { "$PY" -c "import sys; sys.exit(0 if float(sys.argv[1]) <= 0.005 else 1)" "$1"; }
start_plain_jvm phased PhasedWorkload 10 - 2
PHASED=$JVM_PID
wait "$PHASED" || fail "the phased JVM failed: $(cat "$TMP/phased.err")"
zero=$(tvd "$PHASED" phased)
# The same program with the agent loaded at its start, in the same run:
# what the machine's sampling and the decoder give without a start-up to
# make up for. (Both were 0.006-0.008 off until stray_scopes.h: phaseSort's
# loop inlined in runPhase was partly charged to phaseHash.)
start_jvm atstart PhasedWorkload 10 - 2
AT_START=$JVM_PID
wait "$AT_START" || fail "the phased JVM with -agentpath failed: $(cat "$TMP/atstart.err")"
base=$(tvd "$AT_START" atstart)
close_enough "$zero" ||
	fail "zero-config lands $zero total variation distance from the measured phases (limit 0.005; with -agentpath: $base)"
note "2. a 10-s phased program: total variation distance $zero profiled zero-config (limit 0.005), $base with -agentpath"
# And on JDK 25, zero-config: its C2 puts shared nodes' descriptors in runs
# amid an inlined call's loop (stray_scopes.h), 0.010-0.011 off before.
JAVA=${JDK25_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java start_plain_jvm phased25 PhasedWorkload 10 - 2
PHASED25=$JVM_PID
wait "$PHASED25" || fail "the JDK 25 phased JVM failed: $(cat "$TMP/phased25.err")"
zero25=$(tvd "$PHASED25" phased25)
close_enough "$zero25" ||
	fail "zero-config on JDK 25 lands $zero25 total variation distance from the measured phases (limit 0.005)"
note "2. on JDK 25: total variation distance $zero25 profiled zero-config (limit 0.005)"

# --- 3 and 4. a stale attach socket of another user under the JVM's pid ---
# A JVM killed without cleanup leaves /tmp/.java_pid<pid>; a later JVM with
# that pid must still be attached. stale_socket_case N OWNER RUNNER WHAT: a
# shell plants the name for its own pid as OWNER, then execs java as RUNNER
# (the pid stays).
stale_socket_case() {
	local n=$1 owner=$2 runner=$3 what=$4 pid after resolved
	sh -c 'as() { u=$1; shift; if [ "$u" = root ]; then "$@"; else
		setpriv --reuid="$u" --regid="$(id -g "$u")" --clear-groups "$@"; fi; }
	as "$1" "$3" -c "import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])" "/tmp/.java_pid$$" &&
	[ "$(stat -c %U "/tmp/.java_pid$$")" = "$1" ] || exit 99
	[ "$2" = root ] && exec "$4" -cp "$5" PhasedWorkload 2 - 1
	exec setpriv --reuid="$2" --regid="$(id -g "$2")" --clear-groups "$4" -cp "$5" PhasedWorkload 2 - 1' \
		sh "$owner" "$runner" "$PY" "$JAVA" "$TMP/java" >"$TMP/stale$n.out" 2>&1 &
	pid=$!
	JVM_PIDS+=("$pid")
	wait "$pid" || fail "$n. the JVM failed (99: the socket was not planted): $(tail -3 "$TMP/stale$n.out")"
	rm -f "/tmp/.java_pid$pid"
	wait_exited_profile "$pid"
	after=$(stats_field "$pid" agent_after_exec_ms)
	resolved=$(stats_field "$pid" resolved)
	[ "$after" -gt 0 ] && [ "$resolved" -gt 0 ] ||
		fail "$n. $what: not attached: $(grep "pid $pid" "$TMP/daemon.log" | tail -3)"
	note "$n. $what: attached ${after} ms after its exec, $resolved samples resolved"
}
ensure_test_user
# HotSpot renames its new socket over the name: root may, in the sticky /tmp.
stale_socket_case 3 "$TEST_USER" root "$TEST_USER's stale .java_pid socket under a root JVM"
# The user's JVM may not replace root's name; jsampled removes it
# (hotspot_attach.c clear_foreign_names). Before that the attach waited 10 s
# and failed with listener_not_the_jvm, again and again (seen in CI when a
# root JVM of an earlier test had had the same pid).
stale_socket_case 4 root "$TEST_USER" "root's stale .java_pid socket under a $TEST_USER JVM"
stop_daemon
note "passed"
