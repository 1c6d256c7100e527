#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Fleet profiles in ClickHouse: two hosts (two jsampled daemons, each with
# its own JVMs and its own `jsamplectl export`) write to a real two-shard
# ClickHouse cluster from Debian (tests/integration/clickhouse_cluster.sh)
# through its Distributed tables. Host B's exporter runs as an unprivileged
# user whose primary group is jsampled's --readers-group: the documented
# right to read every process, nothing else (it may not pause sampling).
# ClickHouse server 2 (shard 2, host B's endpoint) is stopped mid-run and
# started again. Checked (check_fleet.py), for the window both exporters
# covered:
#  - `jsamplectl fleet hosts` gives each host exactly the samples its own
#    jsampled reports for that window (`jsamplectl cct PID collapsed`),
#  - `jsamplectl fleet cct --format collapsed` is, line by line, the sum of
#    the hosts' own collapsed profiles (merged across hosts by ClickHouse),
#  - nothing was lost to the stopped shard (the exporter retried, dropped 0),
#  - intervals exported twice (an exporter restarted from an older position)
#    are not counted twice,
#  - fleet pprof decodes with go tool pprof, fleet diff renders.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/clickhouse_cluster.sh"
require_environment
command -v go >/dev/null || fail "go is not installed (run 'make deps')"
[ -x "$CH_SERVER_BIN" ] || fail "clickhouse-server is not installed (run 'make deps')"
trap 'rc=$?; ch_cluster_stop || true; [ -n "${DAEMON_B:-}" ] && kill -INT "$DAEMON_B" 2>/dev/null; cleanup $rc' EXIT

READERS=jsmpreaders
EXPORT_USER=jsmpexport
getent group "$READERS" >/dev/null || groupadd --system "$READERS" || fail "cannot create group $READERS"
id "$EXPORT_USER" >/dev/null 2>&1 ||
	useradd --system --no-create-home --shell /usr/sbin/nologin --gid "$READERS" "$EXPORT_USER" ||
	fail "cannot create user $EXPORT_USER"
[ "$(id -gn "$EXPORT_USER")" = "$READERS" ] || fail "$EXPORT_USER's primary group is not $READERS"

ch_cluster_start "$TMP/ch" || fail "ClickHouse did not start"
note "ClickHouse servers on 127.0.0.1:$CH1_HTTP and :$CH2_HTTP"

# Host A: the lib's daemon. Host B: a second daemon with its own sockets,
# readable by the readers group.
start_daemon --frequency 499
chmod 755 "$TMP"
"$DAEMON" --socket "$TMP/b.sock" --agent-socket "$TMP/agent-b.sock" --attach off --frequency 499 \
	--socket-group "$READERS" --readers-group "$READERS" >>"$TMP/daemon-b.log" 2>&1 &
DAEMON_B=$!
for _ in $(seq 1 200); do
	[ -S "$TMP/b.sock" ] && break
	sleep 0.05
done
[ -S "$TMP/b.sock" ] || fail "the second jsampled did not start: $(cat "$TMP/daemon-b.log")"

start_jvm a-orders -Djsampled.service=orders PhasedWorkload 300
A1=$JVM_PID
"$JAVA" "-agentpath:$AGENT=socket:$TMP/agent-b.sock" -cp "$B/java" -Djsampled.service=orders PhasedWorkload 300 \
	>"$TMP/b-orders.out" 2>&1 &
B1=$!
JVM_PIDS+=("$B1")
"$JAVA" "-agentpath:$AGENT=socket:$TMP/agent-b.sock" -cp "$B/java" -Djsampled.service=orders WorkloadCollections 300 \
	>"$TMP/b-orders2.out" 2>&1 &
B2=$!
JVM_PIDS+=("$B2")
wait_profiled "$A1"
for p in "$B1" "$B2"; do
	for _ in $(seq 1 300); do
		"$B/jsamplectl" --socket "$TMP/b.sock" list 2>/dev/null | awk -v p="$p" '$1 == p && $2 == "live" {f=1} END {exit !f}' &&
			break
		sleep 0.1
	done
done

