#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# A JVM of another distribution, as an older container runs it: Debian 11's
# JDK 11 on its glibc 2.31, in a root made by debootstrap, with its own pid
# and mount namespaces (jsampled's files are not there; pid 1 inside). The
# zero-config attach copies the agent in, and the agent built against this
# machine's newer glibc loads there (userspace/agent/libc_baseline.h): the
# hot methods are named and the share of the JVM's CPU time the profile
# covers is high. The same JVM in a user namespace of its own (a rootless
# container), made by hand and by rootless podman. Then an agent that glibc 2.31 cannot load (built as a library
# is by default here): the JVM is listed with the JVM's own reason.
source "$(dirname "$0")/lib.sh"
require_environment
ROOTFS=$B/roots/bullseye-jdk11
"$ROOT/tests/integration/make_root.sh" bullseye "$ROOTFS" openjdk-11-jre-headless ||
	fail "cannot make a Debian 11 root with JDK 11"
JDK11=/usr/lib/jvm/java-11-openjdk-amd64
[ -x "$ROOTFS$JDK11/bin/java" ] || fail "no JDK 11 in the Debian 11 root"
GLIBC=$(chroot "$ROOTFS" ldd --version | sed -n '1s/.* //p')
note "Debian 11 root: glibc $GLIBC, $(unshare --mount --pid --fork --kill-child --mount-proc="$ROOTFS/proc" \
	chroot "$ROOTFS" $JDK11/bin/java -version 2>&1 | head -1)"

# The workload, compiled for JDK 11, placed inside the root.
rm -rf "$ROOTFS/opt/jsampled-test"
mkdir -p "$ROOTFS/opt/jsampled-test"
"$JAVA_HOME/bin/javac" --release 11 -d "$ROOTFS/opt/jsampled-test" "$ROOT/tests/java/PhasedWorkload.java" ||
	fail "javac --release 11 failed"

# find_jvm PATTERN OUT WHAT: sets JVM_PID to the java process whose command
# line matches PATTERN (started through unshare, chroot or podman, which
# are its parents), waiting up to 30 s; fails with OUT's text if none.
find_jvm() {
	JVM_PID=
	for _ in $(seq 1 300); do
		JVM_PID=$(for p in $(pgrep -f "$1"); do
			[ "$(cat "/proc/$p/comm" 2>/dev/null)" = java ] && echo "$p"; done | head -1) || true
		[ -n "$JVM_PID" ] && break
		sleep 0.1
	done
	[ -n "$JVM_PID" ] || fail "$3 did not start: $(cat "$2")"
	JVM_PIDS+=("$JVM_PID")
}

# check_profiled LABEL JSON: JVM_PID is profiled, and after 3 s its stats
# (saved in JSON) show Java samples, >= 99 % resolved and >= 80 % of its
# CPU time covered.
check_profiled() {
	wait_profiled "$JVM_PID"
	sleep 3
	ctl stats "$JVM_PID" --json >"$2"
	"$PY" - "$2" "$1" <<'PY' || fail "the $1 JVM's profile is not right"
import json, sys
s = json.load(open(sys.argv[1]))
print(f"  {sys.argv[2]} JDK 11: {s['java_samples']} Java samples, resolved {s['resolved_pct']:.2f}%, "
      f"CPU covered {s['cpu_covered_pct']:.1f}%")
sys.exit(0 if s["java_samples"] > 0 and s["resolved_pct"] >= 99.0 and s["cpu_covered_pct"] >= 80.0 else 1)
PY
}

# run_in_root MARK SECONDS: the JVM in the root, own pid and mount
# namespaces; sets JVM_PID to its host pid.
run_in_root() {
	local mark=$1 secs=$2
	unshare --mount --pid --fork --kill-child --mount-proc="$ROOTFS/proc" \
		chroot "$ROOTFS" $JDK11/bin/java -cp /opt/jsampled-test PhasedWorkload "$secs" - 1 "$mark" \
		>"$TMP/$mark.out" 2>&1 &
	JVM_PIDS+=("$!")
	find_jvm "PhasedWorkload $secs - 1 $mark" "$TMP/$mark.out" "the JVM in the Debian 11 root"
	grep -q "NSpid:.*[[:space:]].*[[:space:]]" "/proc/$JVM_PID/status" || fail "the JVM is not in its own pid namespace"
}

