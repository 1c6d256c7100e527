#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Runs inside the VM (systemd is PID 1): what a user does on a new host.
# Every line for the host starts with VMTEST.
set -u
say() { echo "VMTEST $*"; }
fail() {
	say "FAIL $*"
	journalctl -u jsampled --no-pager | tail -40 | sed 's/^/VMTEST journal: /'
	[ -f /tmp/jvm.out ] && tail -20 /tmp/jvm.out | sed 's/^/VMTEST jvm: /'
	ls -la /run/jsampled 2>&1 | sed 's/^/VMTEST run: /'
	exit 1
}

say "kernel $(uname -r), PID 1 is $(cat /proc/1/comm)"
[ "$(cat /proc/1/comm)" = systemd ] || fail "PID 1 is not systemd"
dpkg -i /root/jsampled.deb >/tmp/dpkg.log 2>&1 || fail "dpkg -i: $(tail -5 /tmp/dpkg.log)"
say "installed: $(dpkg-query -W -f='${Package} ${Version} ${Status}' jsampled)"
getent group jsampled >/dev/null || fail "the package did not create group jsampled"
systemctl is-enabled jsampled.service >/dev/null || fail "jsampled.service is not enabled"
systemctl start jsampled || fail "systemctl start jsampled failed"
systemctl is-active jsampled >/dev/null || fail "jsampled is not active"
say "systemctl: $(systemctl show -p ActiveState,SubState,Type,NRestarts jsampled | tr '\n' ' ')"
say "status: $(systemctl show -p StatusText --value jsampled)"
stat -c 'VMTEST socket %n %a %U:%G' /run/jsampled/jsampled.sock

# A JVM with no flags at all.
cd /root/java
java -cp /root/java PhasedWorkload 400 - 1 >/tmp/jvm.out 2>&1 &
JVM=$!
ok=
for _ in $(seq 1 240); do
	if jsamplectl list 2>/dev/null | awk -v p="$JVM" '$1 == p && $2 == "live" {f=1} END {exit !f}'; then
		ok=1
		break
	fi
	sleep 0.5
done
[ -n "$ok" ] || fail "the JVM (pid $JVM) was not profiled within 120 s: $(jsamplectl list 2>&1)"
sleep 10
jsamplectl list | sed 's/^/VMTEST list: /'
jsamplectl cct "$JVM" --format collapsed >/tmp/cct.txt || fail "jsamplectl cct failed"
fib=$(awk '/PhasedWorkload\.fib/ {s += $NF} END {print s + 0}' /tmp/cct.txt)
total=$(awk '{s += $NF} END {print s + 0}' /tmp/cct.txt)
[ "$fib" -gt 0 ] || fail "no PhasedWorkload.fib samples in the CCT"
jsamplectl cct "$JVM" | head -12 | sed 's/^/VMTEST cct: /'
say "cct of pid $JVM: $total samples, $fib under PhasedWorkload.fib"
# Native frames through the sandboxed helper, under the unit's filters.
jsamplectl stats | grep -E '^native_(helper_starts|helper_exits|walks|completed|fallback)' | sed 's/^/VMTEST stats: /'
completed=$(jsamplectl stats | awk '$1 == "native_completed" {print $2}')
exits=$(jsamplectl stats | awk '$1 == "native_helper_exits" {print $2}')
[ "${completed:-0}" -gt 0 ] || fail "no sample got its native frames from the helper"
[ "${exits:-1}" = 0 ] || fail "the native helper died under the unit ($exits exits)"
pgrep -u jsampled-unwind -x jsampled-unwind >/dev/null || fail "no native helper runs as user jsampled-unwind"
jsamplectl cct "$JVM" --format collapsed --view mixed | grep -q 'Thread::call_run' ||
	fail "the mixed view has no libjvm frames"
say "native frames: $completed samples unwound by the helper (uid jsampled-unwind)"
systemctl reload jsampled || fail "systemctl reload failed"
systemctl is-active jsampled >/dev/null || fail "jsampled died on reload"
systemctl restart jsampled || fail "systemctl restart failed"
sleep 3
after=$(jsamplectl list | awk -v p="$JVM" '$1 == p {print $3}')
[ "${after:-0}" -ge "$total" ] || fail "profile lost across systemctl restart (${after:-0} < $total)"
say "after systemctl restart: $after samples for pid $JVM (was $total)"
journalctl -u jsampled --no-pager -o cat | grep -E "loaded the agent|restored|profiling pid|drop|warning|error" | head -12 | sed 's/^/VMTEST journal: /'
kill "$JVM"
say "PASS"
