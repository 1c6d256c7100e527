#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Zero-config attach: jsampled finds JVMs started without any flag and loads
# its agent through HotSpot's attach mechanism: as root, as another user,
# and in a container-like sandbox (own mount and pid namespaces, own /tmp,
# jsampled's files invisible). A JVM that opts out is left alone, and
# allow/deny rules changed by a SIGHUP reload apply to running JVMs. Neither
# the command line nor the config names --attach: attaching is the default.
source "$(dirname "$0")/lib.sh"
require_environment
ensure_test_user
public_files

cat >"$TMP/jsampled.conf" <<CONF
# a config file, as /etc/jsampled/jsampled.conf
frequency = 499
agent-path = $TMP/libjsagent.so
CONF
ATTACH=default start_daemon --config "$TMP/jsampled.conf" --rescan-s 5

# 1. root, no flags
start_plain_jvm root PhasedWorkload 60 - 1
ROOT_JVM=$JVM_PID
# 2. another user, no flags
start_plain_jvm user as "$TEST_USER" PhasedWorkload 60 - 1
USER_JVM=$JVM_PID
# 3. a container: private /tmp and pid namespace; the agent and jsampled's
#    agent socket are not visible inside, so jsampled must copy the agent in
#    and listen inside its /tmp.
MARK="ctr-$$"
unshare --kill-child --mount --pid --fork --mount-proc --propagation private sh -c "
	mount -t tmpfs tmpfs /mnt && cp -r '$TMP/java' /mnt/java &&
	mount -t tmpfs tmpfs '$B' && mount -t tmpfs tmpfs /tmp &&
	'$JAVA' -cp /mnt/java PhasedWorkload 60 - 1 $MARK & wait" >"$TMP/ctr.out" 2>&1 &
JVM_PIDS+=("$!")
# 4. opted out
start_plain_jvm optout -Djsampled.disable=true PhasedWorkload 60 - 1
OPTOUT_JVM=$JVM_PID
# 5. attach mechanism off: HotSpot would print a thread dump for each SIGQUIT
start_plain_jvm noattach -XX:+DisableAttachMechanism PhasedWorkload 60 - 1
NOATTACH_JVM=$JVM_PID

CTR_JVM=
for _ in $(seq 1 100); do
	CTR_JVM=$(pgrep -f "PhasedWorkload 60 - 1 $MARK" | while read -r p; do
		[ "$(readlink /proc/$p/exe 2>/dev/null)" = "$(readlink -f "$JAVA")" ] && echo "$p"; done | head -1) || true
	[ -n "$CTR_JVM" ] && break
	sleep 0.1
done
[ -n "$CTR_JVM" ] || fail "the container JVM did not start: $(cat "$TMP/ctr.out")"
JVM_PIDS+=("$CTR_JVM")
grep -q "NSpid:.*[[:space:]].*[[:space:]]" "/proc/$CTR_JVM/status" || fail "the container JVM is not in its own pid namespace"

for pid in "$ROOT_JVM" "$USER_JVM" "$CTR_JVM"; do
	wait_profiled "$pid"
done
note "attached: root JVM $ROOT_JVM, $TEST_USER JVM $USER_JVM, container JVM $CTR_JVM (host pid)"
# The native helper maps the libjvm.so it unwinds: it is jsampled's own
# child, never a JVM to sample or attach to.
if ctl list | grep -q "jsampled-unwind"; then
	fail "jsampled took its own native helper for a JVM: $(ctl list)"
fi
# Each busy JVM gets its 500 samples within a few seconds of CPU time; on a
# loaded machine that takes longer, so wait for them (up to 30 s).
for _ in $(seq 1 60); do
	short=0
	for pid in "$ROOT_JVM" "$USER_JVM" "$CTR_JVM"; do
		[ "$(list_field "$pid" 3)" -gt 500 ] 2>/dev/null || short=1
	done
	[ $short -eq 0 ] && break
	sleep 0.5
done
for pid in "$ROOT_JVM" "$USER_JVM" "$CTR_JVM"; do
	samples=$(list_field "$pid" 3)
	resolved=$(list_field "$pid" 4)
	note "pid $pid: $samples samples, $resolved resolved"
	[ "${samples:-0}" -gt 500 ] || fail "pid $pid: only ${samples:-0} samples"
	ctl cct "$pid" --format collapsed >"$TMP/cct.$pid" || fail "no CCT for pid $pid"
	awk '/PhasedWorkload\.fib/ {f=1} END {exit !f}' "$TMP/cct.$pid" || fail "pid $pid: no PhasedWorkload frames in its CCT"
done
uid_seen=$(ctl stats "$USER_JVM" --json | "$PY" -c "import json,sys; print(json.load(sys.stdin).get('uid', ''))")
[ "$uid_seen" = "$(id -u "$TEST_USER")" ] || fail "the user JVM is recorded with uid '$uid_seen'"
for f in "$TMP/root.out" "$TMP/user.out"; do
	grep -q "Full thread dump" "$f" && fail "a JVM printed a thread dump: SIGQUIT reached it without the attach trigger"
done

# The opted-out JVM: found, not profiled.
grep -q "pid $OPTOUT_JVM: the JVM opted out" "$TMP/daemon.log" || fail "no opt-out decision for pid $OPTOUT_JVM"
[ -z "$(list_field "$OPTOUT_JVM" 2)" ] || fail "the opted-out JVM $OPTOUT_JVM is profiled"
note "pid $OPTOUT_JVM (-Djsampled.disable=true) left alone"

# The JVM without an attach mechanism: reported, and sent no SIGQUIT.
grep -q "cannot attach to JVM pid $NOATTACH_JVM: it was started with -XX:+DisableAttachMechanism" "$TMP/daemon.log" ||
	fail "no report that pid $NOATTACH_JVM cannot be attached"
grep -q "Full thread dump" "$TMP/noattach.out" && fail "the JVM with -XX:+DisableAttachMechanism was sent SIGQUIT"
note "pid $NOATTACH_JVM (-XX:+DisableAttachMechanism) reported, no SIGQUIT sent"

# A reload excluding the test user: its JVM is let go, the others keep
# being profiled, no profile is lost, and the new frequency applies.
before=$(list_field "$ROOT_JVM" 3)
echo "exclude-user = $TEST_USER" >>"$TMP/jsampled.conf"
sed -i 's/^frequency = 499/frequency = 997/' "$TMP/jsampled.conf"
kill -HUP "$DAEMON_PID"
for _ in $(seq 1 50); do
	[ "$(list_field "$USER_JVM" 2)" = "agent-lost" ] && break
	sleep 0.1
done
[ "$(list_field "$USER_JVM" 2)" = "agent-lost" ] || fail "reload did not let go of the excluded user's JVM"
grep -q "reload: sampling at 997 Hz" "$TMP/daemon.log" || fail "reload did not apply the new frequency"
sleep 3
after=$(list_field "$ROOT_JVM" 3)
[ "$after" -gt "$before" ] || fail "the root JVM's profile did not keep growing after the reload ($before -> $after)"
[ "$(list_field "$USER_JVM" 3)" -gt 0 ] || fail "the excluded JVM's profile was lost"
note "SIGHUP: $TEST_USER excluded and let go, root JVM $before -> $after samples"
stop_daemon
note "ok"
