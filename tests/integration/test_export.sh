#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Fleet export to Pyroscope: `jsamplectl export` pushes each process's
# profile interval by interval to a local receiver that checks every request
# against Pyroscope's documented ingest API and decodes the profile with
# go tool pprof (pyroscope_receiver.py; no Pyroscope server is packaged).
# Checked (check_export.py): service names (JVM property, main class),
# labels, credentials and tenant, contiguous intervals with no repeat across
# a restart, the first two requests refused 503 and retried, and each
# process's pushed samples adding up to what jsampled reports for the same
# window. Also: a secret in a config file others may read is refused.
. "$(dirname "$0")/lib.sh"
require_environment
command -v go >/dev/null || fail "go is not installed (run 'make deps')"

start_daemon --frequency 499
start_jvm orders -Djsampled.service=orders PhasedWorkload 120
NAMED=$JVM_PID
start_jvm plain PhasedWorkload 120
PLAIN=$JVM_PID
wait_profiled "$NAMED"
wait_profiled "$PLAIN"

start_pyroscope_receiver --fail-first 2 --token "t0ken-$$" --tenant team-a

CONF=$TMP/export.conf
cat >"$CONF" <<EOF
# the exporter's settings, secrets only here
pyroscope_url = http://127.0.0.1:$PORT/
pyroscope_token = t0ken-$$
pyroscope_tenant = team-a
host = test-host-a
state_dir = $TMP/export
interval_s = 5
lag_s = 5
EOF
chmod 0644 "$CONF"
rc=0
ctl export --config "$CONF" --max-intervals 1 2>"$TMP/refused.err" || rc=$?
[ $rc -eq 2 ] && grep -q "others may read" "$TMP/refused.err" ||
	fail "a token in a world-readable config was not refused (exit $rc: $(cat "$TMP/refused.err"))"
chmod 0600 "$CONF"
# Options are per subcommand: export takes no --json (nor cct a --lag-s).
rc=0
ctl export --config "$CONF" --max-intervals 1 --json 2>"$TMP/scope.err" || rc=$?
[ $rc -eq 2 ] && grep -q "export takes no --json" "$TMP/scope.err" ||
	fail "export accepted --json (exit $rc: $(cat "$TMP/scope.err"))"
rc=0
ctl cct 1 --lag-s 5 2>"$TMP/scope.err" || rc=$?
[ $rc -eq 2 ] && grep -q "cct takes no --lag-s" "$TMP/scope.err" || fail "cct accepted --lag-s (exit $rc)"

# Two runs: the second resumes where the first stopped.
ctl export --config "$CONF" --max-intervals 4 2>"$TMP/export1.err" || fail "export failed: $(cat "$TMP/export1.err")"
cp "$TMP/export/status.json" "$TMP/status1.json"
ctl export --config "$CONF" --max-intervals 2 2>"$TMP/export2.err" || fail "export failed: $(cat "$TMP/export2.err")"
ctl export --config "$CONF" --status >"$TMP/status2.json" || fail "export --status failed"
note "$(tail -n 1 "$TMP/export1.err")"
note "$(tail -n 1 "$TMP/export2.err")"

"$PY" "$ROOT/tests/integration/check_export.py" --ctl "$B/jsamplectl" --socket "$TMP/q.sock" \
	--received "$TMP/received.jsonl" --status1 "$TMP/status1.json" --status2 "$TMP/status2.json" \
	--named "$NAMED" --plain "$PLAIN" --host test-host-a --tmp "$TMP" | tee "$TMP/check.log"
grep -q '^all export checks passed' "$TMP/check.log" || fail "export checks failed (see above)"
kill "$RECEIVER"
stop_daemon
note passed
