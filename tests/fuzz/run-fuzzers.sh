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
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
SECONDS_EACH=${1:-20}
shift || true
JOBS=${FUZZ_JOBS:-1}
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
	for f in tests/fuzz/fuzz_*.c; do
		t=$(basename "$f" .c)
		targets+=("${t#fuzz_}")
	done
fi
mkdir -p build/fuzz/artifacts build/fuzz/logs

# One target; its table row goes to build/fuzz/logs/<target>.row.
run_one() {
	local t=$1 bin=build/fuzz/fuzz_$1 seeds=tests/fuzz/corpus/$1 work=build/fuzz/work/$1
	local log=build/fuzz/logs/$1.log row=build/fuzz/logs/$1.row
	local start took rc cpu execs last cov ft result
	if [ ! -x "$bin" ]; then
		echo "FAIL: $bin not built (make fuzz)" >"$row"
		return
	fi
	if [ ! -d "$seeds" ]; then
		echo "FAIL: no seed corpus $seeds" >"$row"
		return
	fi
	mkdir -p "$work"
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
	if [ "$rc" = 0 ] && ! grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:' "$log"; then
		result="0 crashes"
	else
		result="FAILED (rc $rc; see $log)"
	fi
	printf '%-14s %8s %8s %12s %8s %8s  %s\n' "$t" "$took" "${cpu:-?}" "${execs:-?}" "${cov:-?}" "${ft:-?}" \
		"$result" >"$row"
}

running=0
for t in "${targets[@]}"; do
	rm -f build/fuzz/logs/"$t".row
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
	log=build/fuzz/logs/$t.log
	if ! grep -q ' 0 crashes$' build/fuzz/logs/"$t".row 2>/dev/null && [ -s "$log" ]; then
		echo "--- $t: $log from its first report line"
		awk '/ERROR: |runtime error:|==[0-9]+==|^Test unit written|^Base64:/ { on = 1 } on' "$log" | head -n 80
	fi
done
[ $fail = 0 ] && echo "fuzzing: no crash in any target" || echo "fuzzing: FAILED"
exit $fail
