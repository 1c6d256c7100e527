#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Runs every libFuzzer target of tests/fuzz/ for SECONDS each (coverage-
# guided, from the committed seed corpora; new inputs go to a scratch corpus
# so the repository's seeds stay as they are) and prints, per target, the
# wall and CPU seconds it ran, the inputs executed, the coverage reached and
# the crashes found. Any crash, leak, sanitizer report or timeout fails the
# run; the input that caused it is kept in build/fuzz/artifacts/.
#   tests/fuzz/run-fuzzers.sh [SECONDS] [TARGET...]
#   FUZZ_JOBS=n   runs n targets at once (default 1)
#   FUZZ_CPU_SECONDS=n  a campaign measured in CPU, not wall, time: each
#                 target runs in SECONDS-long pieces, resuming from its scratch
#                 corpus, until it has used n CPU seconds in all. The pieces
#                 are kept in build/fuzz/campaign/<target>.ledger, so a
#                 stopped campaign goes on where it was when run again (a
#                 piece cut short is not counted); the table sums them.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
SECONDS_EACH=${1:-20}
shift || true
JOBS=${FUZZ_JOBS:-1}
CPU_BUDGET=${FUZZ_CPU_SECONDS:-}
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
	for f in tests/fuzz/fuzz_*.c; do
		t=$(basename "$f" .c)
		targets+=("${t#fuzz_}")
	done
fi
mkdir -p build/fuzz/artifacts build/fuzz/logs build/fuzz/campaign

# One piece of fuzzing of target $1 for SECONDS_EACH wall seconds; appends
# "wall_s cpu_s execs cov features rc errors" to the ledger $2.
run_piece() {
	local t=$1 ledger=$2 bin=build/fuzz/fuzz_$1 seeds=tests/fuzz/corpus/$1 work=build/fuzz/work/$1
	local log=build/fuzz/logs/$1.log start took rc cpu execs last cov ft errors=0
	start=$(date +%s)
	# CPU seconds (user + system) of the fuzzer, from bash's time keyword.
	cpu=$( { TIMEFORMAT='%U %S'; time "$bin" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2560 \
		-print_final_stats=1 -artifact_prefix=build/fuzz/artifacts/"$t"- "$work" "$seeds" >"$log" 2>&1; \
		echo "rc $?" >"$log.rc"; } 2>&1 | awk '{ printf "%d", $1 + $2 }')
	rc=$(sed -n 's/^rc //p' "$log.rc")
	took=$(( $(date +%s) - start ))
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	last=$(grep -E '^#[0-9]+.*(DONE|pulse|NEW|REDUCE|INITED)' "$log" | tail -1)
	cov=$(echo "$last" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
	ft=$(echo "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
	grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:' "$log" && errors=1
	# A failing piece keeps its log apart: the next piece would overwrite it.
	[ "$rc" = 0 ] && [ $errors = 0 ] || cp "$log" build/fuzz/logs/"$t".failed.log
	echo "$took ${cpu:-0} ${execs:-0} ${cov:-0} ${ft:-0} ${rc:-1} $errors" >>"$ledger"
}

# One target: pieces until its CPU budget is spent (one piece without
# FUZZ_CPU_SECONDS); its table row goes to build/fuzz/logs/<target>.row.
run_one() {
	local t=$1 row=build/fuzz/logs/$1.row ledger=build/fuzz/campaign/$1.ledger
	if [ ! -x build/fuzz/fuzz_"$t" ]; then
		echo "FAIL: build/fuzz/fuzz_$t not built (make fuzz)" >"$row"
		return
	fi
	if [ ! -d tests/fuzz/corpus/"$t" ]; then
		echo "FAIL: no seed corpus tests/fuzz/corpus/$t" >"$row"
		return
	fi
	mkdir -p build/fuzz/work/"$t"
	if [ -z "$CPU_BUDGET" ]; then
		ledger=build/fuzz/logs/$t.ledger
		: >"$ledger"
		run_piece "$t" "$ledger"
	else
		while :; do
			# Stop at the budget, or at the first failing piece.
			awk -v budget="$CPU_BUDGET" '{ cpu += $2; if ($6 != 0 || $7 != 0) bad = 1 }
				END { exit !(cpu >= budget || bad) }' "$ledger" 2>/dev/null && break
			run_piece "$t" "$ledger"
		done
	fi
	awk -v t="$t" -v failed="build/fuzz/logs/$t.failed.log" '
		{ wall += $1; cpu += $2; execs += $3; cov = $4; ft = $5; if ($6 != 0 || $7 != 0) { bad = 1; rc = $6 } }
		END {
			result = bad ? sprintf("FAILED (rc %d; see %s)", rc, failed) : "0 crashes"
			printf "%-14s %8d %8d %12d %8d %8d  %s\n", t, wall, cpu, execs, cov, ft, result
		}' "$ledger" >"$row"
}

running=0
for t in "${targets[@]}"; do
	rm -f build/fuzz/logs/"$t".row
	[ -n "$CPU_BUDGET" ] || rm -f build/fuzz/logs/"$t".failed.log
	run_one "$t" &
	running=$((running + 1))
	if [ "$running" -ge "$JOBS" ]; then
		wait -n
		running=$((running - 1))
	fi
done
wait

fail=0
printf '%-14s %8s %8s %12s %8s %8s  %s\n' target wall_s cpu_s execs cov features result
for t in "${targets[@]}"; do
	row=build/fuzz/logs/$t.row
	if [ -s "$row" ]; then
		cat "$row"
		grep -q ' 0 crashes$' "$row" || fail=1
	else
		echo "FAIL: $t printed no result"
		fail=1
	fi
done
# A failing target's report, from its first error line on, so that a CI log
# that keeps only the output still says what broke and where.
for t in "${targets[@]}"; do
	log=build/fuzz/logs/$t.failed.log
	if ! grep -q ' 0 crashes$' build/fuzz/logs/"$t".row 2>/dev/null && [ -s "$log" ]; then
		echo "--- $t: $log from its first report line"
		awk '/ERROR: |runtime error:|==[0-9]+==|^Test unit written|^Base64:/ { on = 1 } on' "$log" | head -n 80
	fi
done
[ $fail = 0 ] && echo "fuzzing: no crash in any target" || echo "fuzzing: FAILED"
exit $fail
