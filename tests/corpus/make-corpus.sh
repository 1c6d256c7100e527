#!/usr/bin/env bash
# Records the decoder regression corpus from real JVM runs (root; after
# `make`): each workload listed below runs under jsampled at 10 kHz on JDK 17
# and 25 (tests/bench/bench_decode.py --keep), and jsreplay --extract keeps up
# to 20 samples of every decoding outcome plus the agent data they need.
# The expected outcome of every kept sample is written next to it
# (<name>.outcomes); check-corpus.sh replays and compares.
#   usage: tests/corpus/make-corpus.sh [workload...]
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
WORKLOADS=("$@")
[ ${#WORKLOADS[@]} -gt 0 ] || WORKLOADS=(phased jni recursion classloading exceptions uniquepaths)
TMP=$(mktemp -d /tmp/jsampled-corpus.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
args=()
for w in "${WORKLOADS[@]}"; do args+=(--workload "$w"); done
/usr/bin/python3 "$ROOT/tests/bench/bench_decode.py" --seconds 6 --keep "$TMP" "${args[@]}"
for rec in "$TMP"/*.jsrec; do
	name=$(basename "$rec" .jsrec)
	"$ROOT/build/jsreplay" "$rec" --extract "$HERE/$name.jsrec" --per-outcome 20
	"$ROOT/build/jsreplay" "$HERE/$name.jsrec" --outcomes >"$HERE/$name.outcomes"
done
"$HERE/check-corpus.sh"