# The reader may read, not control.
rc=0
setpriv --reuid="$EXPORT_USER" --regid="$READERS" --clear-groups "$B/jsamplectl" --socket "$TMP/b.sock" \
	sampling off >"$TMP/reader-control.out" 2>&1 || rc=$?
[ $rc -ne 0 ] || fail "a reader could pause sampling: $(cat "$TMP/reader-control.out")"
setpriv --reuid="$EXPORT_USER" --regid="$READERS" --clear-groups "$B/jsamplectl" --socket "$TMP/b.sock" \
	list >"$TMP/reader-list.out" 2>&1 || fail "the reader cannot list: $(cat "$TMP/reader-list.out")"
grep -q "^$B1 " "$TMP/reader-list.out" || fail "the reader does not see root's JVM $B1: $(cat "$TMP/reader-list.out")"

write_conf() { # write_conf FILE HOST URL STATE
	cat >"$1" <<EOF
clickhouse_url = $3
host = $2
state_dir = $4
interval_s = 5
lag_s = 5
EOF
	chmod 0600 "$1"
}
write_conf "$TMP/export-a.conf" fleet-host-a "http://127.0.0.1:$CH1_HTTP" "$TMP/export-a"
mkdir -p "$TMP/export-b"
write_conf "$TMP/export-b.conf" fleet-host-b "http://127.0.0.1:$CH2_HTTP" "$TMP/export-b"
chown -R "$EXPORT_USER:$READERS" "$TMP/export-b" "$TMP/export-b.conf"

INTERVALS=10
ctl export --config "$TMP/export-a.conf" --max-intervals "$INTERVALS" 2>"$TMP/export-a.err" &
EXPORT_A=$!
setpriv --reuid="$EXPORT_USER" --regid="$READERS" --clear-groups "$B/jsamplectl" --socket "$TMP/b.sock" \
	export --config "$TMP/export-b.conf" --max-intervals "$INTERVALS" 2>"$TMP/export-b.err" &
EXPORT_B=$!

# Shard 2 goes down for 20 s, about a third into the run.
sleep 25
ch_server_stop 2 || fail "cannot stop ClickHouse server 2"
note "ClickHouse server 2 stopped"
sleep 20
ch_server_start 2 || fail "cannot restart ClickHouse server 2"
note "ClickHouse server 2 started again"

wait "$EXPORT_A" || fail "exporter A failed: $(cat "$TMP/export-a.err")"
wait "$EXPORT_B" || fail "exporter B failed: $(cat "$TMP/export-b.err")"
note "$(tail -n 1 "$TMP/export-a.err")"
note "$(tail -n 1 "$TMP/export-b.err")"

# Exporter A again, from a position two intervals back: those intervals
# are written a second time, as after a crash between push and save.
pos=$(sed -n 's/^next_from=//p' "$TMP/export-a/position")
printf 'next_from=%s\nsent=\n' "$((pos - 10))" >"$TMP/export-a/position"
ctl export --config "$TMP/export-a.conf" --max-intervals 2 2>"$TMP/export-a2.err" ||
	fail "exporter A (again) failed: $(cat "$TMP/export-a2.err")"
printf 'next_from=%s\nsent=\n' "$pos" >"$TMP/export-a/position"

"$PY" "$ROOT/tests/integration/check_fleet.py" --ctl "$B/jsamplectl" --tmp "$TMP" \
	--clickhouse "http://127.0.0.1:$CH1_HTTP" --host-a fleet-host-a --socket-a "$TMP/q.sock" --pids-a "$A1" \
	--host-b fleet-host-b --socket-b "$TMP/b.sock" --pids-b "$B1,$B2" \
	--export-a "$TMP/export-a.err" --export-b "$TMP/export-b.err" \
	--status-b "$TMP/export-b/status.json" | tee "$TMP/check.log"
grep -q '^all fleet checks passed' "$TMP/check.log" || fail "fleet checks failed (see above)"

kill -INT "$DAEMON_B"
wait "$DAEMON_B" || fail "the second jsampled exited with status $?"
DAEMON_B=
stop_daemon
note passed
