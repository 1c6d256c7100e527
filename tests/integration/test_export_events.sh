#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Allocation and lock profiles through fleet export: a jsampled with
# --alloc on --lock on profiles WorkloadAllocations (service shop) and
# WorkloadLocks (service bank); `jsamplectl export` with types = alloc,lock
# pushes both to a Pyroscope stand-in (pyroscope_receiver.py: the name's
# suffix must be the pprof's type: alloc_objects/alloc_space,
# contentions/delay) and writes both to a ClickHouse store. Checked:
#  - Pyroscope gets shop.alloc{...} and bank.lock{...} series (and none
#    of a type a process has no events of);
#  - the store's rows carry their type, their counts the bytes and
#    nanoseconds, and `fleet cct --type alloc|lock` reads them back (the
#    sums the table holds), with each program's sites;
#  - fleet pprof --type alloc is an alloc_space/bytes profile and
#    --type lock a delay/nanoseconds one (go tool pprof).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/clickhouse_cluster.sh"
require_environment
[ -x "$CH_SERVER_BIN" ] || fail "clickhouse-server is not installed (run 'make deps')"
command -v go >/dev/null || fail "go is not installed (run 'make deps')"
for c in WorkloadAllocations WorkloadLocks; do
	[ -f "$B/java/$c.class" ] || fail "$c not built (run 'make java')"
done
trap 'rc=$?; ch_cluster_stop || true; cleanup $rc' EXIT

export CH_SINGLE=1
ch_cluster_start "$TMP/ch" || fail "ClickHouse did not start"
URL="http://127.0.0.1:$CH1_HTTP"
ctl fleet init --clickhouse-url "$URL" >"$TMP/init.out" 2>&1 || fail "fleet init failed: $(cat "$TMP/init.out")"
start_pyroscope_receiver

start_daemon --frequency 99 --alloc on --lock on --lock-interval-us 200
start_jvm shop -Djsampled.service=shop WorkloadAllocations 90 50
SHOP=$JVM_PID
start_jvm bank -Djsampled.service=bank WorkloadLocks 90
BANK=$JVM_PID
wait_profiled "$SHOP"
wait_profiled "$BANK"

cat >"$TMP/export.conf" <<CONF
pyroscope_url = http://127.0.0.1:$PORT/
clickhouse_url = $URL
host = events-host
state_dir = $TMP/export
interval_s = 5
lag_s = 5
types = alloc,lock
CONF
chmod 0600 "$TMP/export.conf"
ctl export --config "$TMP/export.conf" --max-intervals 3 2>"$TMP/export.err" ||
	fail "export failed: $(cat "$TMP/export.err")"
note "$(tail -n 1 "$TMP/export.err")"

"$PY" - "$TMP/received.jsonl" <<'PY' || fail "the Pyroscope pushes are not as they should be (see above)"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
bad = [r for r in rows if "error" in r]
if bad:
    sys.exit("refused requests: %s" % bad[:3])
by = {}
for r in rows:
    by.setdefault((r["app"], r["type"]), []).append(r["samples"])
print("[test_export_events] Pyroscope got: %s" % {"%s (%s)" % k: sum(v) for k, v in by.items()})
want = {("shop.alloc", "alloc"), ("bank.lock", "lock")}
if not want <= set(by):
    sys.exit("want shop.alloc (alloc) and bank.lock (lock) series, got %s" % sorted(by))
# bank allocates little and shop contends for no lock: a series of either
# is allowed, of another type none.
if any(t not in ("alloc", "lock") for _, t in by):
    sys.exit("series of other types: %s" % sorted(by))
PY

q() { ch_query 1 "$1"; }
note "profile types in the store: $(q "SELECT groupUniqArray(profile_type) FROM jsampled.samples")"
check_type() { # TYPE SERVICE SITE
	local stored total
	stored=$(q "SELECT sum(c) FROM (SELECT any(count) AS c FROM jsampled.samples WHERE profile_type = '$1' AND service = '$2' GROUP BY service, host, time, pid, stack_hash)")
	[ -n "$stored" ] && [ "$stored" -gt 0 ] || fail "the store holds no $1 rows of $2"
	ctl fleet --clickhouse-url "$URL" cct --service "$2" --since 1h --type "$1" --format collapsed >"$TMP/fleet.$1" ||
		fail "fleet cct --type $1 failed"
	total=$(awk '{ s += $NF } END { printf "%.0f\n", s }' "$TMP/fleet.$1")
	[ "$total" = "$stored" ] || fail "fleet cct --type $1 holds $total, the store $stored"
	grep -q "$3" "$TMP/fleet.$1" || fail "the fleet's $1 profile of $2 shows no $3"
	note "fleet cct --type $1 --service $2: $total, as stored, with $3"
}
check_type alloc shop WorkloadAllocations.siteArrays
check_type lock bank WorkloadLocks.siteMonitor
for t in alloc:alloc_space/bytes lock:delay/nanoseconds; do
	ctl fleet --clickhouse-url "$URL" cct --service $([ ${t%%:*} = alloc ] && echo shop || echo bank) --since 1h \
		--type ${t%%:*} --format pprof -o "$TMP/fleet-${t%%:*}.pb.gz" || fail "fleet pprof --type ${t%%:*} failed"
	HOME=$TMP GOCACHE=$TMP/gocache go tool pprof -raw "$TMP/fleet-${t%%:*}.pb.gz" >"$TMP/fleet-${t%%:*}.raw" 2>&1 ||
		fail "go tool pprof cannot read the fleet's ${t%%:*} pprof: $(head -3 "$TMP/fleet-${t%%:*}.raw")"
	grep -qE "^${t#*:}(\\[dflt\\])?\$" "$TMP/fleet-${t%%:*}.raw" ||
		fail "the fleet's ${t%%:*} pprof has sample types: $(sed -n '/^Samples:/{n;p}' "$TMP/fleet-${t%%:*}.raw")"
	note "fleet pprof --type ${t%%:*}: ${t#*:}"
done
kill "$SHOP" "$BANK" "$RECEIVER" 2>/dev/null || true
stop_daemon
note passed
