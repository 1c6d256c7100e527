#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Off-CPU time spent in page faults, on JDK 17 and 25. WorkloadFaults's siteFault thread maps
# a file, reads a byte of each page and unmaps it, in a loop, while a helper
# drops the file from the page cache between passes: each page fault waits
# for the disk, and no system call returns at the end of the wait. The
# thread times its calls (wall and CPU). Checked, against that truth:
#  - the waits were real: at least 30 % of siteFault's wall time off CPU;
#  - the wall profile gives siteFault its wall time (samples / (time x Hz)
#    within 0.8-1.25), off-CPU waits included;
#  - in the mixed off-CPU view, most of siteFault's waits are under the
#    kernel's exc_page_fault frame.
. "$(dirname "$0")/lib.sh"
require_environment
[ -f "$B/java/WorkloadFaults.class" ] || fail "WorkloadFaults not built (run 'make java')"

HZ=199
SECONDS_RUN=8
# A file on a disk: a tmpfs page never waits for one.
FILE=$B/test-offcpu-faults.$$.dat
trap 'rc=$?; [ -n "${EVICTOR:-}" ] && kill "$EVICTOR" 2>/dev/null; rm -f "$FILE"; cleanup $rc' EXIT
fs=$(stat -f -c %T "$B")
[ "$fs" != tmpfs ] && [ "$fs" != ramfs ] || fail "$B is on $fs: the test needs a file on a disk"
dd if=/dev/urandom of="$FILE" bs=1M count=64 status=none || fail "cannot write $FILE"
sync "$FILE"

# start_evictor: drops the file's pages from the page cache every 10 ms
# (the pages of a pass still mapped stay; the next pass faults them in
# again); sets EVICTOR.
start_evictor() {
	"$PY" - "$FILE" <<-'PY' &
	import os, sys, time
	fd = os.open(sys.argv[1], os.O_RDONLY)
	while True:
	    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
	    time.sleep(0.01)
	PY
	EVICTOR=$!
}

sum_of() { { grep -E "$1" "$2" || true; } | awk '{ s += $NF } END { print s + 0 }'; }

# faults NAME JAVA: one run, checked against its truth.
faults() {
	local name=$1 java=$2 pid wall_ns cpu_ns in_site off_site in_fault view
	[ -x "$java" ] || fail "no $java (the machine image's JDK: see ../shared/platform.md)"
	start_evictor
	start_daemon --frequency $HZ --offcpu on
	JAVA=$java start_jvm "$name" -XX:CompileCommand=quiet '-XX:CompileCommand=dontinline,WorkloadFaults::site*' \
		WorkloadFaults $SECONDS_RUN "$FILE"
	pid=$JVM_PID
	wait_profiled "$pid"
	wait "$pid" || fail "the $name JVM failed: $(cat "$TMP/$name.err")"
	grep -q '^run ' "$TMP/$name.out" || fail "$name: WorkloadFaults printed no truth: $(cat "$TMP/$name.out" "$TMP/$name.err")"
	kill "$EVICTOR"
	EVICTOR=
	for view in "--type wall" "--type offcpu --view mixed"; do
		# shellcheck disable=SC2086 # two words each
		ctl cct "$pid" --format collapsed $view --thread siteFault >"$TMP/$name.${view##* }" 2>"$TMP/ctl.err" ||
			fail "cct $view failed: $(cat "$TMP/ctl.err")"
	done
	ctl stats >"$TMP/global-stats" 2>&1 || true
	stop_daemon

	read -r wall_ns cpu_ns < <(awk '$1 == "site" && $2 == "siteFault" { print $3, $4 }' "$TMP/$name.out")
	in_site=$(sum_of 'WorkloadFaults\.siteFault' "$TMP/$name.wall")
	off_site=$(sum_of 'WorkloadFaults\.siteFault' "$TMP/$name.mixed")
	in_fault=$(sum_of 'WorkloadFaults\.siteFault.*;exc_page_fault' "$TMP/$name.mixed")
	"$PY" - "$name" "$wall_ns" "$cpu_ns" "$HZ" "$in_site" "$off_site" "$in_fault" <<-'PY' || fail "$name: the profiles miss siteFault's waits in page faults (above)"
	import sys
	name = sys.argv[1]
	wall, cpu, hz, in_site, off_site, in_fault = (float(a) for a in sys.argv[2:])
	off_share = (wall - cpu) / wall if wall else 0
	want = wall * hz / 1e9
	print("[test_offcpu_faults] %s: siteFault %.2f s wall, %.0f %% of it off CPU; wall profile %d samples for %.0f expected "
	      "(%.2f); off-CPU %d samples, %d of them under exc_page_fault" %
	      (name, wall / 1e9, 100 * off_share, in_site, want, in_site / want if want else 0, off_site, in_fault))
	if off_share < 0.3:
	    sys.exit("siteFault was off CPU for %.0f %% of its time: the faults did not wait for the disk" % (100 * off_share))
	if not 0.8 <= in_site / want <= 1.25:
	    sys.exit("the wall profile gives siteFault %.2f of its wall time" % (in_site / want))
	if in_fault < 0.5 * off_site:
	    sys.exit("only %d of siteFault's %d off-CPU samples are under exc_page_fault" % (in_fault, off_site))
	PY
	grep -E '^bpf_offcpu_(samples|unplaced_ns|stash_taken)' "$TMP/global-stats" | tr '\n' ' ' | sed "s/^/[$TEST_NAME] $name: BPF: /"
	echo
}

faults jdk17 "$JAVA"
faults jdk25 "${JDK25_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java"
note passed
