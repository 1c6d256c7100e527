#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The ClickHouse side of the fleet export (deploy/clickhouse): schema.sql on a
# real two-shard cluster of Debian's clickhouse-server (18.16.1 on bookworm),
# and fleet_queries.sql through the Distributed tables. The test makes its
# own rows (two hosts of service `orders` on different shards, a host's
# rows of another service, stacks spanning two UTC days), inserts them as
# JSONEachRow over HTTP (one batch gzip-compressed), inserts two batches a
# second time (a retry) with merges stopped so the duplicates are really
# there, checks where the rows landed, stops shard 2 (a Distributed read
# fails; skip_unavailable_shards gives shard 1's part; an insert through the
# Distributed table is queued and delivered after the restart; a
# synchronous one fails), restarts it, and compares every query's result with
# what it computes from the rows it generated. Then it merges everything
# (OPTIMIZE ... FINAL) and checks the results did not change.
# The servers run in the Asia/Kolkata time zone (UTC+05:30) on purpose: the
# rows span UTC midnight, so a query that took a day in the server's zone
# rather than UTC would miss rows.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
# shellcheck source=tests/integration/clickhouse_cluster.sh
. "$HERE/clickhouse_cluster.sh"
QUERIES=$ROOT/deploy/clickhouse/fleet_queries.sql
TEST_NAME=$(basename "$0" .sh)
TMP=$(mktemp -d "/tmp/jsampled-$TEST_NAME.XXXXXX")
export LC_ALL=C

fail() {
	echo "FAIL [$TEST_NAME]: $*" >&2
	exit 1
}
note() { echo "[$TEST_NAME] $*"; }

cleanup() {
	local rc=$?
	[ "$BASHPID" = "$$" ] || return 0
	ch_cluster_stop
	if [ $rc -eq 0 ]; then
		rm -rf "$TMP"
	else
		echo "[$TEST_NAME] data, configs and server logs kept in $TMP" >&2
	fi
}
trap cleanup EXIT

[ -e /usr/share/zoneinfo/Asia/Kolkata ] || fail "no time zone data (apt-get install tzdata)"
export CH_TIMEZONE=Asia/Kolkata
start=$(date +%s%N)
ch_cluster_start "$TMP/cluster" || fail "the cluster did not start"
note "two servers up and the schema loaded in $((($(date +%s%N) - start) / 1000000)) ms" \
	"(HTTP $CH1_HTTP, $CH2_HTTP; TCP $CH1_TCP, $CH2_TCP); $(ch_query 1 'SELECT version()')"
# Loading the schema again changes nothing (IF NOT EXISTS throughout).
"$CH_CLIENT_BIN" --host 127.0.0.1 --port "$CH1_TCP" --multiquery <"$CH_SCHEMA" ||
	fail "schema.sql is not idempotent: a second load failed"
# Merges stopped: the retried batches' duplicates stay until OPTIMIZE below.
for n in 1 2; do
	ch_query "$n" "SYSTEM STOP MERGES" >/dev/null || fail "SYSTEM STOP MERGES on server $n"
done

# ---- the data -------------------------------------------------------------
# Two hosts of service `orders`, one on each shard: shard = cityHash64(host)
# % 2 + 1 with the two shards' default weights of 1.
H1='' H2=''
for i in $(seq -w 1 60); do
	h=app-$i
	s=$(ch_query 1 "SELECT cityHash64($(ch_sql_string "$h")) % 2 + 1") || fail "cityHash64"
	[ "$s" = 1 ] && [ -z "$H1" ] && H1=$h
	[ "$s" = 2 ] && [ -z "$H2" ] && H2=$h
	[ -n "$H1" ] && [ -n "$H2" ] && break
done
[ -n "$H1" ] && [ -n "$H2" ] || fail "no host names found for both shards"
SERVICE=orders
OTHER=billing
note "hosts: $H1 (shard 1), $H2 (shard 2)"

