#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Records the decoder regression corpus from real JVM runs (root; after
# `make`): each workload listed below runs under jsampled at 10 kHz on JDK 17
# and 25 (tests/bench/bench_decode.py --keep), and jsreplay --extract keeps up
# to N samples of every decoding outcome plus the agent data they need.
# The expected outcome of every kept sample is written next to it
# (<name>.outcomes); check-corpus.sh replays and compares.
#   usage: tests/corpus/make-corpus.sh [--from DIR] [--per-outcome N] [workload...]
#   --from DIR   extract from the recordings a bench-decode --keep DIR run
#                left there instead of running the workloads again
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
FROM=
PER=12
while [ $# -gt 0 ]; do
	case "$1" in
	--from) FROM=$2; shift 2 ;;
	--per-outcome) PER=$2; shift 2 ;;
	*) break ;;
	esac
done
WORKLOADS=("$@")
[ ${#WORKLOADS[@]} -gt 0 ] || WORKLOADS=(phased collections jni recursion threads classloading exceptions uniquepaths)
if [ -z "$FROM" ]; then
	FROM=$(mktemp -d /tmp/jsampled-corpus.XXXXXX)
	trap 'rm -rf "$FROM"' EXIT
	args=()
	for w in "${WORKLOADS[@]}"; do args+=(--workload "$w"); done
	/usr/bin/python3 "$ROOT/tests/bench/bench_decode.py" --seconds 6 --keep "$FROM" "${args[@]}"
fi
# Only this script's entries are remade: the app-* ones are
# tests/bench/bench_decode_apps.py --corpus's.
for w in "${WORKLOADS[@]}"; do
	rm -f "$HERE/$w"-jdk*.jsrec "$HERE/$w"-jdk*.outcomes
done
for w in "${WORKLOADS[@]}"; do
	for rec in "$FROM/$w"-jdk*.jsrec; do
		[ -f "$rec" ] || { echo "no recording $FROM/$w-jdk*.jsrec" >&2; exit 1; }
		name=$(basename "$rec" .jsrec)
		"$ROOT/build/jsreplay" "$rec" --extract "$HERE/$name.jsrec" --per-outcome "$PER"
		"$ROOT/build/jsreplay" "$HERE/$name.jsrec" --outcomes >"$HERE/$name.outcomes"
	done
done
"$HERE/check-corpus.sh"
