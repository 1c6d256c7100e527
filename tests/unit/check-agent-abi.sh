#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The agent loads into JVMs on every libc a fleet's images carry
# (userspace/agent/libc_baseline.h): the glibc build asks for no symbol
# version newer than GLIBC_2.17 and for no library beyond glibc's own; the
# musl build needs musl's libc alone and loads under musl's dynamic linker.
# usage: check-agent-abi.sh BUILD_DIR
set -u
B=${1:-build}
BASELINE=2.17
fail=0
glibc=$B/libjsagent.so
musl=$B/libjsagent-musl.so
for f in "$glibc" "$musl"; do
	[ -f "$f" ] || { echo "FAIL: $f is missing"; exit 1; }
done
newest=$(objdump -T "$glibc" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -V | tail -1)
too_new=$(objdump -T "$glibc" | awk -v base="$BASELINE" '
	match($0, /GLIBC_[0-9][0-9.]*/) {
		v = substr($0, RSTART + 6, RLENGTH - 6); split(v, a, "."); split(base, b, ".")
		if (a[1] + 0 > b[1] + 0 || (a[1] + 0 == b[1] + 0 && a[2] + 0 > b[2] + 0)) print $NF " (GLIBC_" v ")"
	}')
if [ -n "$too_new" ]; then
	echo "FAIL: $glibc needs symbols newer than GLIBC_$BASELINE (bind them in userspace/agent/libc_baseline.h):"
	echo "$too_new"; fail=1
else
	echo "ok: $glibc needs GLIBC_$newest at most (baseline $BASELINE)"
fi
needed=$(readelf -d "$glibc" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
for lib in $needed; do
	case $lib in libc.so.6|libdl.so.2|libpthread.so.0|ld-linux-x86-64.so.2) ;;
	*) echo "FAIL: $glibc needs $lib, which not every glibc system has"; fail=1 ;;
	esac
done
case " $needed " in *" libdl.so.2 "*) ;; *) echo "FAIL: $glibc does not need libdl.so.2 (dlopen's home before glibc 2.34)"; fail=1 ;; esac
needed=$(readelf -d "$musl" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
if [ "$needed" != "libc.so " ]; then
	echo "FAIL: $musl needs [$needed], not musl's libc.so alone"; fail=1
fi
if objdump -T "$musl" | grep -q 'GLIBC_'; then
	echo "FAIL: $musl refers to glibc symbol versions"; fail=1
fi
loader=$B/tests/agent_abi_musl_load
mkdir -p "$B/tests"
if ! ${MUSL_CC:-musl-gcc} -O1 -o "$loader" tests/unit/agent_abi/musl_load.c; then
	echo "FAIL: cannot build the musl loader (musl-tools)"; exit 1
fi
"$loader" "$(realpath "$musl")" || { echo "FAIL: $musl does not load under musl"; fail=1; }
[ $fail -eq 0 ] && echo "check-agent-abi: ok"
exit $fail
