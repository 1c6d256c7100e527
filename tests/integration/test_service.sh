#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The systemd service contract, without touching this machine's systemd:
# systemd-analyze verify accepts the unit, and jsampled speaks the notify
# protocol to a NOTIFY_SOCKET of ours: READY=1 once it samples and serves,
# WATCHDOG=1 pings at the interval WATCHDOG_USEC asks for, STATUS lines,
# STOPPING=1 on SIGTERM.
source "$(dirname "$0")/lib.sh"
require_environment
command -v systemd-analyze >/dev/null || fail "systemd-analyze missing (run 'make deps')"

# The units as `make install` lays them out, with ExecStart pointing at
# this build's install (verify checks that the executable exists).
make -s -C "$ROOT" install DESTDIR="$TMP/inst" PREFIX=/usr >/dev/null || fail "make install failed"
for f in usr/sbin/jsampled usr/bin/jsamplectl usr/lib/jsampled/libjsagent.so usr/lib/jsampled/jsampled-unwind \
	lib/systemd/system/jsampled.service \
	lib/systemd/system/jsampled.socket etc/jsampled/jsampled.conf lib/systemd/system/jsampled-export.service \
	etc/jsampled/export.conf; do
	[ -e "$TMP/inst/$f" ] || fail "make install did not install /$f"
done
mkdir -p "$TMP/unit"
sed "s|/usr/sbin/jsampled|$TMP/inst/usr/sbin/jsampled|" "$TMP/inst/lib/systemd/system/jsampled.service" \
	>"$TMP/unit/jsampled.service"
cp "$TMP/inst/lib/systemd/system/jsampled.socket" "$TMP/unit/"
sed "s|/usr/bin/jsamplectl|$TMP/inst/usr/bin/jsamplectl|" "$TMP/inst/lib/systemd/system/jsampled-export.service" \
	>"$TMP/unit/jsampled-export.service"
out=$(cd "$TMP/unit" && systemd-analyze verify jsampled.socket jsampled.service jsampled-export.service 2>&1) ||
	fail "systemd-analyze verify: $out"
[ -z "$out" ] || fail "systemd-analyze verify complained: $out"
note "systemd-analyze verify: jsampled.service, jsampled.socket and jsampled-export.service are clean"
[ "$(stat -c %a "$TMP/inst/etc/jsampled/export.conf")" = 600 ] || fail "export.conf (secrets) is not mode 0600"
# The installed config file is what the installed daemon reads.
"$TMP/inst/usr/sbin/jsampled" --config "$TMP/inst/etc/jsampled/jsampled.conf" --help >/dev/null ||
	fail "the installed daemon rejects the installed config"
out=$("$TMP/inst/usr/sbin/jsampled" --config "$TMP/inst/etc/jsampled/jsampled.conf" --frequency 0 2>&1) &&
	fail "a bad option was accepted"
echo "$out" | grep -q "frequency" || fail "a bad option is not explained: $out"

# The Debian package: its files, its maintainer scripts, its conffile.
make -s -C "$ROOT" deb >/dev/null || fail "make deb failed"
deb=$(ls "$B"/jsampled_*_amd64.deb | head -1)
dpkg-deb -c "$deb" >"$TMP/deb.list" || fail "not a Debian package: $deb"
for f in ./usr/sbin/jsampled ./usr/lib/jsampled/libjsagent.so ./usr/lib/jsampled/jsampled-unwind \
	./lib/systemd/system/jsampled.socket; do
	grep -q " $f\$" "$TMP/deb.list" || fail "$deb lacks $f"
done
dpkg-deb -I "$deb" postinst | grep -q "addgroup --system jsampled" || fail "postinst does not create the group"
dpkg-deb -I "$deb" postinst | grep -q "deb-systemd-helper enable jsampled.service" || fail "postinst does not enable the unit"
[ "$(dpkg-deb -I "$deb" conffiles | tr '\n' ' ')" = "/etc/jsampled/jsampled.conf /etc/jsampled/export.conf " ] ||
	fail "the configs are not conffiles: $(dpkg-deb -I "$deb" conffiles)"
dpkg-deb -I "$deb" postinst | grep -q "ingroup jsampled-readers jsampled-export" ||
	fail "postinst does not create the exporter's user"
dpkg-deb -I "$deb" postinst | grep -q "group --shell /usr/sbin/nologin jsampled-unwind" ||
	fail "postinst does not create the native helper's user"
note "make install and make deb: $(basename "$deb"), $(wc -l <"$TMP/deb.list") entries"

# A notify socket that records every datagram with its arrival time.
$PY - "$TMP/notify.sock" "$TMP/notify.txt" <<'PYEOF' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(15)
t0 = time.monotonic()
with open(sys.argv[2], "w", buffering=1) as out:
    try:
        while True:
            msg = s.recv(4096).decode()
            out.write(f"{time.monotonic() - t0:.3f} {msg!r}\n")
            if "STOPPING=1" in msg:
                break
    except socket.timeout:
        pass
PYEOF
LISTENER=$!
for _ in $(seq 1 50); do [ -S "$TMP/notify.sock" ] && break; sleep 0.1; done
[ -S "$TMP/notify.sock" ] || fail "notify listener did not start"

