#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# docs/configuration.md shows `jsampled --help` and `jsamplectl --help` as
# they are: the lines between each one's two markers (inside the code
# fence, but for the `$ ... --help` line) are the binary's usage text.
#   JSAMPLED=build/jsampled JSAMPLECTL=build/jsamplectl tests/unit/check-help-doc.sh
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DOC=$ROOT/docs/configuration.md
JSAMPLED=${JSAMPLED:-$ROOT/build/jsampled}
JSAMPLECTL=${JSAMPLECTL:-$ROOT/build/jsamplectl}
# check NAME BINARY: the block between NAME's markers is BINARY --help.
check() {
	local name=$1 shown actual
	shown=$(awk -v b="<!-- $name --help: begin -->" -v e="<!-- $name --help: end -->" -v cmd="\$ $name --help" '
		$0 == b { on = 1; next } $0 == e { on = 0 } on && !/^```/ && $0 != cmd' "$DOC")
	actual=$("$2" --help 2>&1 || true)
	[ -n "$shown" ] || { echo "FAIL: $DOC has no $name --help block between its markers" >&2; exit 1; }
	if [ "$shown" != "$actual" ]; then
		echo "FAIL: $DOC differs from $name --help (paste the new text between the markers):" >&2
		diff <(echo "$shown") <(echo "$actual") >&2 || true
		exit 1
	fi
	echo "docs/configuration.md shows $name --help as it is ($(echo "$actual" | wc -l) lines)"
}
check jsampled "$JSAMPLED"
check jsamplectl "$JSAMPLECTL"
