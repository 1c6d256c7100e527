#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The fleet store on one ClickHouse server as a user installs it: no
# <remote_servers>, no schema (tests/integration/clickhouse_cluster.sh with
# CH_SINGLE=1). Checked:
#  - against the empty server the exporter says which tables are missing and
#    how to create them (at start and in --status), and keeps the intervals
#    queued instead of dropping them;
#  - `jsamplectl fleet init --cluster jsampled` on a server without that
#    cluster is refused, saying so, and creates nothing;
#  - `jsamplectl fleet init` makes the single-server schema, and again
#    changes nothing;
#  - the waiting intervals then arrive (dropped 0), and `fleet hosts` and
#    `fleet cct` read them back: the host's samples in the store are the
#    samples the exporter says it sent.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/clickhouse_cluster.sh"
require_environment
[ -x "$CH_SERVER_BIN" ] || fail "clickhouse-server is not installed (run 'make deps')"
trap 'rc=$?; ch_cluster_stop || true; cleanup $rc' EXIT

export CH_SINGLE=1
ch_cluster_start "$TMP/ch" || fail "ClickHouse did not start"
URL="http://127.0.0.1:$CH1_HTTP"
note "one ClickHouse server on $URL, no cluster, no schema"

start_daemon --frequency 499
start_jvm orders -Djsampled.service=orders PhasedWorkload 300
wait_profiled "$JVM_PID"

cat >"$TMP/export.conf" <<CONF
clickhouse_url = $URL
host = single-host
state_dir = $TMP/export
interval_s = 5
lag_s = 5
CONF
chmod 0600 "$TMP/export.conf"
status() { ctl export --config "$TMP/export.conf" --status; }
dest() { # dest FIELD: the ClickHouse destination's FIELD in --status
	status | "$PY" -c "import json,sys; print(json.load(sys.stdin)['destinations']['clickhouse']['$1'])"
}

ctl export --config "$TMP/export.conf" --max-intervals 3 2>"$TMP/export.err" &
EXPORT=$!
# The first interval is due 10 s after the exporter starts (5 s + lag 5 s).
for _ in $(seq 1 200); do
	[ -f "$TMP/export/status.json" ] && [ "$(dest failed)" -ge 1 ] 2>/dev/null && break
	sleep 0.1
done
[ "$(dest failed)" -ge 1 ] || fail "the exporter did not try the empty server: $(status)"
grep -q "no tables stacks, samples in database jsampled" "$TMP/export.err" ||
	fail "the exporter did not say which tables are missing: $(cat "$TMP/export.err")"
grep -q "jsamplectl fleet init --clickhouse-url $URL" "$TMP/export.err" ||
	fail "the exporter did not say how to create the schema: $(cat "$TMP/export.err")"
dest last_error | grep -q "fleet init" || fail "--status does not say what is missing: $(status)"
[ "$(dest dropped)" = 0 ] || fail "intervals were dropped against the empty server: $(status)"
note "empty server: $(dest failed) failed, $(dest waiting) waiting, 0 dropped; the exporter said: $(head -c 300 "$TMP/export.err" | tr '\n' ' ')"

rc=0
ctl fleet init --clickhouse-url "$URL" --cluster jsampled >"$TMP/init-cluster.out" 2>&1 || rc=$?
[ $rc -ne 0 ] || fail "fleet init over an undefined cluster succeeded: $(cat "$TMP/init-cluster.out")"
grep -q "no cluster 'jsampled'" "$TMP/init-cluster.out" ||
	fail "fleet init did not say the cluster is missing: $(cat "$TMP/init-cluster.out")"
tables=$(ch_query 1 "SELECT count() FROM system.tables WHERE database = 'jsampled'" 2>/dev/null || echo 0)
[ "${tables:-0}" = 0 ] || fail "the refused fleet init created $tables tables"

ctl fleet init --clickhouse-url "$URL" >"$TMP/init.out" 2>&1 || fail "fleet init failed: $(cat "$TMP/init.out")"
ctl fleet init --clickhouse-url "$URL" >"$TMP/init2.out" 2>&1 || fail "a second fleet init failed: $(cat "$TMP/init2.out")"
note "$(head -1 "$TMP/init.out")"
[ "$(ch_query 1 "SELECT engine FROM system.tables WHERE database = 'jsampled' AND name = 'samples'")" = ReplacingMergeTree ] ||
	fail "jsampled.samples is not a ReplacingMergeTree table on the single server"

timeout 120 tail --pid="$EXPORT" -f /dev/null || fail "the exporter did not finish within 120 s of fleet init: $(status)"
wait "$EXPORT" || fail "the exporter failed: $(cat "$TMP/export.err")"
[ "$(dest dropped)" = 0 ] || fail "intervals were dropped: $(status)"
sent=$(dest sent)
[ "$sent" -ge 1 ] || fail "nothing was sent after fleet init: $(status)"

ctl fleet --clickhouse-url "$URL" hosts --service orders --since 1h >"$TMP/hosts.out" ||
	fail "fleet hosts failed"
stored=$(awk '$1 == "single-host" { print $2 }' "$TMP/hosts.out")
[ -n "$stored" ] && [ "$stored" -gt 0 ] || fail "fleet hosts shows no samples of single-host: $(cat "$TMP/hosts.out")"
rows=$(ch_query 1 "SELECT sum(c) FROM (SELECT any(count) AS c FROM jsampled.samples GROUP BY service, host, time, pid, stack_hash)")
[ "$rows" = "$stored" ] || fail "fleet hosts says $stored samples, the table holds $rows"
ctl fleet --clickhouse-url "$URL" cct --service orders --since 1h --format collapsed >"$TMP/fleet.collapsed" ||
	fail "fleet cct failed"
total=$(awk '{ s += $NF } END { print s + 0 }' "$TMP/fleet.collapsed")
[ "$total" = "$stored" ] || fail "fleet cct holds $total samples, fleet hosts $stored"
grep -q "PhasedWorkload" "$TMP/fleet.collapsed" || fail "fleet cct names no PhasedWorkload frame"
note "after fleet init: $sent intervals sent, 0 dropped; $stored samples of single-host in the store, the same in fleet cct"
echo "PASS: a single ClickHouse server: a clear error before fleet init, the waiting intervals after it"
