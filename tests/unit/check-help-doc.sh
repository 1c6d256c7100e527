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
shown=$(awk '/<!-- jsampled --help: begin -->/ { on = 1; next } /<!-- jsampled --help: end -->/ { on = 0 }
	on && !/^```/' "$DOC")
actual=$("$JSAMPLED" --help)
[ -n "$shown" ] || { echo "FAIL: $DOC has no jsampled --help block between its markers" >&2; exit 1; }
if [ "$shown" != "$actual" ]; then
	echo "FAIL: $DOC differs from jsampled --help (paste the new text between the markers):" >&2
	diff <(echo "$shown") <(echo "$actual") >&2 || true
	exit 1
fi
echo "docs/configuration.md shows jsampled --help as it is ($(echo "$actual" | wc -l) lines)"
shown=$(awk '/<!-- jsamplectl --help: begin -->/ { on = 1; next } /<!-- jsamplectl --help: end -->/ { on = 0 }
	on && !/^```/ && !/^\$ jsamplectl --help$/' "$DOC")
actual=$("$JSAMPLECTL" --help 2>&1 || true)
[ -n "$shown" ] || { echo "FAIL: $DOC has no jsamplectl --help block between its markers" >&2; exit 1; }
if [ "$shown" != "$actual" ]; then
	echo "FAIL: $DOC differs from jsamplectl --help (paste the new text between the markers):" >&2
	diff <(echo "$shown") <(echo "$actual") >&2 || true
	exit 1
fi
echo "docs/configuration.md shows jsamplectl --help as it is ($(echo "$actual" | wc -l) lines)"
