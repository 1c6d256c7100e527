#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# make_root.sh SUITE DIR PACKAGES...: a minimal Debian root of another
# release (debootstrap --variant=minbase) with PACKAGES in it, made once
# and kept in DIR (DIR/.complete marks a whole one). The tests run JVMs of
# that release's JDK inside it, in their own pid and mount namespaces, as a
# container of an older or newer distribution would.
set -euo pipefail
suite=$1 dir=$2
shift 2
[ -f "$dir/.complete" ] && exit 0
command -v debootstrap >/dev/null || { echo "make_root: debootstrap is not installed (make deps)" >&2; exit 1; }
rm -rf "$dir"
mkdir -p "$(dirname "$dir")"
start=$(date +%s)
include=$(IFS=,; echo "$*")
if ! debootstrap --variant=minbase ${include:+--include="$include"} "$suite" "$dir" http://deb.debian.org/debian \
	>"$dir.log" 2>&1; then
	echo "make_root: debootstrap $suite failed; the end of $dir.log:" >&2
	tail -n 20 "$dir.log" >&2
	exit 1
fi
touch "$dir/.complete"
echo "make_root: $suite root with $* in $dir, $(( $(date +%s) - start )) s"
