#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Off-CPU and wall-clock profiles against the truth. WorkloadWaits runs
# threads that wait on known stacks (sleep, Object.wait, a contended
# monitor and ReentrantLock, a socket read, a blocking queue) and one that
# burns CPU, each timing its own calls; jsampled (--offcpu on) profiles it.
# check_offcpu_truth.py matches the offcpu and wall profiles with the
# truth: the sites' shares of the time by TVD, and the time the profiles
# account for against the time the threads measured. On JDK 17 and on the
# machine image's JDK 25.
. "$(dirname "$0")/lib.sh"
require_environment
[ -f "$B/java/WorkloadWaits.class" ] || fail "WorkloadWaits not built (run 'make java')"

HZ=499
SECONDS_RUN=8

# pprof_type FILE TYPE COLLAPSED: go tool pprof reads the profile with its
# type's sample type (TYPE/nanoseconds), and as many samples as the
# collapsed profile of the same type.
pprof_type() {
	local raw want got
	raw=$(HOME=$TMP GOCACHE=$TMP/gocache go tool pprof -raw "$1" 2>"$TMP/pprof.err") ||
		fail "go tool pprof -raw $1: $(cat "$TMP/pprof.err")"
	grep -qE "^samples/count $2/nanoseconds(\\[dflt\\])?$" <<<"$raw" ||
		fail "pprof of type $2 has sample types: $(echo "$raw" | sed -n '/^Samples:/{n;p}')"
	want=$(awk '{ s += $NF } END { print s + 0 }' "$3")
	got=$(awk '/^Samples:/ { on = 1; next } /^Locations/ { on = 0 } on && $2 ~ /:$/ { s += $1 } END { print s + 0 }' <<<"$raw")
	[ "$got" = "$want" ] || fail "pprof of type $2 holds $got samples, its collapsed profile $want"
	note "pprof --type $2: $2/nanoseconds, $got samples as collapsed"
}

# threads NAME PID: per-thread views. WorkloadWaits names each thread
# after its site: --thread siteSleep holds no other site's stacks and all
# of siteSleep's, as many samples as the whole wall profile gives them; a
# glob selects several pools; --threads starts every path at its pool.
sum_of() { { grep -E "$1" "$2" || true; } | awk '{ s += $NF } END { print s + 0 }'; }
others() { grep -E 'WorkloadWaits\.(site|hold)[A-Za-z]+_' "$2" | grep -vE "$1" | awk 'n++ < 2' || true; }
threads() {
	local name=$1 pid=$2 want got bad
	ctl cct "$pid" --format collapsed --type wall --thread siteSleep >"$TMP/$name.sleep" 2>"$TMP/ctl.err" ||
		fail "cct --thread siteSleep failed: $(cat "$TMP/ctl.err")"
	bad=$(others 'WorkloadWaits\.siteSleep_' "$TMP/$name.sleep")
	[ -z "$bad" ] || fail "$name: --thread siteSleep shows other sites' stacks: $bad"
	want=$(sum_of 'WorkloadWaits\.siteSleep_' "$TMP/$name.wall")
	got=$(sum_of 'WorkloadWaits\.siteSleep_' "$TMP/$name.sleep")
	[ "$got" -gt 0 ] && [ "$got" = "$want" ] ||
		fail "$name: --thread siteSleep gives siteSleep $got samples, the wall profile $want"
	ctl cct "$pid" --format collapsed --type wall --thread 'site[ST]*' >"$TMP/$name.st" 2>"$TMP/ctl.err" ||
		fail "cct --thread 'site[ST]*' failed: $(cat "$TMP/ctl.err")"
	bad=$(others 'WorkloadWaits\.site(Sleep|Socket|Take)_' "$TMP/$name.st")
	[ -z "$bad" ] || fail "$name: --thread 'site[ST]*' shows other sites' stacks: $bad"
	want=$(sum_of 'WorkloadWaits\.site(Sleep|Socket|Take)_' "$TMP/$name.wall")
	got=$(sum_of 'WorkloadWaits\.site(Sleep|Socket|Take)_' "$TMP/$name.st")
	[ "$got" = "$want" ] || fail "$name: --thread 'site[ST]*' gives the three sites $got samples, the wall profile $want"
	ctl cct "$pid" --format collapsed --type wall --threads >"$TMP/$name.threads" 2>"$TMP/ctl.err" ||
		fail "cct --threads failed: $(cat "$TMP/ctl.err")"
	bad=$(grep -v '^\[thread:_' "$TMP/$name.threads" | awk 'n++ < 2' || true)
	[ -z "$bad" ] || fail "$name: --threads has paths without a thread: $bad"
	got=$(sum_of '^\[thread:_siteSleep\];' "$TMP/$name.threads")
	want=$(sum_of . "$TMP/$name.sleep")
	[ "$got" = "$want" ] || fail "$name: --threads gives [thread: siteSleep] $got samples, --thread siteSleep $want"
	ctl diff --base "$pid" --target "$pid" --format text --type wall --thread siteSleep >"$TMP/$name.diff" 2>"$TMP/ctl.err" ||
		fail "diff --thread siteSleep failed: $(cat "$TMP/ctl.err")"
	got=$(sed -n 's/^base: .*(\([0-9]*\) samples)$/\1/p' "$TMP/$name.diff")
	[ "$got" = "$want" ] || fail "$name: diff --thread siteSleep compares $got samples, --thread siteSleep has $want"
	ctl cct "$pid" --format pprof --type wall --threads -o "$TMP/$name.threads.pb.gz" 2>"$TMP/ctl.err" ||
		fail "cct --threads --format pprof failed: $(cat "$TMP/ctl.err")"
	HOME=$TMP GOCACHE=$TMP/gocache go tool pprof -tags "$TMP/$name.threads.pb.gz" >"$TMP/$name.tags" 2>"$TMP/pprof.err" ||
		fail "go tool pprof -tags: $(cat "$TMP/pprof.err")"
	awk '/^ *thread: Total/ { on = 1; next } /^ *[a-z]+: Total/ { on = 0 } on && / siteSleep$/ { found = 1 } END { exit !found }' \
		"$TMP/$name.tags" || fail "$name: pprof --threads has no thread label siteSleep: $(head -c 400 "$TMP/$name.tags")"
	note "$name: --thread siteSleep: $want samples, no other site's; 'site[ST]*': three sites; --threads: every path under its pool, pprof's thread label; diff of the pool"
}