# 1. The product's agent: attached, named, covered.
ATTACH=auto start_daemon --frequency 499 --rescan-s 1
run_in_root "bullseye-$$" 60
wait_profiled "$JVM_PID"
grep -q "/tmp/.jsampled/libjsagent" "/proc/$JVM_PID/maps" || fail "the agent is not mapped from the JVM's own /tmp"
VM=$(ctl list --json | "$PY" -c "import json,sys; print(next(p['vm'] for p in json.load(sys.stdin) if p['pid'] == $JVM_PID))")
note "attached to JDK 11 pid $JVM_PID (glibc $GLIBC): $VM"
case $VM in *11.0*) ;; *) fail "list does not show the JDK 11 VM for pid $JVM_PID: $VM" ;; esac
t0=$(cpu_ticks "$JVM_PID")
sleep 8
ctl cct "$JVM_PID" --format collapsed >"$TMP/cct.txt" || fail "no profile for pid $JVM_PID"
ctl stats "$JVM_PID" --json >"$TMP/stats.json"
t1=$(cpu_ticks "$JVM_PID")
"$PY" - "$TMP/cct.txt" "$TMP/stats.json" "$(( t1 - t0 ))" "$(getconf CLK_TCK)" <<'PY' || fail "the JDK 11 profile is not right"
import json, sys
cct = open(sys.argv[1]).read().splitlines()
s = json.load(open(sys.argv[2]))
ticks, hz = int(sys.argv[3]), int(sys.argv[4])
total = sum(int(l.rsplit(" ", 1)[1]) for l in cct if l.strip())
phases = {}
for l in cct:
    stack, n = l.rsplit(" ", 1)
    for p in ("phaseMatrix", "phaseHash", "phaseSort", "phaseRecurse"):
        if "PhasedWorkload." + p in stack:
            phases[p] = phases.get(p, 0) + int(n)
java = max(1, s["java_samples"])
print(f"  {total} samples in the tree, phases {phases}; resolved {s['resolved_pct']:.2f}%, "
      f"CPU covered {s['cpu_covered_pct']:.1f}% ({ticks / hz:.1f} s of CPU in the last 8 s)")
ok = len(phases) == 4 and s["resolved_pct"] >= 99.0 and s["wrong"] == 0
# Covered: the profile's share of the CPU time the kernel counted for the
# JVM, whatever the machine's load gave it; HotSpot's own threads (GC,
# compilers) are in both counts.
ok = ok and s["cpu_covered_pct"] >= 80.0
sys.exit(0 if ok else 1)
PY
stop_daemon
kill "$JVM_PID" 2>/dev/null || true

# 2. The same JVM in a user namespace of its own, as rootless podman and
#    docker run it: an unprivileged user's namespace where that user is
#    root, its /tmp a tmpfs that namespace mounted. Our uid 0 is mapped to
#    nothing there, so jsampled makes its files there as the JVM's user.
ensure_test_user
chmod 755 "$TMP"
cat >"$TMP/rootless.sh" <<SH
#!/bin/sh
exec unshare --user --map-root-user --mount --pid --fork --kill-child sh -c '
	mount --bind "$ROOTFS" /mnt && mount -t tmpfs tmpfs /mnt/tmp && mount -t proc proc /mnt/proc &&
	exec chroot /mnt $JDK11/bin/java -cp /opt/jsampled-test PhasedWorkload 60 - 1 rootless-\$1' sh "\$1"
SH
chmod 755 "$TMP/rootless.sh"
ATTACH=auto start_daemon --frequency 499 --rescan-s 1
setpriv --reuid="$TEST_USER" --regid="$(id -g "$TEST_USER")" --clear-groups "$TMP/rootless.sh" "$$" \
	>"$TMP/rootless.out" 2>&1 &
JVM_PIDS+=("$!")
find_jvm "PhasedWorkload 60 - 1 rootless-$$" "$TMP/rootless.out" "the user-namespaced JVM"
[ "$(readlink "/proc/$JVM_PID/ns/user")" != "$(readlink /proc/self/ns/user)" ] || fail "the JVM is not in a user namespace of its own"
owner=$(stat -c %u "/proc/$JVM_PID/root/tmp")
[ "$owner" = "$(id -u "$TEST_USER")" ] || fail "the JVM's /tmp is not its user's own (uid $owner)"
wait_profiled "$JVM_PID"
sleep 3
ctl stats "$JVM_PID" --json >"$TMP/rootless.json"
"$PY" - "$TMP/rootless.json" "$(stat -c %u "/proc/$JVM_PID/root/tmp/.jsampled")" "$(id -u "$TEST_USER")" <<'PY' ||
import json, sys
s = json.load(open(sys.argv[1]))
print(f"  user-namespaced JDK 11: {s['java_samples']} Java samples, resolved {s['resolved_pct']:.2f}%, "
      f"CPU covered {s['cpu_covered_pct']:.1f}%; /tmp/.jsampled owned by uid {sys.argv[2]}")
sys.exit(0 if s["java_samples"] > 0 and s["resolved_pct"] >= 99.0 and s["cpu_covered_pct"] >= 80.0
         and sys.argv[2] == sys.argv[3] else 1)
PY
	fail "the user-namespaced JVM's profile is not right"
stop_daemon
kill "$JVM_PID" 2>/dev/null || true

# 2b. A real rootless podman container of that root, run by a user with a
#     subordinate id range (its container root is that user on the host).
POD_USER=jsmppod
id "$POD_USER" >/dev/null 2>&1 || useradd -m -s /bin/sh "$POD_USER" || fail "cannot create user $POD_USER"
grep -q "^$POD_USER:" /etc/subuid || usermod --add-subuids 200000-265535 --add-subgids 200000-265535 "$POD_USER" ||
	fail "cannot give $POD_USER subordinate ids"
