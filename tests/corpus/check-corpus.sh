#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Decoder regression tests on recorded samples (no root, no JVM needed):
# every recording in tests/corpus/ is replayed through the current decoder
# and each sample's outcome - rule and the whole trace - must equal the
# expected one stored beside it. Samples expected to fail are known
# failures: one that decodes now is reported, not failed
# (compare_outcomes.py). Every top-frame heuristic must be exercised by some
# recording.
# Walks that join their thread's previous walk (walk_reuse.h) must give
# exactly the outcomes of walks to the bottom (--no-walk-reuse), and some
# must join. Virtual threads' frames are rooted on their own or shown
# under their carriers (check_vthread_views.py). A process sampled since
# its exec reports its agent's delay on the recording's clock (within
# jsampled's attach limit).
# When a decoder change is meant to change outcomes, review the diff and
# rerun with --update to store the new ones.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
REPLAY=${JSREPLAY:-$ROOT/build/jsreplay}
update=0
[ "${1:-}" = "--update" ] && update=1
shopt -s nullglob
recs=("$HERE"/*.jsrec)
if [ ${#recs[@]} -eq 0 ]; then
	echo "FAIL: no recordings in $HERE (run tests/corpus/make-corpus.sh)"
	exit 1
fi
fail=0
joined=0
timed=0
all=$(mktemp)
trap 'rm -f "$all" "$all.actual"' EXIT
for rec in "${recs[@]}"; do
	name=$(basename "$rec" .jsrec)
	expected="$HERE/$name.outcomes"
	actual=$("$REPLAY" "$rec" --outcomes) || { echo "FAIL $name: jsreplay failed"; fail=1; continue; }
	printf '%s\n' "$actual" >>"$all"
	plain=$("$REPLAY" "$rec" --outcomes --no-walk-reuse) || { echo "FAIL $name: jsreplay --no-walk-reuse failed"; fail=1; continue; }
	if [ "$plain" != "$actual" ]; then
		echo "FAIL $name: joining the previous walk changed outcomes:"
		diff <(printf '%s\n' "$plain") <(printf '%s\n' "$actual") | head -6
		fail=1
	fi
	# --cold (a benchmark's cache evictions) must not change what decodes.
	cold=$("$REPLAY" "$rec" --outcomes --cold 7) || { echo "FAIL $name: jsreplay --cold failed"; fail=1; continue; }
	if [ "$cold" != "$actual" ]; then
		echo "FAIL $name: jsreplay --cold changed outcomes"
		fail=1
	fi
	stats=$("$REPLAY" "$rec" --stats) || { echo "FAIL $name: jsreplay --stats failed"; fail=1; continue; }
	joined=$(( joined + $(awk '$1 == "walks_joined" { s += $2 } END { print s + 0 }' <<<"$stats") ))
	# A process sampled since its exec had its agent within jsampled's
	# own attach limit (jvm_startup.h): the two times are of one clock,
	# the recording's, not the replay's start against the recording's.
	limit_ms=$(( $(sed -n 's/^#define STARTUP_ATTACH_LIMIT_S \([0-9]*\).*/\1/p' "$ROOT/daemon/jvm/jvm_startup.h") * 1000 ))
	bad_delay=$(awk -v lim="$limit_ms" '$1 == "sampled_since_exec" { early = $2 }
		$1 == "agent_after_exec_ms" { if (early == 1 && $2 > lim) print $2 }' <<<"$stats")
	if [ -n "$bad_delay" ]; then
		echo "FAIL $name: agent_after_exec_ms of a process sampled since its exec is past the $limit_ms ms attach limit: $bad_delay"
		fail=1
	fi
	timed=$(( timed + $(awk '$1 == "sampled_since_exec" { early = $2 }
		$1 == "agent_after_exec_ms" && early == 1 && $2 > 0 { n++ } END { print n + 0 }' <<<"$stats") ))
	if [ $update = 1 ]; then
		printf '%s\n' "$actual" >"$expected"
		echo "updated $name"
		continue
	fi
	if [ ! -f "$expected" ]; then
		echo "FAIL $name: no $expected"
		fail=1
	else
		printf '%s\n' "$actual" >"$all.actual"
		/usr/bin/python3 "$HERE/compare_outcomes.py" "$expected" "$all.actual" "$name" || fail=1
	fi
	rm -f "$all.actual"
done
# Views: a virtual thread's frames at its own root, or under its carrier's.
vrecs=("$HERE"/app-vthreads-*.jsrec)
if [ ${#vrecs[@]} -eq 0 ]; then
	echo "FAIL: no virtual-thread recording to check the carrier view with"
	fail=1
fi
for rec in "${vrecs[@]}"; do
	/usr/bin/python3 "$HERE/check_vthread_views.py" "$REPLAY" "$rec" "$(basename "$rec" .jsrec)" || fail=1
done
# Coverage: each heuristic of decode_reasons.h decodes some sample.
rules=$(sed -n '/#define DECODE_RULES(X)/,/^$/ s/.*X([A-Z_]*, "\([a-z_]*\)".*/\1/p' "$ROOT/daemon/decode/decode_reasons.h")
for rule in $rules; do
	if ! grep -q " resolved $rule \| incomplete $rule " "$all"; then
		echo "FAIL: no recorded sample is decoded by the '$rule' heuristic"
		fail=1
	fi
done
if [ "$joined" -eq 0 ]; then
	echo "FAIL: no recorded walk joined its thread's previous walk: the comparison with --no-walk-reuse tested nothing"
	fail=1
fi
if [ "$timed" -eq 0 ]; then
	echo "FAIL: no recorded process sampled since its exec got its agent: the attach delay check tested nothing"
	fail=1
fi
[ $fail = 0 ] && echo "corpus: all outcomes as expected (the same without joining walks; $joined joined); every heuristic covered"
exit $fail
