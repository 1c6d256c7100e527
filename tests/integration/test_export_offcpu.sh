#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Off-CPU and wall profiles through fleet export: a jsampled with
# --offcpu on profiles WorkloadWaits; `jsamplectl export` with
# types = cpu,wall pushes both to a Pyroscope stand-in
# (pyroscope_receiver.py: the name's suffix must be the pprof's sample type)
# and writes both to a ClickHouse server whose store was made by an older
# schema (no profile_type column). Checked:
#  - the exporter says the store needs fleet init; fleet init adds the
#    column, and a second one changes nothing;
#  - Pyroscope gets orders{...} with cpu profiles and orders.wall{...} with
#    wall profiles, and the wall ones hold more samples (the waits);
#  - the store's rows carry their type ('' for CPU, 'wall'), and
#    `fleet cct --type wall` and `--type cpu` read each type's samples back
#    (the sums the table holds), the wall one with WorkloadWaits's waits;
#  - fleet pprof --type wall is a wall/nanoseconds profile (go tool pprof);
#  - thread pools (threads = on): every pushed sample has a
#    thread label, the store's stacks start at a thread frame, and fleet
#    --thread siteSleep / --threads select and show pools as cct does.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/clickhouse_cluster.sh"
require_environment
[ -x "$CH_SERVER_BIN" ] || fail "clickhouse-server is not installed (run 'make deps')"
command -v go >/dev/null || fail "go is not installed (run 'make deps')"
[ -f "$B/java/WorkloadWaits.class" ] || fail "WorkloadWaits not built (run 'make java')"
trap 'rc=$?; ch_cluster_stop || true; cleanup $rc' EXIT

export CH_SINGLE=1
ch_cluster_start "$TMP/ch" || fail "ClickHouse did not start"
URL="http://127.0.0.1:$CH1_HTTP"
# The store as an older release made it: samples without profile_type.
ctl fleet schema | sed 's/, profile_type String//' >"$TMP/old-schema.sql"
grep -q profile_type "$TMP/old-schema.sql" && fail "the old schema still has profile_type"
while read -r stmt; do
	[ -n "$stmt" ] && { ch_query 1 "${stmt%;}" >/dev/null || fail "cannot create the old schema: $stmt"; }
done <"$TMP/old-schema.sql"

start_pyroscope_receiver

start_daemon --frequency 199 --offcpu on
start_jvm orders -Djsampled.service=orders WorkloadWaits 90
wait_profiled "$JVM_PID"

cat >"$TMP/export.conf" <<CONF
pyroscope_url = http://127.0.0.1:$PORT/
clickhouse_url = $URL
host = offcpu-host
state_dir = $TMP/export
interval_s = 5
lag_s = 5
types = cpu,wall
threads = on
CONF
chmod 0600 "$TMP/export.conf"
status() { ctl export --config "$TMP/export.conf" --status; }

# It says so at its start, then waits for the store (stopped here).
rc=0
timeout 8 "$B/jsamplectl" --socket "$TMP/q.sock" export --config "$TMP/export.conf" --max-intervals 1 \
	2>"$TMP/old.err" || rc=$?
grep -q "no column profile_type" "$TMP/old.err" ||
	fail "the exporter did not say the store lacks profile_type (exit $rc): $(head -c 600 "$TMP/old.err")"
note "against the old store, the exporter said: $(grep -m1 'profile_type' "$TMP/old.err" | head -c 300)"
ctl fleet init --clickhouse-url "$URL" >"$TMP/init.out" 2>&1 || fail "fleet init failed: $(cat "$TMP/init.out")"
grep -q "added column profile_type to jsampled.samples" "$TMP/init.out" ||
	fail "fleet init did not add profile_type: $(cat "$TMP/init.out")"
ctl fleet init --clickhouse-url "$URL" >"$TMP/init2.out" 2>&1 || fail "a second fleet init failed: $(cat "$TMP/init2.out")"
grep -q "added column" "$TMP/init2.out" && fail "a second fleet init added a column again: $(cat "$TMP/init2.out")"
note "$(grep 'added column' "$TMP/init.out")"

rm -rf "$TMP/export"
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
print("[test_export_offcpu] Pyroscope got: %s" % {"%s (%s)" % k: sum(v) for k, v in by.items()})
cpu, wall = by.get(("orders", "cpu")), by.get(("orders.wall", "wall"))
if not cpu or not wall:
    sys.exit("want orders (cpu) and orders.wall (wall) series, got %s" % sorted(by))
if set(by) != {("orders", "cpu"), ("orders.wall", "wall")}:
    sys.exit("series other than orders and orders.wall: %s" % sorted(by))
if sum(wall) <= sum(cpu):
    sys.exit("the wall profiles hold %d samples, the cpu ones %d: no waits" % (sum(wall), sum(cpu)))
# threads = on: every sample carries its thread pool.
unlabelled = sum(r["threads"].get("", 0) for r in rows)
if unlabelled:
    sys.exit("%d pushed samples have no thread label" % unlabelled)
pools = {}
for r in rows:
    if r["type"] == "wall":
        for t, n in r["threads"].items():
            pools[t] = pools.get(t, 0) + n