# Stacks: hash, frames (root first, '|'-separated), kinds, the intervals
# (0-39) in which they are sampled. 18446744073709551557 and
# 9223372036854775808 are past 2^63 (UInt64 through JSON); one frame has a
# quote and a backslash. 42 is sampled but has no stacks row (the LEFT JOIN
# keeps its samples, with no frames); 999 has a stacks row but no samples.
STACK_HASH=(101 18446744073709551557 9223372036854775808 7 12345678901234567890 42 999)
STACK_FRAMES=(
	'java.lang.Thread.run|com.example.Worker.loop|com.example.Orders.price'
	'java.lang.Thread.run|com.example.Worker.loop|java.util.HashMap.get'
	'[GC]'
	'java.lang.Thread.run|java.net.Socket.read|libc.so.6!__poll'
	'java.lang.Thread.run|com.example.Weird."quoted"\back'
	''
	'java.lang.Thread.run|com.example.Unused.run'
)
STACK_KINDS=(
	'interpreted|compiled|inlined'
	'interpreted|compiled|compiled'
	'pseudo'
	'interpreted|interpreted|native'
	'interpreted|compiled'
	''
	'interpreted|interpreted'
)
STACK_FIRST=(0 0 0 0 25 0 99)
STACK_LAST=(39 39 39 9 39 39 -1)
T0=1709336400 # 2024-03-01 23:40:00 UTC; intervals 0-19 are on March 1, 20-39 on March 2

