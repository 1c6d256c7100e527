#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Who may see what: the query socket is root:jsampled 0660; a client in the
# group sees only processes of its own uid (SO_PEERCRED), another user's CCT
# is reported exactly like a missing process; a user outside the group cannot
# connect at all.
source "$(dirname "$0")/lib.sh"
require_environment
ensure_test_user
public_files
usermod -a -G jsampled "$TEST_USER" || fail "cannot add $TEST_USER to group jsampled"

ATTACH=auto start_daemon --agent-path "$TMP/libjsagent.so" --frequency 499
chmod 755 "$TMP"
perm=$(stat -c '%a %U:%G' "$TMP/q.sock")
[ "$perm" = "660 root:jsampled" ] || fail "query socket is $perm, expected 660 root:jsampled"
note "query socket: $perm"

start_plain_jvm rootjvm PhasedWorkload 60 - 1
ROOT_JVM=$JVM_PID
start_plain_jvm userjvm as "$TEST_USER" PhasedWorkload 60 - 1
USER_JVM=$JVM_PID
wait_profiled "$ROOT_JVM"
wait_profiled "$USER_JVM"
sleep 2

as_user() { setpriv --reuid="$1" --regid="$(id -g "$1")" --init-groups "$B/jsamplectl" --socket "$TMP/q.sock" "${@:2}"; }

# The test user (in the group): its own JVM only.
as_user "$TEST_USER" list >"$TMP/user.list" || fail "$TEST_USER cannot list: $(cat "$TMP/user.list")"
awk -v p="$USER_JVM" '$1 == p {f=1} END {exit !f}' "$TMP/user.list" || fail "$TEST_USER does not see its own JVM"
awk -v p="$ROOT_JVM" '$1 == p {f=1} END {exit !f}' "$TMP/user.list" && fail "$TEST_USER sees root's JVM"
as_user "$TEST_USER" cct "$USER_JVM" >"$TMP/user.cct" 2>&1 || fail "$TEST_USER cannot read its own CCT"
grep -q "PhasedWorkload" "$TMP/user.cct" || fail "$TEST_USER's own CCT has no PhasedWorkload frames"
rc=0
as_user "$TEST_USER" cct "$ROOT_JVM" >"$TMP/other.cct" 2>&1 || rc=$?
[ $rc -ne 0 ] || fail "$TEST_USER read root's CCT"
grep -q "no profiled process $ROOT_JVM" "$TMP/other.cct" || fail "unexpected answer for another user's CCT: $(cat "$TMP/other.cct")"
grep -q "PhasedWorkload" "$TMP/other.cct" && fail "another user's frames leaked"
note "$TEST_USER sees its JVM $USER_JVM, not root's $ROOT_JVM ('$(head -1 "$TMP/other.cct")')"

# Global stats count only what the client may see.
u_samples=$(as_user "$TEST_USER" stats --json | "$PY" -c "import json,sys; print(json.load(sys.stdin)['samples'])")
r_samples=$(ctl stats --json | "$PY" -c "import json,sys; print(json.load(sys.stdin)['samples'])")
[ "$u_samples" -lt "$r_samples" ] || fail "$TEST_USER's stats include other users' samples ($u_samples vs root $r_samples)"
# ... and none of the host's: the BPF program's, discovery's and the
# daemon's counters are root's to see.
as_user "$TEST_USER" stats --json >"$TMP/user.stats"
as_user "$TEST_USER" stats >"$TMP/user.stats.txt"
"$PY" - "$TMP/user.stats" <<'PYEOF' || fail "$TEST_USER's stats show host-wide counters: $(cat "$TMP/user.stats")"
import json, sys
d = json.load(open(sys.argv[1]))
leaked = [k for k in ("bpf", "discovery", "daemon", "unknown_pid_samples", "rss_bytes", "cpu_s", "sleeps") if k in d]
print("host-wide keys shown to the user:", leaked)
sys.exit(1 if leaked or d.get("processes") != 1 else 0)
PYEOF
grep -qE "^(bpf_|jvms_|attach_)" "$TMP/user.stats.txt" && fail "$TEST_USER's text stats show host-wide counters"
ctl stats --json | "$PY" -c "import json,sys; d=json.load(sys.stdin); sys.exit(0 if 'bpf' in d and 'daemon' in d else 1)" ||
	fail "root's stats lack the host-wide counters"

# A user outside the group cannot even connect.
rc=0
setpriv --reuid=nobody --regid=nogroup --clear-groups "$B/jsamplectl" --socket "$TMP/q.sock" list >"$TMP/nobody.out" 2>&1 || rc=$?
[ $rc -ne 0 ] || fail "nobody could query: $(cat "$TMP/nobody.out")"
grep -qi "permission denied" "$TMP/nobody.out" || fail "nobody's refusal does not say why: $(cat "$TMP/nobody.out")"
note "nobody: $(head -1 "$TMP/nobody.out")"

stop_daemon
note "ok"
