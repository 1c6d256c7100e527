#!/usr/bin/env bash
# Runs every libFuzzer target of tests/fuzz/ for SECONDS each (coverage-
# guided, from the committed seed corpora; new inputs go to a scratch corpus
# so the repository's seeds stay as they are) and prints, per target, the
# inputs executed, the coverage reached and the crashes found. Any crash,
# leak, sanitizer report or timeout fails the run; the input that caused it
# is kept in build/fuzz/artifacts/.
#   tests/fuzz/run-fuzzers.sh [SECONDS] [TARGET...]
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
SECONDS_EACH=${1:-20}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
	for f in tests/fuzz/fuzz_*.c; do
		t=$(basename "$f" .c)
		targets+=("${t#fuzz_}")
	done
fi
mkdir -p build/fuzz/artifacts build/fuzz/logs
fail=0
printf '%-14s %10s %12s %8s %8s  %s\n' target seconds execs cov features result
for t in "${targets[@]}"; do
	bin=build/fuzz/fuzz_$t
	seeds=tests/fuzz/corpus/$t
	work=build/fuzz/work/$t
	log=build/fuzz/logs/$t.log
	[ -x "$bin" ] || { echo "FAIL: $bin not built (make fuzz)"; fail=1; continue; }
	[ -d "$seeds" ] || { echo "FAIL: no seed corpus $seeds"; fail=1; continue; }
	mkdir -p "$work"
	start=$(date +%s)
	"$bin" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2560 -print_final_stats=1 \
		-artifact_prefix=build/fuzz/artifacts/"$t"- "$work" "$seeds" >"$log" 2>&1
	rc=$?
	took=$(( $(date +%s) - start ))
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	last=$(grep -E '^#[0-9]+.*(DONE|pulse|NEW|REDUCE|INITED)' "$log" | tail -1)
	cov=$(echo "$last" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
	ft=$(echo "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
	if [ $rc -eq 0 ] && ! grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:' "$log"; then
		result="0 crashes"
	else
		result="FAILED (rc $rc; see $log)"
		fail=1
	fi
	printf '%-14s %10s %12s %8s %8s  %s\n' "$t" "$took" "${execs:-?}" "${cov:-?}" "${ft:-?}" "$result"
done
[ $fail = 0 ] && echo "fuzzing: no crash in any target" || echo "fuzzing: FAILED"
exit $fail