bs=\\
json_str() { # a JSON string
	local s=$1
	s=${s//"$bs"/"$bs$bs"}
	s=${s//'"'/"$bs\""}
	printf '"%s"' "$s"
}
json_array() { # '|'-separated → JSON array of strings
	local out='[' sep='' f
	local -a parts=()
	[ -n "$1" ] && IFS='|' read -r -a parts <<<"$1"
	for f in "${parts[@]:+${parts[@]}}"; do
		out+=$sep$(json_str "$f")
		sep=,
	done
	printf '%s]' "$out"
}
utc_date() { TZ=UTC printf '%(%Y-%m-%d)T' "$1"; }
utc_stamp() { TZ=UTC printf '%(%Y-%m-%d %H:%M:%S)T' "$1"; }

# rows.tsv: one line per unique sample row, the truth the test computes
# from: date time host service pid stack_hash count batch_id, and time as
# text in UTC, which is how the exporter sends it (the servers' own zone is
# Asia/Kolkata: the schema's DateTime('UTC') makes the text mean UTC).
RANDOM=2024
gen_rows() { # host service pid first last
	local host=$1 service=$2 pid=$3 i k t
	for ((i = $4; i <= $5; i++)); do
		t=$((T0 + 60 * i))
		for k in "${!STACK_HASH[@]}"; do
			[ "$i" -ge "${STACK_FIRST[$k]}" ] && [ "$i" -le "${STACK_LAST[$k]}" ] || continue
			[ $((RANDOM % 10)) -lt 7 ] || continue
			printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(utc_date "$t")" "$t" "$host" "$service" "$pid" \
				"${STACK_HASH[$k]}" $((1 + RANDOM % 97)) "$host-$service-$pid-b$((i / 10))" "$(utc_stamp "$t")"
		done
	done
}
{
	gen_rows "$H1" "$SERVICE" 1001 0 39
	gen_rows "$H1" "$SERVICE" 1002 0 39
	gen_rows "$H2" "$SERVICE" 2001 0 39
	gen_rows "$H1" "$OTHER" 3001 0 39
} >"$TMP/rows.tsv"
# The batch inserted asynchronously while shard 2 is down (same intervals
# as 2001's batch b1, another process).
gen_rows "$H2" "$SERVICE" 2002 10 19 >"$TMP/late.tsv"
# The batch whose synchronous insert fails while shard 2 is down, retried
# after the restart: rows of both hosts.
# (Not in a pipeline: a subshell would reseed RANDOM and the rows would
# differ from run to run.)
{
	gen_rows "$H1" "$SERVICE" 1003 5 9
	gen_rows "$H2" "$SERVICE" 2003 5 9
} >"$TMP/mixed.tmp"
awk -F '\t' -v OFS='\t' '{ sub(/-b0$/, "-mixed", $8); print }' "$TMP/mixed.tmp" >"$TMP/mixed.tsv"

rows_json() { # rows.tsv lines on stdin → JSONEachRow
	awk -F '\t' '{
		printf "{\"date\":\"%s\",\"time\":\"%s\",\"interval_s\":60,\"host\":\"%s\",\"service\":\"%s\",\"pid\":%s,", $1, $9, $3, $4, $5
		printf "\"label_keys\":[\"env\",\"zone\"],\"label_values\":[\"prod\",\"zone-%s\"],", $3
		printf "\"stack_hash\":%s,\"count\":%s,\"batch_id\":\"%s\"}\n", $6, $7, $8
	}'
}
# stacks: one row per (UTC day, stack) the stack is sampled on that day (by
# any host or service), as the exporter writes them; 42 has none; 999 one.
stack_index() { # hash → index in STACK_HASH
	local k
	for k in "${!STACK_HASH[@]}"; do
		[ "${STACK_HASH[$k]}" = "$1" ] && { echo "$k"; return 0; }
	done
	return 1
}
stack_json() { # date hash
	local k
	k=$(stack_index "$2")
	printf '{"date":"%s","stack_hash":%s,"frames":%s,"kinds":%s}\n' "$1" "$2" \
		"$(json_array "${STACK_FRAMES[$k]}")" "$(json_array "${STACK_KINDS[$k]}")"
}
cut -f 1,6 "$TMP/rows.tsv" "$TMP/late.tsv" "$TMP/mixed.tsv" | sort -u | awk -F '\t' '$2 != "42"' >"$TMP/stack_days.tsv"
printf '%s\t999\n' "$(utc_date "$T0")" >>"$TMP/stack_days.tsv"
while IFS=$'\t' read -r d h; do
	stack_json "$d" "$h"
done <"$TMP/stack_days.tsv" >"$TMP/stacks.json"

# ---- inserts --------------------------------------------------------------
# Everything goes through the Distributed tables. insert_distributed_sync=1:
# the insert returns once every shard has the rows (the default, 0, queues
# the other shards' rows on disk and sends them in the background).
ch_insert 1 "INSERT INTO jsampled.stacks FORMAT JSONEachRow" insert_distributed_sync=1 <"$TMP/stacks.json" ||
	fail "inserting the stacks"
# Day 1's stacks again (a retried batch: duplicates in the same partition).
grep "\"date\":\"$(utc_date "$T0")\"" "$TMP/stacks.json" |
	ch_insert 2 "INSERT INTO jsampled.stacks FORMAT JSONEachRow" insert_distributed_sync=1 ||
	fail "inserting day 1's stacks again"
# Stack 101 (shard 2 by stack_hash) also in server 1's stacks_local: the
# same stack on two shards must still come out once.
grep '"stack_hash":101,' "$TMP/stacks.json" | head -n 1 |
	ch_insert 1 "INSERT INTO jsampled.stacks_local FORMAT JSONEachRow" || fail "inserting into stacks_local"

batches=$(cut -f 8 "$TMP/rows.tsv" | sort -u)
nb=0
for b in $batches; do
	z=()
	[ $nb -eq 3 ] && z=(-z) # one batch gzip-compressed (Content-Encoding: gzip)
	awk -F '\t' -v b="$b" '$8 == b' "$TMP/rows.tsv" | rows_json |
		ch_insert "${z[@]:+${z[@]}}" 1 "INSERT INTO jsampled.samples FORMAT JSONEachRow" insert_distributed_sync=1 ||
		fail "inserting batch $b"
	nb=$((nb + 1))
done
# Retries: a batch of each host inserted a second time, byte for byte, via
# the other server's Distributed table.
RETRIED=("$H1-$SERVICE-1001-b2" "$H2-$SERVICE-2001-b1")
dups=0
for b in "${RETRIED[@]}"; do
	awk -F '\t' -v b="$b" '$8 == b' "$TMP/rows.tsv" | rows_json >"$TMP/retry.json"
	[ -s "$TMP/retry.json" ] || fail "batch $b is empty"
	ch_insert 2 "INSERT INTO jsampled.samples FORMAT JSONEachRow" insert_distributed_sync=1 <"$TMP/retry.json" ||
		fail "inserting batch $b again"
	dups=$((dups + $(wc -l <"$TMP/retry.json")))
done
unique=$(wc -l <"$TMP/rows.tsv")
note "inserted $nb batches, $unique sample rows, and $dups rows again (2 retried batches); $(wc -l <"$TMP/stacks.json") stack rows"

# ---- where the rows are ---------------------------------------------------
on1=$(ch_query 1 "SELECT DISTINCT host FROM jsampled.samples_local ORDER BY host" | tr '\n' ' ')
on2=$(ch_query 2 "SELECT DISTINCT host FROM jsampled.samples_local ORDER BY host" | tr '\n' ' ')
[ "$on1" = "$H1 " ] || fail "server 1 holds rows of hosts '$on1', expected only $H1"
[ "$on2" = "$H2 " ] || fail "server 2 holds rows of hosts '$on2', expected only $H2"
raw=$(ch_query 1 "SELECT count() FROM jsampled.samples") || fail "count through Distributed"
[ "$raw" -eq $((unique + dups)) ] ||
	fail "samples hold $raw rows, expected $unique + $dups duplicates (merges were stopped)"
bad=$(ch_query 1 "SELECT count() FROM jsampled.stacks WHERE length(frames) != length(kinds) OR length(frames) = 0") || fail "stacks check"
[ "$bad" = 0 ] || fail "$bad stack rows with frames and kinds of different or zero length"
note "rows on the expected shards; $raw raw rows before merges"

# ---- the expected results, computed from rows.tsv -------------------------
stacks_tsv() { # hash \t frames \t kinds, for every stack (42: empty)
	local k
	for k in "${!STACK_HASH[@]}"; do
		[ "${STACK_HASH[$k]}" = 42 ] && { printf '42\t\t\n'; continue; }
		printf '%s\t%s\t%s\n' "${STACK_HASH[$k]}" "${STACK_FRAMES[$k]}" "${STACK_KINDS[$k]}"
	done
}
stacks_tsv >"$TMP/stack_defs.tsv"
# expect_window FROM UNTIL HOST: the sample rows of SERVICE in the window.
expect_window() {
	awk -F '\t' -v s="$SERVICE" -v f="$1" -v u="$2" -v h="$3" \
		'$4 == s && (h == "" || $3 == h) && $2 + 0 >= f + 0 && $2 + 0 < u + 0' "$TMP/rows.tsv"
}
expect_cct() { # FROM UNTIL HOST → hash frames kinds total
	expect_window "$@" | awk -F '\t' -v OFS='\t' '
		FILENAME == ARGV[1] { fr[$1] = $2; ki[$1] = $3; next }
		{ t[$6] += $7 }
		END { for (h in t) printf "%s\t%s\t%s\t%.0f\n", h, fr[h], ki[h], t[h] }' "$TMP/stack_defs.tsv" - | sort
}
expect_by_host() { # FROM UNTIL HOST → host hash count
	expect_window "$@" | awk -F '\t' '{ t[$3 "\t" $6] += $7 } END { for (k in t) printf "%s\t%.0f\n", k, t[k] }' | sort
}
expect_host_totals() { # FROM UNTIL HOST → host total
	expect_window "$@" | awk -F '\t' '{ t[$3] += $7 } END { for (k in t) printf "%s\t%.0f\n", k, t[k] }' | sort
}
expect_diff() { # AFROM AUNTIL BFROM BUNTIL HOST → hash frames kinds count_a count_b
	awk -F '\t' -v s="$SERVICE" -v af="$1" -v au="$2" -v bf="$3" -v bu="$4" -v h="$5" '
		FILENAME == ARGV[1] { fr[$1] = $2; ki[$1] = $3; next }
		$4 != s || (h != "" && $3 != h) { next }
		{ t = $2 + 0; ina = t >= af + 0 && t < au + 0; inb = t >= bf + 0 && t < bu + 0 }
		ina || inb { seen[$6] = 1; a[$6] += ina * $7; b[$6] += inb * $7 }
		END { for (k in seen) printf "%s\t%s\t%s\t%.0f\t%.0f\n", k, fr[k], ki[k], a[k], b[k] }' \
		"$TMP/stack_defs.tsv" "$TMP/rows.tsv" | sort
}

# The queries of fleet_queries.sql, results as TSV (arrays joined by '|').
# RUN_SETTINGS: settings (name=value) for the query.
RUN_SETTINGS=()
run_named() { # N NAME OUTER_SELECT [param=value...]: SELECT OUTER_SELECT FROM (query)
	local n=$1 name=$2 outer=$3 sql
	shift 3
	sql=$(ch_named_query "$QUERIES" "$name" "$@") || fail "query $name of $QUERIES"
	ch_query "$n" "SELECT $outer FROM ($sql) FORMAT TabSeparatedRaw" "${RUN_SETTINGS[@]:+${RUN_SETTINGS[@]}}" | sort
}
CCT_COLS="stack_hash, arrayStringConcat(frames, '|'), arrayStringConcat(kinds, '|'), total"
DIFF_COLS="stack_hash, arrayStringConcat(frames, '|'), arrayStringConcat(kinds, '|'), count_a, count_b"
compare() { # WHAT EXPECTED_FILE ACTUAL_FILE
	diff -u "$2" "$3" >"$TMP/diff.txt" || {
		cat "$TMP/diff.txt" >&2
		fail "$1: the result (+) differs from what the inserted rows give (-)"
	}
	[ -s "$2" ] || fail "$1: no rows expected: the test's window is wrong"
}

# The CCT window crosses UTC midnight: 23:45 to 00:10.
W_FROM=$((T0 + 300))
W_UNTIL=$((T0 + 1800))
# The diff's windows overlap: A = 23:40-00:00, B = 23:55-00:20.
A_FROM=$T0 A_UNTIL=$((T0 + 1200)) B_FROM=$((T0 + 900)) B_UNTIL=$((T0 + 2400))
cct_params() { echo "service=$SERVICE" "host=$1" "from=$W_FROM" "until=$W_UNTIL"; }

first_error() { # the first ClickHouse error line of FILE
	grep -m 1 -o 'Code: [0-9]*, e.displayText() = .*' "$1" | cut -c 1-160 || echo "(no error text)"
}
queued_files() { # the Distributed table's queued inserts on server 1
	find "$CH_CLUSTER_DIR/ch1/data/data/jsampled/samples" -name '*.bin' -type f 2>/dev/null | wc -l
}

# ---- shard 2 down ---------------------------------------------------------
ch_server_stop 2
note "server 2 stopped"
if ch_query 1 "SELECT count() FROM jsampled.samples" >"$TMP/down.out" 2>"$TMP/down.err"; then
	fail "a Distributed read with shard 2 down succeeded: $(cat "$TMP/down.out")"
fi
note "a Distributed read with shard 2 down fails: $(first_error "$TMP/down.err")"
# skip_unavailable_shards=1 answers from the shards that are up: shard 1's
# host only.
RUN_SETTINGS=(skip_unavailable_shards=1)
# shellcheck disable=SC2046 # the params are words without spaces
run_named 1 fleet_host_totals "host, total" $(cct_params '') >"$TMP/partial.tsv" ||
	fail "fleet_host_totals with skip_unavailable_shards=1"
RUN_SETTINGS=()
expect_host_totals "$W_FROM" "$W_UNTIL" "$H1" >"$TMP/partial.expected"
compare "fleet_host_totals with shard 2 down and skip_unavailable_shards=1" "$TMP/partial.expected" "$TMP/partial.tsv"
note "with skip_unavailable_shards=1 the read answers shard 1's part only"

# A synchronous Distributed insert of a batch with rows for both shards
# fails (it is retried, whole, after the restart)...
if rows_json <"$TMP/mixed.tsv" |
	ch_insert 1 "INSERT INTO jsampled.samples FORMAT JSONEachRow" insert_distributed_sync=1 >/dev/null 2>"$TMP/sync.err"; then
	fail "a synchronous insert with shard 2 down succeeded"
fi
note "insert_distributed_sync=1 with shard 2 down fails: $(first_error "$TMP/sync.err")"
partial=$(ch_query 1 "SELECT count() FROM jsampled.samples_local WHERE pid IN (1003, 2003)")
if [ "$partial" = 0 ]; then
	note "... and wrote none of the batch's rows for shard 1 either"
else
	note "... having written $partial of the batch's rows for shard 1 (no transaction: the retry duplicates them)"
fi
# ... the default (asynchronous) one is accepted, queued on server 1's disk
# and sent when shard 2 is back.
rows_json <"$TMP/late.tsv" | ch_insert 1 "INSERT INTO jsampled.samples FORMAT JSONEachRow" >/dev/null ||
	fail "an asynchronous Distributed insert with shard 2 down was refused"
queued=$(queued_files)
[ "$queued" -ge 1 ] || fail "the asynchronous insert left no queued .bin file on server 1"
note "an asynchronous Distributed insert with shard 2 down is accepted: $queued file(s) queued under server 1's data/jsampled/samples/"
sleep 3 # let server 1 fail to send a few times (it backs off between tries)

ch_server_start 2 || fail "server 2 did not start again"
ch_query 2 "SYSTEM STOP MERGES" >/dev/null || fail "SYSTEM STOP MERGES on server 2"
late=$(wc -l <"$TMP/late.tsv")
t_up=$SECONDS
n=0
while [ $SECONDS -lt $((t_up + 120)) ]; do
	n=$(ch_query 2 "SELECT count() FROM jsampled.samples_local WHERE pid = 2002") || fail "counting on server 2"
	[ "$n" -ge "$late" ] && break
	sleep 0.5
done
[ "$n" = "$late" ] || fail "the queued insert: $n of $late rows on server 2 after $((SECONDS - t_up)) s"
note "server 2 restarted (data kept: $(ch_query 2 'SELECT count() FROM jsampled.samples_local') rows); the queued rows arrived within $((SECONDS - t_up)) s"
for _ in $(seq 1 50); do
	queued=$(queued_files)
	[ "$queued" = 0 ] && break
	sleep 0.1
done
[ "$queued" = 0 ] || fail "$queued queued file(s) left on server 1 after delivery"
cat "$TMP/late.tsv" >>"$TMP/rows.tsv"
# The failed synchronous batch, retried whole.
rows_json <"$TMP/mixed.tsv" | ch_insert 1 "INSERT INTO jsampled.samples FORMAT JSONEachRow" insert_distributed_sync=1 >/dev/null ||
	fail "retrying the batch that failed while shard 2 was down"
cat "$TMP/mixed.tsv" >>"$TMP/rows.tsv"

# ---- the queries ----------------------------------------------------------
check_queries() { # N: through server N's Distributed tables
	local n=$1 h
	for h in '' "$H1" "$H2"; do
		# shellcheck disable=SC2046
		run_named "$n" fleet_cct "$CCT_COLS" $(cct_params "$h") >"$TMP/cct.tsv" || fail "fleet_cct host='$h'"
		expect_cct "$W_FROM" "$W_UNTIL" "$h" >"$TMP/cct.expected"
		compare "fleet_cct (server $n, host '$h')" "$TMP/cct.expected" "$TMP/cct.tsv"
		[ -n "$h" ] || cp "$TMP/cct.expected" "$TMP/cct_all.expected"
		# shellcheck disable=SC2046
		run_named "$n" fleet_diff "$DIFF_COLS" "service=$SERVICE" "host=$h" "a_from=$A_FROM" "a_until=$A_UNTIL" \
			"b_from=$B_FROM" "b_until=$B_UNTIL" >"$TMP/diffq.tsv" || fail "fleet_diff host='$h'"
		expect_diff "$A_FROM" "$A_UNTIL" "$B_FROM" "$B_UNTIL" "$h" >"$TMP/diffq.expected"
		compare "fleet_diff (server $n, host '$h')" "$TMP/diffq.expected" "$TMP/diffq.tsv"
	done
	# shellcheck disable=SC2046
	run_named "$n" fleet_cct_by_host "host, stack_hash, count" $(cct_params '') >"$TMP/byhost.tsv" ||
		fail "fleet_cct_by_host"
	expect_by_host "$W_FROM" "$W_UNTIL" '' >"$TMP/byhost.expected"
	compare "fleet_cct_by_host (server $n)" "$TMP/byhost.expected" "$TMP/byhost.tsv"
	# shellcheck disable=SC2046
	run_named "$n" fleet_host_totals "host, total" $(cct_params '') >"$TMP/totals.tsv" || fail "fleet_host_totals"
	expect_host_totals "$W_FROM" "$W_UNTIL" '' >"$TMP/totals.expected"
	compare "fleet_host_totals (server $n)" "$TMP/totals.expected" "$TMP/totals.tsv"
	[ "$(wc -l <"$TMP/totals.tsv")" = 2 ] || fail "fleet_host_totals: expected 2 hosts: $(cat "$TMP/totals.tsv")"
}
raw=$(ch_query 1 "SELECT count() FROM jsampled.samples") || fail "count"
[ "$raw" -gt "$(wc -l <"$TMP/rows.tsv")" ] || fail "the duplicates are gone before the queries ($raw rows): merges ran"
check_queries 1
check_queries 2
note "fleet_cct (all hosts, each host), fleet_cct_by_host, fleet_host_totals, fleet_diff match the inserted rows through both servers, duplicates present"
note "window [$W_FROM, $W_UNTIL): $(wc -l <"$TMP/cct_all.expected") stacks, $(awk -F '\t' '{ t += $4 } END { print t }' "$TMP/cct_all.expected") samples; per host: $(tr '\t\n' '= ' <"$TMP/totals.expected")"

# ---- after merges ---------------------------------------------------------
for n in 1 2; do
	ch_query "$n" "SYSTEM START MERGES" >/dev/null || fail "SYSTEM START MERGES on server $n"
	for t in samples_local stacks_local; do
		ch_query "$n" "OPTIMIZE TABLE jsampled.$t FINAL" >/dev/null || fail "OPTIMIZE $t on server $n"
	done
done
raw=$(ch_query 1 "SELECT count() FROM jsampled.samples") || fail "count"
[ "$raw" = "$(wc -l <"$TMP/rows.tsv")" ] ||
	fail "after OPTIMIZE FINAL samples hold $raw rows, expected the $(wc -l <"$TMP/rows.tsv") unique ones"
check_queries 1
note "after OPTIMIZE ... FINAL: $raw rows (the duplicates collapsed), the same results"

# ---- retention ------------------------------------------------------------
day1=$(utc_date "$T0")
for n in 1 2; do
	for t in samples_local stacks_local; do
		ch_query "$n" "ALTER TABLE jsampled.$t DROP PARTITION '$day1'" >/dev/null ||
			fail "DROP PARTITION '$day1' on server $n $t"
	done
done
left=$(ch_query 1 "SELECT count() FROM jsampled.samples WHERE date = '$day1'")
[ "$left" = 0 ] || fail "$left rows of $day1 left after DROP PARTITION"
expected_left=$(awk -F '\t' -v d="$day1" '$1 != d' "$TMP/rows.tsv" | wc -l)
raw=$(ch_query 1 "SELECT count() FROM jsampled.samples")
[ "$raw" = "$expected_left" ] || fail "after dropping $day1: $raw rows, expected $expected_left"
note "retention: DROP PARTITION '$day1' on each server's *_local tables removed that day only"
note "passed"