NOTIFY_SOCKET=$TMP/notify.sock WATCHDOG_USEC=2000000 start_daemon --frequency 99
sleep 5.5
kill -TERM "$DAEMON_PID"
wait "$DAEMON_PID" || fail "jsampled exited with $? on SIGTERM"
DAEMON_PID=
wait "$LISTENER" || true
cat "$TMP/notify.txt"
grep "READY=1" "$TMP/notify.txt" >/dev/null || fail "no READY=1"
grep "STATUS=profiling" "$TMP/notify.txt" >/dev/null || fail "no STATUS line"
pings=$(grep -c "WATCHDOG=1" "$TMP/notify.txt" || true)
# 5.5 s with a 2 s watchdog: a ping at least every second.
[ "$pings" -ge 4 ] || fail "only $pings watchdog pings in 5.5 s (want >= 4 at WATCHDOG_USEC=2 s)"
first_ready=$(grep -n "READY=1" "$TMP/notify.txt" | head -1 | cut -d: -f1)
first_ping=$(grep -n "WATCHDOG=1" "$TMP/notify.txt" | head -1 | cut -d: -f1)
[ "$first_ready" -lt "$first_ping" ] || fail "a watchdog ping came before READY=1"
tail -1 "$TMP/notify.txt" | grep "STOPPING=1" >/dev/null || fail "no STOPPING=1 at the end"
note "notify protocol: READY=1, STATUS, $pings watchdog pings in 5.5 s, STOPPING=1 on SIGTERM"

# With exactly the capabilities the unit grants (as systemd would: bounding
# set and ambient set from deploy/jsampled.service), jsampled ends up with
# only the ones it keeps, in every set - the bounding set included.
caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$ROOT/deploy/jsampled.service")
ambient=$(sed -n 's/^AmbientCapabilities=//p' "$ROOT/deploy/jsampled.service")
[ -n "$caps" ] && [ "$caps" = "$ambient" ] || fail "the unit's bounding and ambient sets differ or are missing"
# Only those this machine's root has (a sandbox may lack some: here
# CAP_SYS_RESOURCE), named for setpriv.
have=$((16#$(awk '$1 == "CapBnd:" {print $2}' /proc/self/status)))
list=
for c in $caps; do
	n=$(awk -v c="$c" '$1 == "#define" && $2 == c {print $3}' /usr/include/linux/capability.h)
	[ -n "$n" ] || fail "unknown capability $c in the unit"
	if (( (have >> n) & 1 )); then
		list="$list,+$(echo "${c#CAP_}" | tr 'A-Z' 'a-z')"
	else
		note "this machine's root lacks $c: started without it"
	fi
done
list=${list#,}
DAEMON_WRAP=(setpriv --bounding-set=-all,$list --inh-caps=-all,$list --ambient-caps=-all,$list)
"${DAEMON_WRAP[@]}" "$DAEMON" --socket "$TMP/c.sock" --agent-socket "$TMP/ca.sock" --attach off \
	>>"$TMP/daemon.log" 2>&1 &
DAEMON_PID=$!
for _ in $(seq 1 100); do [ -S "$TMP/c.sock" ] && break; sleep 0.05; done
[ -S "$TMP/c.sock" ] || fail "jsampled did not start with the unit's capabilities: $(tail -3 "$TMP/daemon.log")"
sleep 0.5
# CAP_KILL 5, CAP_SETGID 6, CAP_SETUID 7, CAP_SYS_PTRACE 19, CAP_DAC_READ_SEARCH 2, CAP_BPF 39,
# CAP_PERFMON 38 (each new JVM's threads get perf events: daemon/ingest/sampler_events.h)
want=$(printf '%016x' $(( (1 << 5) | (1 << 6) | (1 << 7) | (1 << 19) | (1 << 2) | (1 << 39) | (1 << 38) )))
for set in CapBnd CapPrm CapEff; do
	got=$(awk -v s="$set:" '$1 == s {print $2}' "/proc/$DAEMON_PID/status")
	[ "$got" = "$want" ] || fail "$set is $got after start, want $want (only the capabilities jsampled keeps)"
done
grep -q "bounding set could not be reduced" "$TMP/daemon.log" && fail "jsampled could not reduce its bounding set"
stop_daemon
note "with the unit's capabilities ($caps), after start: CapBnd = CapPrm = CapEff = $want"

# Without CAP_SETPCAP it cannot reduce its bounding set: it stops rather
# than run with more than it needs.
nopcap=$(echo "$list" | tr ',' '\n' | grep -v '^+setpcap$' | paste -sd, -)
if setpriv --bounding-set=-all,$nopcap --inh-caps=-all,$nopcap --ambient-caps=-all,$nopcap \
	"$DAEMON" --socket "$TMP/d.sock" --agent-socket "$TMP/da.sock" --attach off >"$TMP/nopcap.log" 2>&1; then
	fail "jsampled ran on although it could not drop its capabilities"
fi
grep -q "not running with more than it needs" "$TMP/nopcap.log" ||
	fail "a failed capability drop is not explained: $(tail -3 "$TMP/nopcap.log")"
note "without CAP_SETPCAP (the bounding set cannot shrink): jsampled stops, saying why"
note "passed"