command -v podman >/dev/null || fail "podman is not installed (make deps)"
POD_RUN=$TMP/podman-run
mkdir -p "$POD_RUN" && chown "$POD_USER:" "$POD_RUN" && chmod 700 "$POD_RUN"
as_pod_user() {
	setpriv --reuid="$POD_USER" --regid="$(id -g "$POD_USER")" --init-groups \
		env HOME="$(getent passwd "$POD_USER" | cut -d: -f6)" XDG_RUNTIME_DIR="$POD_RUN" "$@"
}
IMAGE=localhost/jsampled-test-bullseye-jdk11-$$
tar -C "$ROOTFS" --exclude=./proc --exclude='./tmp/*' -c . 2>/dev/null | as_pod_user podman import - "$IMAGE" >"$TMP/podman-import.log" 2>&1 ||
	fail "podman import failed: $(tail -5 "$TMP/podman-import.log")"
ATTACH=auto start_daemon --frequency 499 --rescan-s 1
# runc: crun refuses this machine's hybrid cgroup layout.
as_pod_user podman run --rm --name "jsampled-test-$$" --runtime runc --network none "$IMAGE" \
	$JDK11/bin/java -cp /opt/jsampled-test PhasedWorkload 60 - 1 "podman-$$" >"$TMP/podman.out" 2>&1 &
JVM_PIDS+=("$!")
find_jvm "PhasedWorkload 60 - 1 podman-$$" "$TMP/podman.out" "the rootless podman JVM"
[ "$(readlink "/proc/$JVM_PID/ns/user")" != "$(readlink /proc/self/ns/user)" ] || fail "the podman JVM is not in a user namespace"
check_profiled "rootless podman" "$TMP/podman.json"
stop_daemon
as_pod_user podman rm -f "jsampled-test-$$" >/dev/null 2>&1 || true
as_pod_user podman rmi -f "$IMAGE" >/dev/null 2>&1 || true

# 2c. And rootful podman (no user namespace), its container's cgroup under
#     the test's own (the daemon profiles only that subtree).
ROOT_IMAGE=localhost/jsampled-test-root-bullseye-jdk11-$$
tar -C "$ROOTFS" --exclude=./proc --exclude='./tmp/*' -c . 2>/dev/null | podman import - "$ROOT_IMAGE" >"$TMP/podman-import-root.log" 2>&1 ||
	fail "podman import (root) failed: $(tail -5 "$TMP/podman-import-root.log")"
ATTACH=auto start_daemon --frequency 499 --rescan-s 1 --include-cgroup "$TEST_CGROUP/*"
# Root here lacks CAP_SYS_RESOURCE: podman's default limits cannot be raised.
podman run --rm --name "jsampled-test-root-$$" --runtime runc --network none --cgroup-parent="$TEST_CGROUP" \
	--ulimit nofile=20000:20000 --ulimit nproc=32768:32768 "$ROOT_IMAGE" \
	$JDK11/bin/java -cp /opt/jsampled-test PhasedWorkload 60 - 1 "rootpod-$$" >"$TMP/podman-root.out" 2>&1 &
JVM_PIDS+=("$!")
find_jvm "PhasedWorkload 60 - 1 rootpod-$$" "$TMP/podman-root.out" "the rootful podman JVM"
check_profiled "rootful podman" "$TMP/podman-root.json"
stop_daemon
podman rm -f "jsampled-test-root-$$" >/dev/null 2>&1 || true
podman rmi -f "$ROOT_IMAGE" >/dev/null 2>&1 || true

# 3. An agent glibc 2.31 refuses: the JVM is listed with its reason.
cc -shared -fPIC -O1 -o "$TMP/libjsagent.so" "$ROOT/tests/integration/new_glibc_agent.c" || fail "cannot build the test agent"
objdump -T "$TMP/libjsagent.so" | grep -q "GLIBC_2.3[4-9]" || fail "the test agent needs no glibc newer than 2.31"
ATTACH=auto start_daemon --frequency 499 --rescan-s 1 --agent-path "$TMP/libjsagent.so"
run_in_root "refused-$$" 60
why=
for _ in $(seq 1 150); do
	why=$(ctl list --json 2>/dev/null | "$PY" -c "
import json, sys
for p in json.load(sys.stdin):
    if p['pid'] == $JVM_PID:
        print(p.get('agent_problem', ''))") || true
	[ -n "$why" ] && break
	sleep 0.1
done
note "list: $(ctl list | awk -v p="$JVM_PID" '$1 == p')"
case $why in
*GLIBC_2.3*"not found"*) note "pid $JVM_PID has no agent, and says why: $why" ;;
*) fail "list does not give the JVM's reason for refusing the agent (got: '$why')" ;;
esac
ctl stats "$JVM_PID" | grep -q "^agent_problem .*GLIBC_2.3" || fail "stats does not give the reason: $(ctl stats "$JVM_PID")"
stop_daemon
note "ok"
