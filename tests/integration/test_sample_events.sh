#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Which tasks the sampling timers interrupt (daemon/ingest/sampler_events.h), each
# mode checked against what it promises:
#  - every thread of a profiled JVM is sampled once at the frequency, per
#    second of its own CPU time: threads that existed before the JVM was
#    profiled, threads started later by main, and one started by another
#    thread (ThreadSpinners: each spins in its own method, s0..s7, and
#    prints its CPU time; the profile's samples of each method are held
#    against it);
#  - --sample-events threads (the default) interrupts no other task: a
#    shell loop spinning beside the JVM adds no invocation of the BPF
#    program; --sample-events cpus interrupts it like everything else;
#  - a thread that runs two events (a thread created while the events are
#    being opened: forced here for every thread with the test hook
#    JSAMPLED_TEST_DOUBLE_EVENTS) is still sampled once, the second event's
#    ticks counted as dropped.
. "$(dirname "$0")/lib.sh"
require_environment
[ -x "$JCMD" ] || fail "no jcmd at $JCMD"

HZ=1000
SPIN_S=4

# run_mode NAME [jsampled options...]: one JVM profiled from a late attach
# (its early threads exist by then) with a shell spinner beside it; leaves
# the per-method check's lines in $TMP/NAME.check and the BPF counters'
# differences over the spin in $TMP/NAME.bpf.
run_mode() {
	local name=$1 go="$TMP/$1.go" shell_pid
	shift
	start_daemon --frequency $HZ "$@"
	"$JAVA" -cp "$B/java" ThreadSpinners 3 3 $SPIN_S "$go" >"$TMP/$name.out" 2>"$TMP/$name.err" &
	JVM_PID=$!
	JVM_PIDS+=("$JVM_PID")
	for _ in $(seq 1 200); do
		grep -q ready "$TMP/$name.out" 2>/dev/null && break
		sleep 0.05
	done
	grep -q ready "$TMP/$name.out" || fail "$name: ThreadSpinners did not start: $(cat "$TMP/$name.err")"
	"$JCMD" "$JVM_PID" JVMTI.agent_load "$AGENT" "socket:$TMP/agent.sock" >"$TMP/$name.jcmd" 2>&1 ||
		fail "$name: jcmd failed: $(cat "$TMP/$name.jcmd")"
	wait_profiled "$JVM_PID"
	ctl stats --json >"$TMP/$name.before.json"
	sh -c 'i=0; while :; do i=$((i + 1)); done' &
	shell_pid=$!
	touch "$go"
	for _ in $(seq 1 $((SPIN_S * 20 + 200))); do
		grep -q done "$TMP/$name.out" 2>/dev/null && break
		sleep 0.05
	done
	kill "$shell_pid"
	wait "$shell_pid" 2>/dev/null || true
	grep -q done "$TMP/$name.out" || fail "$name: ThreadSpinners did not finish: $(cat "$TMP/$name.err")"
	sleep 0.5
	ctl stats --json >"$TMP/$name.after.json"
	ctl cct "$JVM_PID" --format collapsed >"$TMP/$name.cct"
	kill "$JVM_PID" 2>/dev/null || true
	stop_daemon
	"$PY" - "$TMP/$name" $HZ <<'EOF' || fail "$name: $(cat "$TMP/$name.check")"
import json, re, sys
base, hz = sys.argv[1], int(sys.argv[2])
spun = {}
for line in open(base + ".out"):
    m = re.match(r"spun (s\d) (\d+)$", line.strip())
    if m:
        spun[m.group(1)] = int(m.group(2))
samples = {k: 0 for k in spun}
for line in open(base + ".cct"):
    stack, _, n = line.rstrip("\n").rpartition(" ")
    for k in spun:
        if "ThreadSpinners." + k + "_" in stack:
            samples[k] += int(n)
            break
out, bad = [], []
for k in sorted(spun):
    want = spun[k] * hz / 1000.0
    ratio = samples[k] / want if want else 0.0
    out.append(f"{k}: {samples[k]} samples for {spun[k]} ms of CPU ({ratio:.2f} of {hz} Hz)")
    if want < 300 or not 0.85 <= ratio <= 1.15:
        bad.append(k)
a, b = json.load(open(base + ".before.json"))["bpf"], json.load(open(base + ".after.json"))["bpf"]
d = {k: b[k] - a[k] for k in ("events", "target", "doubled")}
with open(base + ".bpf", "w") as f:
    json.dump(d, f)
out.append(f"BPF program: {d['events']} invocations, {d['target']} of the JVM, {d['doubled']} second events' ticks dropped")
open(base + ".check", "w").write("\n".join(out) + "\n")
if len(spun) != 6 or bad:
    print("threads sampled wrongly: " + ", ".join(bad) if bad else f"{len(spun)} of 6 threads reported")
    sys.exit(1)
EOF
	sed "s/^/[$TEST_NAME] $name: /" "$TMP/$name.check"
}

bpf_field() { "$PY" -c "import json; print(json.load(open('$TMP/$1.bpf'))['$2'])"; }

# 1. Per-thread events (the default): only the JVM's threads are interrupted.
run_mode threads
events=$(bpf_field threads events)
target=$(bpf_field threads target)
[ $((events - target)) -le $((events / 50)) ] ||
	fail "threads: $((events - target)) of $events invocations were for other tasks (the shell spinner was interrupted)"

# 2. Per-CPU events: every task is, the shell spinner among them.
run_mode cpus --sample-events cpus
events=$(bpf_field cpus events)
target=$(bpf_field cpus target)
# The shell got a seventh of two CPUs beside six Java spinners, jsampled
# its own share: well over an eighth of SPIN_S seconds between them.
[ $((events - target)) -ge $((SPIN_S * HZ / 8)) ] ||
	fail "cpus: only $((events - target)) invocations for other tasks while a shell spun beside the JVM"

# 3. Every thread runs two events: still sampled once.
export JSAMPLED_TEST_DOUBLE_EVENTS=1
run_mode doubled
unset JSAMPLED_TEST_DOUBLE_EVENTS
doubled=$(bpf_field doubled doubled)
[ "$doubled" -gt $((SPIN_S * HZ / 2)) ] ||
	fail "doubled: only $doubled second-event ticks were dropped (each thread ran two events)"
note "passed"