print("[test_export_offcpu] Pyroscope's wall samples by thread label: %s" % sorted(pools.items())[:12])
if not pools.get("siteSleep"):
    sys.exit("no wall samples labelled siteSleep: %s" % sorted(pools))
PY

q() { ch_query 1 "$1"; }
types=$(q "SELECT groupUniqArray(profile_type) FROM jsampled.samples")
note "profile types in the store: $types"
for t in cpu wall; do
	col=$([ $t = cpu ] && echo "" || echo $t)
	stored=$(q "SELECT sum(c) FROM (SELECT any(count) AS c FROM jsampled.samples WHERE profile_type = '$col' GROUP BY service, host, time, pid, stack_hash)")
	[ -n "$stored" ] && [ "$stored" -gt 0 ] || fail "the store holds no $t samples: $types"
	ctl fleet --clickhouse-url "$URL" cct --service orders --since 1h --type $t --format collapsed >"$TMP/fleet.$t" ||
		fail "fleet cct --type $t failed"
	total=$(awk '{ s += $NF } END { print s + 0 }' "$TMP/fleet.$t")
	[ "$total" = "$stored" ] || fail "fleet cct --type $t holds $total samples, the store $stored"
	note "fleet cct --type $t: $total samples, as stored"
done
grep -q "WorkloadWaits.siteSleep" "$TMP/fleet.wall" || fail "the fleet's wall profile shows no siteSleep"
sleep_cpu=$(awk '/WorkloadWaits\.siteSleep/ { s += $NF } END { print s + 0 }' "$TMP/fleet.cpu")
sleep_wall=$(awk '/WorkloadWaits\.siteSleep/ { s += $NF } END { print s + 0 }' "$TMP/fleet.wall")
# siteSleep's thread is on CPU for well under 1 % of its time.
[ $((sleep_cpu * 10)) -lt "$sleep_wall" ] || fail "siteSleep: $sleep_cpu cpu samples, $sleep_wall wall ones"
note "siteSleep: $sleep_cpu cpu samples, $sleep_wall wall samples in the store"

# The store's stacks start at their thread pool; fleet --thread selects
# pools as cct --thread does, --threads shows them.
pooled=$(q "SELECT count() FROM jsampled.stacks WHERE kinds[1] = 'thread'")
[ "$pooled" -gt 0 ] || fail "no stack of the store starts at a thread frame"
ctl fleet --clickhouse-url "$URL" cct --service orders --since 1h --type wall --thread siteSleep --format collapsed \
	>"$TMP/fleet.sleep" || fail "fleet cct --thread siteSleep failed"
bad=$(grep -E 'WorkloadWaits\.(site|hold)[A-Za-z]+' "$TMP/fleet.sleep" | grep -v 'WorkloadWaits\.siteSleep' | awk 'n++ < 2' || true)
[ -z "$bad" ] || fail "fleet --thread siteSleep shows other sites' stacks: $bad"
got=$(awk '/WorkloadWaits\.siteSleep/ { s += $NF } END { print s + 0 }' "$TMP/fleet.sleep")
[ "$got" -gt 0 ] && [ "$got" = "$sleep_wall" ] || fail "fleet --thread siteSleep: siteSleep $got samples, the fleet's wall profile $sleep_wall"
ctl fleet --clickhouse-url "$URL" cct --service orders --since 1h --type wall --threads --format collapsed \
	>"$TMP/fleet.threads" || fail "fleet cct --threads failed"
bad=$(grep -v '^\[thread:_' "$TMP/fleet.threads" | awk 'n++ < 2' || true)
[ -z "$bad" ] || fail "fleet --threads has paths without a thread: $bad"
got=$(awk '{ s += $NF } END { print s + 0 }' "$TMP/fleet.threads")
[ "$got" = "$(awk '{ s += $NF } END { print s + 0 }' "$TMP/fleet.wall")" ] || fail "fleet --threads holds $got samples, not the wall profile's"
rc=0
ctl fleet --clickhouse-url "$URL" hosts --service orders --since 1h --thread siteSleep >/dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "fleet hosts --thread exited $rc, not 2 (hosts has no pools to pick)"
note "store: $pooled stacks start at a thread pool; fleet --thread siteSleep: $sleep_wall samples, as the whole wall profile gives siteSleep"

ctl fleet --clickhouse-url "$URL" cct --service orders --since 1h --type wall --format pprof -o "$TMP/fleet-wall.pb.gz" ||
	fail "fleet pprof --type wall failed"
HOME=$TMP GOCACHE=$TMP/gocache go tool pprof -raw "$TMP/fleet-wall.pb.gz" >"$TMP/fleet-wall.raw" 2>&1 ||
	fail "go tool pprof cannot read the fleet's wall pprof: $(head -3 "$TMP/fleet-wall.raw")"
grep -qE '^samples/count wall/nanoseconds' "$TMP/fleet-wall.raw" ||
	fail "the fleet's wall pprof has sample types: $(sed -n '/^Samples:/{n;p}' "$TMP/fleet-wall.raw")"
kill "$RECEIVER"
stop_daemon
note passed
