# SPDX-License-Identifier: GPL-2.0-only
# Shared helpers of the integration tests: the real BPF path, a real JVM,
# the real agent, daemon and client. Every precondition that is missing is
# a failure with its reason, never a skip.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
B=${JSAMPLED_BUILD:-$ROOT/build} # another build directory: make B=DIR, JSAMPLED_BUILD=DIR
JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
JAVA=${JAVA:-$JAVA_HOME/bin/java}
JCMD=${JCMD:-$JAVA_HOME/bin/jcmd}
PY=/usr/bin/python3
# DAEMON may point at the ASan/UBSan build (build/asan/jsampled).
DAEMON=${DAEMON:-$B/jsampled}
AGENT=${AGENT:-$B/libjsagent.so}
TEST_NAME=$(basename "$0" .sh)
TMP=$(mktemp -d "/tmp/jsampled-$TEST_NAME.XXXXXX")
DAEMON_PID=
JVM_PIDS=()

fail() {
	echo "FAIL [$TEST_NAME]: $*" >&2
	if [ -f "$TMP/daemon.log" ]; then
		echo "--- daemon log (last 40 lines):" >&2
		tail -n 40 "$TMP/daemon.log" >&2
	fi
	exit 1
}

note() { echo "[$TEST_NAME] $*"; }

require_environment() {
	[ "$(id -u)" = 0 ] || fail "needs root: loads a BPF program and opens perf events"
	[ -r /sys/kernel/btf/vmlinux ] || fail "the kernel has no BTF (/sys/kernel/btf/vmlinux)"
	[ -x "$JAVA" ] || fail "no JDK at $JAVA (run 'make deps')"
	[ -x "$DAEMON" ] || fail "$DAEMON not built (run 'make')"
	[ -f "$AGENT" ] || fail "$AGENT not built (run 'make')"
	[ -f "$B/java/.stamp" ] || fail "Java test programs not built (run 'make java')"
	[ -n "$TEST_CGROUP" ] || join_test_cgroup
}

# The test's own cgroup: the test's shell joins it, so everything it starts
# (JVMs, daemons, sandboxes) is in it, and every test daemon profiles only
# it (--include-cgroup, in start_daemon): JVMs that other people run on the
# machine are left alone, also by zero-config attach. TEST_CGROUP is the
# path /proc/PID/cgroup shows; TEST_CGROUP_DIR the directory.
TEST_CGROUP=
TEST_CGROUP_DIR=
join_test_cgroup() {
	local mnt self
	mnt=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
	[ -n "$mnt" ] || fail "no cgroup2 hierarchy mounted: a test's processes need a cgroup of their own"
	self=$(sed -n 's/^0:://p' /proc/self/cgroup)
	TEST_CGROUP="${self%/}/jsampled-test-$TEST_NAME-$$"
	TEST_CGROUP_DIR="$mnt$TEST_CGROUP"
	mkdir "$TEST_CGROUP_DIR" || fail "cannot create the test's cgroup $TEST_CGROUP_DIR"
	echo $$ >"$TEST_CGROUP_DIR/cgroup.procs" || fail "cannot move the test into its cgroup $TEST_CGROUP_DIR"
}

# Leaves the test's cgroup and removes it, with whatever of the test's is
# still in it (a JVM the test lost track of).
leave_test_cgroup() {
	[ -n "$TEST_CGROUP_DIR" ] && [ -d "$TEST_CGROUP_DIR" ] || return 0
	echo $$ >"$(dirname "$TEST_CGROUP_DIR")/cgroup.procs" 2>/dev/null || true
	for _ in $(seq 1 50); do
		rmdir "$TEST_CGROUP_DIR" 2>/dev/null && return 0
		while read -r p; do kill -9 "$p" 2>/dev/null || true; done <"$TEST_CGROUP_DIR/cgroup.procs"
		sleep 0.1
	done
	echo "[$TEST_NAME] could not remove $TEST_CGROUP_DIR" >&2
}

# A test that fails keeps its temporary directory; KEEP_TMP=1 keeps a
# passing one's too (recordings to replay, logs).
cleanup() {
	local rc=${1:-$?}
	# Subshells (background jobs) may inherit the trap: only the test's
	# own shell cleans up.
	[ "$BASHPID" = "$$" ] || return 0
	for p in "${JVM_PIDS[@]:-}"; do
		[ -n "$p" ] && kill -9 "$p" 2>/dev/null || true
	done
	if [ -n "$DAEMON_PID" ] && kill -0 "$DAEMON_PID" 2>/dev/null; then
		kill -INT "$DAEMON_PID" 2>/dev/null || true
		wait "$DAEMON_PID" 2>/dev/null || true
	fi
	leave_test_cgroup
	if [ $rc -eq 0 ] && [ -z "${KEEP_TMP:-}" ]; then
		rm -rf "$TMP"
	else
		echo "[$TEST_NAME] logs kept in $TMP" >&2
	fi
}
trap cleanup EXIT