# truth NAME JAVA
truth() {
	local name=$1 java=$2 pid
	[ -x "$java" ] || fail "no $java (the machine image's JDK: see ../shared/platform.md)"
	start_daemon --frequency $HZ --offcpu on
	# Each site a compiled method of its own (not inlined into the
	# loop), so that its samples name it whatever the JIT does.
	JAVA=$java start_jvm "$name" -XX:CompileCommand=quiet '-XX:CompileCommand=dontinline,WorkloadWaits::*' \
		WorkloadWaits $SECONDS_RUN
	pid=$JVM_PID
	wait_profiled "$pid"
	# Until the JVM has printed its truth: its last waits have come back.
	for _ in $(seq 1 $((SECONDS_RUN * 10 + 100))); do
		grep -q '^run ' "$TMP/$name.out" 2>/dev/null && break
		sleep 0.1
	done
	grep -q '^run ' "$TMP/$name.out" || fail "$name: WorkloadWaits printed no truth: $(cat "$TMP/$name.err")"
	wait "$pid" || fail "the $name JVM failed: $(cat "$TMP/$name.err")"
	for type in cpu offcpu wall; do
		ctl cct "$pid" --format collapsed --type $type >"$TMP/$name.$type" 2>"$TMP/ctl.err" ||
			fail "jsamplectl cct --type $type failed: $(cat "$TMP/ctl.err")"
		ctl cct "$pid" --format pprof --type $type -o "$TMP/$name.$type.pb.gz" 2>"$TMP/ctl.err" ||
			fail "jsamplectl cct --format pprof --type $type failed: $(cat "$TMP/ctl.err")"
		pprof_type "$TMP/$name.$type.pb.gz" $type "$TMP/$name.$type"
	done
	threads "$name" "$pid"
	ctl stats "$pid" >"$TMP/$name.stats" 2>&1 || true
	ctl stats >"$TMP/$name.global-stats" 2>&1 || true
	stop_daemon
	"$PY" "$(dirname "$0")/check_offcpu_truth.py" "$TMP/$name.out" $HZ "$TMP/$name.cpu" "$TMP/$name.offcpu" \
		"$TMP/$name.wall" >"$TMP/$name.truth" 2>&1 || { cat "$TMP/$name.truth"; fail "$name: the profiles miss the truth"; }
	cat "$TMP/$name.truth"
	grep -E '^(offcpu|switches|offcpu_)' "$TMP/$name.global-stats" | tr '\n' ' ' | sed "s/^/[$TEST_NAME] $name: BPF: /"
	echo
}

truth jdk17 "$JAVA"
truth jdk25 "${JDK25_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java"
note passed