# start_daemon [jsampled options...]: jsampled profiles only the test's
# cgroup; tests that do not test attaching keep it from attaching at all
# (ATTACH=auto to allow, ATTACH=default to pass no --attach and run with
# jsampled's default);
# DAEMON_PREFIX: a command to run it under (taskset, ...).
DAEMON_PREFIX=()
# JSAMPLED_TEST_DAEMON_ARGS: more options for every test's jsampled, e.g.
# "--exclude-cgroup /bench-*" to leave a benchmark's JVMs alone on a shared
# machine (zero-config tests attach every JVM they may).
start_daemon() {
	[ -n "$TEST_CGROUP" ] || join_test_cgroup
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:exitcode=23} \
	UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:exitcode=24} \
		"${DAEMON_PREFIX[@]}" "$DAEMON" --socket "$TMP/q.sock" --agent-socket "$TMP/agent.sock" \
		$([ "${ATTACH:-off}" = default ] || echo --attach "${ATTACH:-off}") --include-cgroup "$TEST_CGROUP" "$@" \
		${JSAMPLED_TEST_DAEMON_ARGS:-} >>"$TMP/daemon.log" 2>&1 &
	DAEMON_PID=$!
	for _ in $(seq 1 200); do
		[ -S "$TMP/q.sock" ] && return 0
		kill -0 "$DAEMON_PID" 2>/dev/null || fail "jsampled exited at start: $(cat "$TMP/daemon.log")"
		sleep 0.05
	done
	fail "jsampled did not open its socket within 10 s"
}

# stop_daemon: SIGINT, and the daemon must exit 0 (a sanitizer report or a
# leak makes it exit non-zero).
stop_daemon() {
	kill -INT "$DAEMON_PID"
	local rc=0
	wait "$DAEMON_PID" || rc=$?
	DAEMON_PID=
	if grep -qE "AddressSanitizer|LeakSanitizer|runtime error:" "$TMP/daemon.log"; then
		fail "sanitizer report in the daemon log"
	fi
	[ $rc -eq 0 ] || fail "jsampled exited with status $rc"
}

ctl() { "$B/jsamplectl" --socket "$TMP/q.sock" "$@"; }

# start_jvm NAME [java args...]: runs the JVM with our agent; sets JVM_PID.
start_jvm() {
	local name=$1
	shift
	"$JAVA" "-agentpath:$AGENT=socket:$TMP/agent.sock" -cp "$B/java" "$@" \
		>"$TMP/$name.out" 2>"$TMP/$name.err" &
	JVM_PID=$!
	JVM_PIDS+=("$JVM_PID")
}

# wait_profiled PID: until jsampled lists the process as live.
wait_profiled() {
	for _ in $(seq 1 300); do
		if ctl list 2>/dev/null | awk -v p="$1" '$1 == p && $2 == "live" {f=1} END {exit !f}'; then
			return 0
		fi
		kill -0 "$1" 2>/dev/null || fail "JVM $1 exited before it was profiled"
		sleep 0.05
	done
	fail "pid $1 was not profiled within 15 s"
}

# start_pyroscope_receiver [receiver args...]: the Pyroscope stand-in
# (pyroscope_receiver.py) on a free port of 127.0.0.1, logging what it
# takes to $TMP/received.jsonl; sets PORT and RECEIVER.
start_pyroscope_receiver() {
	PORT=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	"$PY" "$ROOT/tests/integration/pyroscope_receiver.py" --port "$PORT" --log "$TMP/received.jsonl" --tmp "$TMP" \
		"$@" >"$TMP/receiver.log" 2>&1 &
	RECEIVER=$!
	JVM_PIDS+=("$RECEIVER")
	for _ in $(seq 1 100); do
		grep -q listening "$TMP/receiver.log" && break
		sleep 0.05
	done
	grep -q listening "$TMP/receiver.log" || fail "the receiver did not start: $(cat "$TMP/receiver.log")"
}

# stats_field PID FIELD: one number from `jsamplectl stats PID --json`.
stats_field() {
	ctl stats "$1" --json | "$PY" -c "import json,sys; print(json.load(sys.stdin)['$2'])"
}

# cpu_ticks PID: utime+stime of the process, in clock ticks.
cpu_ticks() {
	awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"
}

# A system user for tests that need a second uid (created once, kept).
TEST_USER=jsmptest
ensure_test_user() {
	getent group jsampled >/dev/null || groupadd --system jsampled || fail "cannot create group jsampled"
	if ! id "$TEST_USER" >/dev/null 2>&1; then
		useradd --system --no-create-home --shell /usr/sbin/nologin "$TEST_USER" ||
			fail "cannot create user $TEST_USER"
	fi
}

# Copies of the agent and the Java classes any user can read (the checkout
# may not be readable by the test user).
public_files() {
	chmod 755 "$TMP"
	cp "$AGENT" "$TMP/libjsagent.so"
	cp -r "$B/java" "$TMP/java"
	chmod -R a+rX "$TMP/libjsagent.so" "$TMP/java"
}

# start_plain_jvm NAME [as USER] -- java args: a JVM started without any
# profiler flag (what zero-config attach must find); sets JVM_PID.
start_plain_jvm() {
	local name=$1 user=
	shift
	if [ "${1:-}" = as ]; then
		user=$2
		shift 2
	fi
	if [ -n "$user" ]; then
		setpriv --reuid="$user" --regid="$(id -g "$user")" --clear-groups --reset-env \
			"$JAVA" -cp "$TMP/java" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" &
	else
		"$JAVA" -cp "$TMP/java" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" &
	fi
	JVM_PID=$!
	JVM_PIDS+=("$JVM_PID")
}

# list_field PID COLUMN: a column of `jsamplectl list` (2 state, 3 samples, 4 resolved).
list_field() {
	ctl list | awk -v p="$1" -v c="$2" '$1 == p {v=$c} END {print v}'
}
