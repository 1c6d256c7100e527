#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# jsampled against hostile local programs (tests/integration/hostile.py,
# racer.c, hostile_elf.py, native_target.c): containers racing symbolic
# links against the attach, fake JVMs that lie in the attach protocol,
# attach children stopped by their user, agents that keep a socket across
# an exec or after their process exits, lie about ids, threads and sizes,
# flood the sockets, or send escapes; crafted libraries and programs
# aimed at the native unwinder and the launcher check, perf maps that are
# not the process's own, and requests to profile what ptrace would refuse.
# After each: no host file changed, jsampled up and within its memory
# bound, and real JVMs started alongside still found and profiled.
# Run with DAEMON=<an older jsampled> to see these attacks succeed.
source "$(dirname "$0")/lib.sh"
require_environment
ensure_test_user
public_files
usermod -a -G jsampled "$TEST_USER" || fail "cannot add $TEST_USER to group jsampled"
command -v bpftool >/dev/null || fail "bpftool missing (make deps)"
HOSTILE="$PY $(dirname "$0")/hostile.py"
cp "$(dirname "$0")/hostile.py" "$TMP/hostile.py"
chmod a+r "$TMP/hostile.py"
ASUSER=(setpriv --reuid="$TEST_USER" --regid="$(id -g "$TEST_USER")" --init-groups)
gcc -O2 -o "$TMP/racer" "$(dirname "$0")/racer.c" || fail "cannot build the racer"
# JSAMPLED_UNDER_TEST: another build to try these attacks on.
DAEMON=${JSAMPLED_UNDER_TEST:-$B/asan/jsampled}

rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$DAEMON_PID/status"; }

# A host file the attacks aim at: its mode and content must not change.
CANARY=$TMP/canary
echo "host secret" >"$CANARY"
chmod 600 "$CANARY"
canary_intact() {
	[ "$(stat -c %a "$CANARY")" = 600 ] || fail "$1: the host file $CANARY is now mode $(stat -c %a "$CANARY")"
	[ "$(cat "$CANARY")" = "host secret" ] || fail "$1: the host file $CANARY was written"
}

# in_container CMD...: runs CMD in mount and pid namespaces of its own with
# a private /tmp (no user namespace: its root is our root, as in a
# container without one). The test's files are in /mnt/h there; the build
# directory (with jsampled's agent) is hidden, wherever it is. Killing
# the unshare process (its pid is recorded in CTR_PIDS) ends everything
# inside.
CTR_PIDS=()
in_container() {
	exec unshare --mount --pid --fork --kill-child --mount-proc --propagation private \
		sh -c "mount -t tmpfs tmpfs /mnt && mkdir /mnt/h &&
		cp -r '$TMP/java' '$TMP/hostile.py' '$TMP/racer' /mnt/h/ && mount -t tmpfs tmpfs '$B' &&
		mount -t tmpfs tmpfs /tmp &&
		exec \"\$@\"" sh "$@"
}
end_containers() {
	for p in "${CTR_PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done
	CTR_PIDS=()
}
trap 'rc=$?; end_containers; cleanup $rc' EXIT
IN=/mnt/h

# targets_has PID: whether the BPF program samples PID (its targets map).
targets_has() {
	local key
	key=$(printf '%08x' "$1" | sed 's/\(..\)\(..\)\(..\)\(..\)/0x\4 0x\3 0x\2 0x\1/')
	bpftool map lookup name targets key $key >/dev/null 2>&1
}

# begin_daemon [options]: a jsampled of its own for one attack; log_new
# shows what it logged.
LOG_AT=0
begin_daemon() {
	LOG_AT=$( [ -f "$TMP/daemon.log" ] && wc -l <"$TMP/daemon.log" || echo 0)
	start_daemon "$@"
}
log_new() { tail -n +$((LOG_AT + 1)) "$TMP/daemon.log"; }
AUTO=(--agent-path "$TMP/libjsagent.so" --frequency 499 --rescan-s 1)

# --- 1. Container root -> host file modes --------------------------------
attack_1() {
	DAEMON_PREFIX=(taskset -c 0)
	ATTACH=auto begin_daemon "${AUTO[@]}"
	DAEMON_PREFIX=()
	# Containers whose root swaps /tmp/.jsampled/agent.sock for a link to a host
	# file the moment it appears, while jsampled makes it (old code chmod'ed
	# the name after bind: the link's target became 0666). The racer runs at
	# a real-time priority on jsampled's CPU, so it wins the race whenever
	# there is one.
	tried() { log_new | grep -cE 'listening for agents in the mount namespace|cannot attach to JVM pid [0-9]+: cannot listen' || true; }
	for i in $(seq 1 8); do
		before=$(tried)
		in_container sh -c "mkdir -m 755 /tmp/.jsampled &&
			{ chrt -f 50 taskset -c 0 $IN/racer /tmp/.jsampled agent.sock '$CANARY' & } &&
			exec $PY $IN/hostile.py fake-jvm answer" >"$TMP/race$i.out" 2>&1 &
		CTR_PIDS+=("$!")
		for _ in $(seq 1 150); do
			[ "$(tried)" -gt "$before" ] && break
			sleep 0.1
		done
		[ "$(tried)" -gt "$before" ] || fail "container $i: jsampled made no attempt at its socket in 15 s"
		end_containers
		[ "$(stat -c %a "$CANARY")" = 600 ] || break
	done
	canary_intact "symlink race on agent.sock"
	end_containers
	note "1. 8 containers swapped jsampled's new socket for a link to a host file at once: $(log_new | grep -c 'cannot listen in the JVM' || true) refused, host file untouched"
	stop_daemon
}

# --- 2. Fake JVMs that lie in the attach protocol -------------------------
attack_2() {
	ATTACH=auto begin_daemon "${AUTO[@]}"
	# .java_pid<pid> a link to a host socket of ours: nothing may connect to it.
	$PY - "$TMP/trap.sock" "$TMP/trap.log" <<-'PYEOF' &
	import socket, sys
	s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
	s.bind(sys.argv[1]); s.listen(8)
	while True:
	    c, _ = s.accept()
	    open(sys.argv[2], "a").write("connected\n")
	    c.close()
	PYEOF
	JVM_PIDS+=("$!")
	TRAP=$!
	for _ in $(seq 1 50); do [ -S "$TMP/trap.sock" ] && break; sleep 0.1; done
	chmod 777 "$TMP/trap.sock"
	in_container $PY $IN/hostile.py fake-jvm symlink "$TMP/trap.sock" >"$TMP/liar1.out" 2>&1 &
	CTR_PIDS+=("$!")
	$PY "$TMP/hostile.py" fake-jvm garbage >"$TMP/liar2.out" 2>&1 &
	LIAR2=$!
	JVM_PIDS+=("$LIAR2")
	sleep 6
	[ -s "$TMP/trap.log" ] && fail "the attach connected to a host socket through a link the JVM planted"
	kill -0 "$DAEMON_PID" || fail "jsampled died"
	end_containers
	kill "$LIAR2" "$TRAP"
	note "2. fake JVMs: a .java_pid link to a host socket was not followed; a megabyte of noise as the reply: $(log_new | grep "pid $LIAR2" | tail -1 | cut -d' ' -f4-)"
	stop_daemon
}

# --- 3. Attach children stopped by their user -----------------------------
attack_3() {
	ATTACH=auto begin_daemon "${AUTO[@]}"
	# Two JVM-like processes of the test user that never open a listener: each
	# attach child (running as that user) waits for one, and the user stops it.
	SILENT=()
	for i in 1 2; do
		"${ASUSER[@]}" $PY "$TMP/hostile.py" fake-jvm silent >"$TMP/stopped$i.out" 2>&1 &
		SILENT+=("$!")
		JVM_PIDS+=("$!")
	done
	stopped=0
	for _ in $(seq 1 100); do
		for c in $(pgrep -P "$DAEMON_PID" -u "$TEST_USER"); do
			"${ASUSER[@]}" kill -STOP "$c" 2>/dev/null && stopped=$((stopped + 1))
		done
		[ $stopped -ge 2 ] && break
		sleep 0.1
	done
	[ $stopped -ge 2 ] || fail "only $stopped attach children seen to stop"
	start_plain_jvm after_stop PhasedWorkload 60 - 1
	AFTER_STOP=$JVM_PID
	for _ in $(seq 1 90); do
		[ "$(list_field "$AFTER_STOP" 2)" = live ] && break
		sleep 0.5
	done
	[ "$(list_field "$AFTER_STOP" 2)" = live ] || fail "two stopped attach children kept a new JVM from being attached for 45 s"
	kill "${SILENT[@]}" "$AFTER_STOP"
	note "3. $stopped attach children stopped by their user were killed at their deadline; a JVM started after them was attached"
	stop_daemon
}

# --- 4. Authority ends with the process: exec of a setuid program, exit ---
attack_4() {
	ATTACH=off begin_daemon --frequency 499
	"${ASUSER[@]}" $PY "$TMP/hostile.py" agent "$TMP/agent.sock" exec-setuid 20 >"$TMP/exec.out" 2>&1 &
	JVM_PIDS+=("$!")
	EXEC_PID=$!
	for _ in $(seq 1 50); do grep -q "execs su" "$TMP/exec.out" && break; sleep 0.1; done
	grep -q "execs su" "$TMP/exec.out" || fail "the exec agent did not get going: $(cat "$TMP/exec.out")"
	sleep 1
	grep -q "^Uid:.*[[:space:]]0[[:space:]]" "/proc/$EXEC_PID/status" || fail "pid $EXEC_PID is not running su as root"
	targets_has "$EXEC_PID" && fail "pid $EXEC_PID, now su (euid 0), is still sampled"
	[ "$(list_field "$EXEC_PID" 2)" = live ] && fail "jsampled still takes pid $EXEC_PID's agent for su's"
	note "4a. an agent's process exec'd su (setuid root), a helper kept its socket: no longer sampled, authority ended ($(list_field "$EXEC_PID" 2))"

	"${ASUSER[@]}" $PY "$TMP/hostile.py" agent "$TMP/agent.sock" exit-keep 20 >"$TMP/exit.out" 2>&1 &
	GONE=$!
	wait "$GONE" 2>/dev/null || true
	grep -q "exits" "$TMP/exit.out" || fail "the exit agent did not get going: $(cat "$TMP/exit.out")"
	# Another program gets the pid (ns_last_pid: the next pid handed out).
	reused=
	for _ in $(seq 1 20); do
		echo $((GONE - 1)) >/proc/sys/kernel/ns_last_pid
		sh -c 'exec sh -c "while :; do :; done"' &
		if [ "$!" = "$GONE" ]; then reused=$!; break; fi
		kill "$!"
	done
	[ -n "$reused" ] || fail "could not reuse pid $GONE"
	JVM_PIDS+=("$reused")
	sleep 2
	targets_has "$GONE" && fail "pid $GONE, reused by another program, is sampled"
	before=$(list_field "$GONE" 3)
	sleep 1
	[ "$(list_field "$GONE" 3)" = "$before" ] || fail "samples of the program that reused pid $GONE went into the old profile"
	[ "$(list_field "$GONE" 2)" = live ] && fail "pid $GONE is still listed live after its process exited"
	kill "$reused"
	note "4b. an agent's process exited, a helper kept its socket, its pid was reused: the new program is not sampled"
	stop_daemon
}

# --- 5. Thread records for another process's threads ---------------------
attack_5() {
	ATTACH=off begin_daemon --frequency 499
	start_jvm victim PhasedWorkload 60 - 1
	VICTIM=$JVM_PID
	wait_profiled "$VICTIM"
	MARKV=0x7ffe5a5a0000
	$PY "$TMP/hostile.py" agent "$TMP/agent.sock" threads-of "$VICTIM" "$MARKV" 6 >"$TMP/threads.out" 2>&1 &
	THIEF=$!
	sleep 4
	bpftool -j map dump name threads >"$TMP/threads.json" || fail "cannot dump the threads map"
	$PY - "$TMP/threads.json" "$VICTIM" "$MARKV" <<-'PYEOF' || fail "another process's thread entries carry the agent's values"
	import json, os, struct, sys
	entries, victim, mark = json.load(open(sys.argv[1])), int(sys.argv[2]), int(sys.argv[3], 0)
	tids = {int(t) for t in os.listdir("/proc/%d/task" % victim)}
	bad = 0
	for e in entries:
	    if "key" not in e or "value" not in e:
	        continue  # an entry deleted while the map was dumped
	    key = int.from_bytes(bytes(int(b, 16) for b in e["key"]), "little")
	    val = bytes(int(b, 16) for b in e["value"])
	    if key in tids and struct.unpack_from("<Q", val, 0)[0] == mark:
	        bad += 1
	print("victim threads carrying the marker:", bad)
	sys.exit(1 if bad else 0)
	PYEOF
	wait "$THIEF" 2>/dev/null || true
	foreign=$(ctl stats "$THIEF" --json 2>/dev/null | $PY -c "import json,sys; print(json.load(sys.stdin).get('foreign_threads', 0))" || echo 0)
	note "5. THREAD records naming $(sed -n 's/claimed \([0-9]*\).*/\1/p' "$TMP/threads.out") threads of pid $VICTIM: none written ($foreign counted)"
	stop_daemon
}

# --- 6. Memory: ids, sizes and floods (the plain build: RSS as deployed) --
attack_6() {
	DAEMON=${JSAMPLED_UNDER_TEST:-$B/jsampled} ATTACH=off begin_daemon --frequency 499 --socket-group jsampled
	chmod 755 "$TMP"
	sleep 1
	rss0=$(rss_kb)
	$PY "$TMP/hostile.py" agent "$TMP/agent.sock" huge-ids 4 >"$TMP/huge.out" 2>&1 || true
	rss1=$(rss_kb)
	[ $((rss1 - rss0)) -lt $((64 * 1024)) ] || fail "an agent's ids near 2^24 grew jsampled's RSS by $(((rss1 - rss0) / 1024)) MiB"
	$PY "$TMP/hostile.py" agent "$TMP/agent.sock" flood >"$TMP/flood.out" 2>&1 || true
	rss2=$(rss_kb)
	grep -q "cut off" "$TMP/flood.out" || fail "an agent sending without end was not cut off: $(cat "$TMP/flood.out")"
	log_new | grep -q "over its limit" || fail "no limit named for the flooding agent"
	growth=$(( (rss2 > rss1 ? rss2 : rss1) - rss0 ))
	[ $growth -lt $((64 * 1024)) ] || fail "hostile agents grew jsampled's RSS by $((growth / 1024)) MiB (bound 64)"
	note "6. ids near 2^24: RSS $((rss0 / 1024)) -> $((rss1 / 1024)) MiB; an agent flooding records: $(cat "$TMP/flood.out"), RSS $((rss2 / 1024)) MiB: growth $((growth / 1024)) MiB (bound 64)"

	# Thousands of idle connections from one user on both sockets.
	"${ASUSER[@]}" $PY "$TMP/hostile.py" flood "$TMP/q.sock" 3000 12 >"$TMP/qflood.out" 2>&1 &
	QF=$!
	"${ASUSER[@]}" $PY "$TMP/hostile.py" flood "$TMP/agent.sock" 3000 12 >"$TMP/aflood.out" 2>&1 &
	AF=$!
	JVM_PIDS+=("$QF" "$AF")
	sleep 4
	start=$(date +%s%N)
	ctl list >/dev/null || fail "root's query failed during a connection flood"
	took=$(( ($(date +%s%N) - start) / 1000000 ))
	[ $took -lt 1000 ] || fail "root's query took $took ms during a connection flood"
	start_jvm during_flood PhasedWorkload 60 - 1
	wait_profiled "$JVM_PID"
	wait "$QF" "$AF" 2>/dev/null || true
	note "6. query socket: $(cat "$TMP/qflood.out"); agent socket: $(cat "$TMP/aflood.out"); root answered in $took ms, a JVM connected meanwhile; RSS $(( $(rss_kb) / 1024 )) MiB"
	stop_daemon
}

# --- 7. Container sockets are released when unused -----------------------
attack_7() {
	ATTACH=auto begin_daemon "${AUTO[@]}" --max-agent-namespaces 2
	for i in 1 2 3; do
		in_container $PY $IN/hostile.py fake-jvm answer >"$TMP/ns$i.out" 2>&1 &
		CTR_PIDS+=("$!")
		sleep 1
	done
	for _ in $(seq 1 120); do
		[ "$(log_new | grep -c 'loaded the agent into JVM')" -ge 3 ] && break
		sleep 0.5
	done
	[ "$(log_new | grep -c 'loaded the agent into JVM')" -ge 3 ] ||
		fail "with 2 namespace sockets allowed, a third container was never attached: $(log_new | grep -i 'namespace' | tail -3)"
	end_containers
	note "7. with --max-agent-namespaces 2, unused container sockets were released and a third container attached ($(log_new | grep -c 'released the agent socket') released)"
	stop_daemon
}

# --- 8. The agent's perf map does not follow a planted link -------------
attack_8() {
	sh -c "ln -s '$CANARY' /tmp/perf-\$\$.map; exec '$JAVA' -agentpath:$TMP/libjsagent.so=perfmap,socket:$TMP/none.sock \
		-cp '$TMP/java' PhasedWorkload 3 - 1" >"$TMP/perfmap.out" 2>&1 || true
	canary_intact "perf map link"
	rm -f /tmp/perf-*.map 2>/dev/null || true
	note "8. a perf map name planted as a link to a host file: not followed"
}

# --- 9. A planted agent copy in a container ------------------------------
attack_9() {
	ATTACH=auto begin_daemon "${AUTO[@]}"
	# A container with a planted "copy" of the agent: the right name and size,
	# other bytes. It must be replaced, not loaded.
	size=$(stat -c %s "$TMP/libjsagent.so")
	mtime=$(stat -c %Y "$TMP/libjsagent.so")
	copy=$(printf 'libjsagent-%x-%x.so' "$size" "$mtime")
	MARK="hostile-ctr-$$"
	in_container sh -c "mkdir -m 755 /tmp/.jsampled && head -c $size /dev/zero >/tmp/.jsampled/$copy &&
		exec '$JAVA' -cp $IN/java PhasedWorkload 60 - 1 $MARK" >"$TMP/planted.out" 2>&1 &
	CTR_PIDS+=("$!")
	PLANTED_JVM=
	for _ in $(seq 1 100); do
		PLANTED_JVM=$(pgrep -f "PhasedWorkload 60 - 1 $MARK" | while read -r p; do
			[ "$(readlink /proc/$p/exe 2>/dev/null)" = "$(readlink -f "$JAVA")" ] && echo "$p"; done | head -1) || true
		[ -n "$PLANTED_JVM" ] && break
		sleep 0.1
	done
	[ -n "$PLANTED_JVM" ] || fail "the container JVM did not start: $(cat "$TMP/planted.out")"
	wait_profiled "$PLANTED_JVM"
	cmp -s "/proc/$PLANTED_JVM/root/tmp/.jsampled/$copy" "$TMP/libjsagent.so" ||
		fail "the planted agent copy in the container was kept"
	end_containers
	note "9. a container's planted agent copy (right name and size, other bytes) was replaced, and its JVM profiled"
	stop_daemon
}

# --- 10. Large answers do not stall sampling ------------------------------
attack_10() {
	# A restored profile of 1,000,000 nodes, asked for by six clients at
	# once in the most expensive format, while a JVM is being sampled.
	mkdir -p "$TMP/state"
	$PY "$(dirname "$0")/big_profile.py" "$TMP/state/profiles.bin" 1000000 || fail "cannot write the big profile"
	ATTACH=off begin_daemon --frequency 999 --state-dir "$TMP/state" --max-cct-nodes 2000000 --max-cct-mb 512
	start_jvm sampled PhasedWorkload 60 - 1
	wait_profiled "$JVM_PID"
	ctl list | grep -q "^4000000 " || fail "the big profile was not restored"
	readers=()
	for i in 1 2 3 4 5 6; do
		ctl cct 4000000 --format json >"$TMP/big$i.json" 2>"$TMP/big$i.err" &
		readers+=("$!")
	done
	worst=0
	render_nice=
	for i in $(seq 1 10); do
		# The renders (the daemon's children) run at nice 0, not the
		# daemon's -10: they would outrun the JVMs and this client.
		for c in $(pgrep -P "$DAEMON_PID"); do
			# the native helper keeps the daemon's priority: it must keep up
			[ "$(cat "/proc/$c/comm" 2>/dev/null)" = jsampled-unwind ] && continue
			n=$(awk '{print $19}' "/proc/$c/stat" 2>/dev/null) || continue
			[ -n "$n" ] && render_nice="$render_nice $n"
		done
		start=$(date +%s%N)
		ctl list >/dev/null || fail "list failed while large answers were rendered"
		took=$(( ($(date +%s%N) - start) / 1000000 ))
		[ $took -gt $worst ] && worst=$took
		sleep 0.2
	done
	for i in 1 2 3 4 5 6; do
		wait "${readers[$((i - 1))]}" || fail "reader $i of the big profile failed: $(head -c 300 "$TMP/big$i.err")"
	done
	[ -n "$render_nice" ] || fail "no render child of jsampled seen while six large answers were rendered"
	for n in $render_nice; do
		[ "$n" -ge 0 ] || fail "a render ran at nice $n, above an ordinary process (seen:$render_nice)"
	done
	[ $worst -lt 1000 ] || fail "a query took $worst ms while large answers were rendered"
	for i in 1 2 3 4 5 6; do
		[ "$($PY -c "import json,sys; print(json.load(open(sys.argv[1]))['nodes'])" "$TMP/big$i.json")" = 1000000 ] ||
			fail "answer $i is not the whole profile: $(head -c 200 "$TMP/big$i.err")"
	done
	dropped=$(ctl stats --json | $PY -c "import json,sys; print(json.load(sys.stdin)['dropped'])")
	[ "$dropped" = 0 ] || fail "$dropped samples dropped while large answers were rendered"
	note "10. six clients read a 1,000,000-node profile at once ($(du -h "$TMP/big1.json" | cut -f1) each): other queries answered within $worst ms, renders at nice$(echo "$render_nice" | tr ' ' '\n' | sort -u | tr '\n' ' ' | sed 's/ $//'), no sample dropped"
	stop_daemon
}

# --- 11. One user cannot fill the process table ---------------------------
attack_11() {
	ATTACH=off begin_daemon --frequency 99 --max-processes 32 --max-processes-per-user 8
	for i in $(seq 1 40); do
		"${ASUSER[@]}" $PY "$TMP/hostile.py" agent "$TMP/agent.sock" huge-ids 20 >"$TMP/filler$i.out" 2>&1 &
		JVM_PIDS+=("$!")
	done
	sleep 4
	start_jvm after_fill PhasedWorkload 60 - 1
	wait_profiled "$JVM_PID"
	mine=$(ctl list | awk -v u="FakeVM" '$0 ~ u' | wc -l)
	note "11. 40 fake agents of one user: $mine admitted (--max-processes-per-user 8), a JVM of another user still profiled"
	stop_daemon
}

# --- 12. Terminal escapes in names ----------------------------------------
attack_12() {
	ATTACH=off begin_daemon --frequency 499
	$PY "$TMP/hostile.py" agent "$TMP/agent.sock" escapes 4 >"$TMP/esc.out" 2>&1 &
	ESC=$!
	sleep 2
	ctl list >"$TMP/list.out"
	ctl stats "$ESC" >"$TMP/esc.stats" 2>&1 || true
	wait "$ESC" 2>/dev/null || true
	for f in "$TMP/list.out" "$TMP/daemon.log" "$TMP/esc.stats"; do
		if LC_ALL=C grep -q $'[\x01-\x08\x0b\x0c\x0e-\x1f\x7f]' "$f" || LC_ALL=C grep -qP '\x9b' "$f"; then
			fail "control bytes from an agent reached $(basename "$f")"
		fi
	done
	grep -q 'Fake\\x1b' "$TMP/list.out" || fail "the escaped VM name is not listed: $(grep "$ESC" "$TMP/list.out")"
	note "12. an agent's names with terminal escapes: listed and logged escaped ($(grep "^$ESC " "$TMP/list.out" | cut -c1-80))"
	stop_daemon
}

# --- 13. Anchor offsets the BPF program cannot read ----------------------
attack_13() {
	# A recording, to see the anchors the BPF program read.
	ATTACH=off begin_daemon --frequency 997 --record "$TMP/rec.jsrec"
	$PY "$TMP/hostile.py" agent "$TMP/agent.sock" offset24 3 >"$TMP/off24.out" 2>&1 &
	OFF24=$!
	wait "$OFF24" 2>/dev/null || true
	stop_daemon
	$PY - "$TMP/rec.jsrec" "$OFF24" <<-'PYEOF' || fail "the BPF program reported an anchor read at offsets a JavaFrameAnchor does not have"
	import gzip, struct, subprocess, sys
	raw, pid = open(sys.argv[1], "rb").read(), int(sys.argv[2])
	# Recordings are zstd (older ones gzip): by magic.
	data = gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else subprocess.run(
	    ["zstd", "-dc", sys.argv[1]], check=True, capture_output=True).stdout
	known = {int.from_bytes(bytes([0x41 + i]) * 8, "little") for i in range(32)} | {0}
	off, n, bad = 8, 0, 0
	HAS_ANCHOR = 1 << 3
	while off + 17 <= len(data):
	    typ, p, t, ln = struct.unpack_from("<BIQI", data, off)
	    off += 17
	    if typ == 3 and p == pid:
	        flags = struct.unpack_from("<I", data, off + 20)[0]
	        sp, fp, pc = struct.unpack_from("<QQQ", data, off + 24 + 17 * 8)
	        n += 1
	        if flags & HAS_ANCHOR:  # offsets 24, 0, 8: not three words of an anchor
	            bad += 1
	    off += ln
	print("samples of the offset-24 agent:", n, "with an anchor:", bad)
	sys.exit(1 if bad or n == 0 else 0)
	PYEOF
	note "13. a layout with anchor offset 24: no anchor read from it"
}

# --- 14. An agent back as another user ------------------------------------
attack_14() {
	ATTACH=off begin_daemon --frequency 499
	$PY "$TMP/hostile.py" agent "$TMP/agent.sock" reconnect-as "$(id -u "$TEST_USER")" "$(id -g "$TEST_USER")" \
		>"$TMP/reconnect.out" 2>&1 &
	RECON=$!
	sleep 5
	uid_now=$(ctl stats "$RECON" --json | $PY -c "import json,sys; print(json.load(sys.stdin)['uid'])")
	[ "$uid_now" = "$(id -u "$TEST_USER")" ] || fail "the agent of pid $RECON came back as uid $(id -u "$TEST_USER") and resumed uid $uid_now's profile"
	wait "$RECON" 2>/dev/null || true
	note "14. an agent back as another uid starts a profile of its own"
	stop_daemon
}


# --- 15. Crafted libraries in a profiled process --------------------------
# A user's own native process, profiled at its request, calls code in a
# library crafted against the unwinder: a compressed .debug_frame of 87 KB
# that expands to 512 MiB, a .symtab of 3,000,000 symbols, a function name
# full of terminal escapes, a newline and a ';', and a library truncated
# and restored under the running process. The helper parses them in its
# sandbox (jsampled never does); jsampled stays up within its bound, a JVM
# beside them keeps its native frames, and no name reaches an output raw.
attack_15() {
	local lib=$TMP/crafted FN=jsampled_crafted_spin_function_name_of_forty_bytes
	mkdir -p "$lib"
	gcc -O1 -fPIC -shared -o "$lib/libcrafted.so" "$(dirname "$0")/crafted_lib.c" || fail "cannot build the library"
	gcc -O1 -o "$lib/native_target" "$(dirname "$0")/native_target.c" -ldl -lpthread || fail "cannot build native_target"
	$PY "$(dirname "$0")/hostile_elf.py" compressed-bomb "$lib/libcrafted.so" "$lib/libbomb.so" 512 >/dev/null &&
		$PY "$(dirname "$0")/hostile_elf.py" huge-symtab "$lib/libcrafted.so" "$lib/libsyms.so" 3000000 >/dev/null &&
		$PY "$(dirname "$0")/hostile_elf.py" escape-names "$lib/libcrafted.so" "$lib/libesc.so" "$FN" >/dev/null &&
		cp "$lib/libcrafted.so" "$lib/libflap.so" || fail "cannot craft the libraries"
	chown -R "$TEST_USER" "$lib"
	chmod 755 "$lib"
	cp "$B/jsamplectl" "$TMP/jsamplectl"
	DAEMON=${JSAMPLED_UNDER_TEST:-$B/jsampled} ATTACH=off begin_daemon --frequency 499 --socket-group jsampled
	chmod 755 "$TMP"
	start_jvm jni_victim WorkloadJni 60
	VICTIM=$JVM_PID
	wait_profiled "$VICTIM"
	sleep 2
	rss0=$(rss_kb)
	victim0=$(ctl cct "$VICTIM" --format collapsed --view mixed | awk '{ s += $NF } END { print s + 0 }')
	local pids=()
	for what in bomb syms esc flap; do
		mode=
		[ $what = flap ] && mode=flap
		"${ASUSER[@]}" "$lib/native_target" "$lib/lib$what.so" "$FN" 12 $mode >"$TMP/target-$what.out" 2>&1 &
		JVM_PIDS+=("$!")
		pids+=("$!")
	done
	sleep 0.5
	for p in "${pids[@]}"; do
		"${ASUSER[@]}" "$TMP/jsamplectl" --socket "$TMP/q.sock" profile "$p" >"$TMP/prof-$p.out" 2>&1 ||
			fail "the owner could not profile its own process $p: $(cat "$TMP/prof-$p.out")"
	done
	sleep 8
	kill -0 "$DAEMON_PID" || fail "jsampled died"
	rss1=$(rss_kb)
	[ $((rss1 - rss0)) -lt $((64 * 1024)) ] ||
		fail "crafted libraries grew jsampled's RSS by $(((rss1 - rss0) / 1024)) MiB (bound 64)"
	for p in "${pids[@]}"; do
		n=$(ctl cct "$p" --format collapsed | awk '{ s += $NF } END { print s + 0 }')
		[ "$n" -gt 0 ] || fail "the crafted process $p was not profiled"
	done
	esc=${pids[2]}
	for fmt in collapsed json tree svg html; do
		ctl cct "$esc" --format $fmt >"$TMP/esc.$fmt" 2>&1 || fail "cct --format $fmt of $esc failed"
		if LC_ALL=C grep -q $'[\x01-\x08\x0b\x0c\x0e-\x1f\x7f]' "$TMP/esc.$fmt" || LC_ALL=C grep -qP '\x9b' "$TMP/esc.$fmt"; then
			fail "control bytes of an ELF symbol reached cct --format $fmt"
		fi
	done
	grep -q 'x1b\]0' "$TMP/esc.collapsed" || fail "the escaped name is not in the profile: $(head -3 "$TMP/esc.collapsed")"
	[ "$(grep -c . "$TMP/esc.collapsed")" -le "$(grep -c ';' "$TMP/esc.collapsed")" ] ||
		fail "a newline in an ELF symbol made a line of its own"
	victim1=$(ctl cct "$VICTIM" --format collapsed --view mixed | awk '{ s += $NF } END { print s + 0 }')
	[ "$victim1" -gt "$victim0" ] || fail "the JVM beside the crafted processes was not profiled on"
	ctl cct "$VICTIM" --format collapsed --view mixed >"$TMP/victim.mixed"
	# a native frame has no kind suffix: Java_java_util_zip_..., inflate, libz...
	grep -qE ';(Java_java_util_zip|inflate|deflate|adler32|crc32)[^_;]*[;[:space:]]' "$TMP/victim.mixed" ||
		fail "the JVM beside them lost its native frames"
	ctl stats >"$TMP/native.stats"
	canary_intact "crafted libraries"
	note "15. crafted libraries (512 MiB compressed bomb, 3M symbols, escapes in a name, truncated under the process): jsampled RSS $((rss0 / 1024)) -> $((rss1 / 1024)) MiB, every one profiled, the JVM beside them too ($victim0 -> $victim1 samples, native frames kept); helper: $(grep -E '^native_helper_(starts|exits|timeouts)|^native_processes_disabled' "$TMP/native.stats" | awk '{printf "%s %s, ", $1, $2}')escaped name: $(grep -o 'x1b]0[^;]*' "$TMP/esc.collapsed" | head -1)"
	stop_daemon
}

# --- 16. Exec'd programs with crafted headers -----------------------------
# Every exec on the host makes jsampled ask "is this a Java launcher?": a
# user execs, 100 times, a working copy of sleep whose 8 SHT_DYNAMIC
# section headers name one 16 MiB hole (an ELF library reading each holds
# 128 MiB).
attack_16() {
	$PY "$(dirname "$0")/hostile_elf.py" dynamic-bomb /bin/sleep "$TMP/sleep-bomb" || fail "cannot craft the program"
	chmod 755 "$TMP/sleep-bomb"
	DAEMON=${JSAMPLED_UNDER_TEST:-$B/jsampled} ATTACH=auto begin_daemon "${AUTO[@]}"
	sleep 1
	rss0=$(rss_kb)
	peak=$rss0
	for i in $(seq 1 100); do
		cp "$TMP/sleep-bomb" "$TMP/sleep-bomb-$i" # a new file each time: no cached answer
		"${ASUSER[@]}" "$TMP/sleep-bomb-$i" 0 || fail "the crafted program does not run"
		r=$(rss_kb)
		[ "$r" -gt "$peak" ] && peak=$r
		rm -f "$TMP/sleep-bomb-$i"
	done
	sleep 1
	kill -0 "$DAEMON_PID" || fail "jsampled died"
	[ $((peak - rss0)) -lt $((16 * 1024)) ] ||
		fail "100 crafted execs grew jsampled's RSS by $(((peak - rss0) / 1024)) MiB (bound 16)"
	read_n=$(ctl stats --json | $PY -c "import json,sys; print(json.load(sys.stdin)['discovery']['launcher_checks_read'])")
	[ "$read_n" -ge 1 ] || fail "the crafted execs were not looked at (launcher_checks_read $read_n)"
	note "16. 100 execs of a program with 8 SHT_DYNAMIC headers over a 16 MiB hole: jsampled peak RSS +$(((peak - rss0))) KiB, $read_n files read"
	stop_daemon
}

# --- 17. Perf maps that are not the process's own --------------------------
# jsampled gives the helper a process's /tmp/perf-PID.map only if it is a
# regular file of the process's user with one link, reached without a
# link: a link to a root-only host file, a hard link, and a map another
# user planted are refused; a 16 MiB map of the process's own is used, in
# the helper's memory, not jsampled's.
attack_17() {
	local lib=$TMP/crafted FN=jsampled_crafted_spin_function_name_of_forty_bytes
	DAEMON=${JSAMPLED_UNDER_TEST:-$B/jsampled} ATTACH=off begin_daemon --frequency 499 --socket-group jsampled
	chmod 755 "$TMP"
	rss0=$(rss_kb)
	local pids=() kinds=(symlink hardlink foreign big)
	for kind in "${kinds[@]}"; do
		"${ASUSER[@]}" "$lib/native_target" "$lib/libcrafted.so" "$FN" 10 >"$TMP/perf-$kind.out" 2>&1 &
		JVM_PIDS+=("$!")
		pids+=("$!")
	done
	sleep 0.3
	"${ASUSER[@]}" ln -s "$CANARY" "/tmp/perf-${pids[0]}.map"
	echo "1000 10 hard" >"$TMP/perf-hard.map" && chown "$TEST_USER" "$TMP/perf-hard.map" &&
		ln "$TMP/perf-hard.map" "/tmp/perf-${pids[1]}.map"
	echo "1000 10 planted" >"/tmp/perf-${pids[2]}.map" # root's, for the user's process
	"${ASUSER[@]}" $PY -c "
import sys
with open('/tmp/perf-%s.map' % sys.argv[1], 'w') as f:
    for i in range(400000):
        f.write('%x 10 jit_function_%d_with_a_long_name\n' % (0x10000000 + i * 16, i))
" "${pids[3]}" || fail "cannot write the big perf map"
	for p in "${pids[@]}"; do
		"${ASUSER[@]}" "$TMP/jsamplectl" --socket "$TMP/q.sock" profile "$p" >/dev/null 2>&1 ||
			fail "the owner could not profile its own process $p"
	done
	sleep 6
	kill -0 "$DAEMON_PID" || fail "jsampled died"
	rss1=$(rss_kb)
	refused=$(ctl stats --json | $PY -c "import json,sys; print(json.load(sys.stdin)['native']['perf_maps_refused'])")
	sent=$(ctl stats --json | $PY -c "import json,sys; print(json.load(sys.stdin)['native']['perf_maps_sent'])")
	[ "$refused" -ge 3 ] || fail "only $refused of the 3 perf maps that are not the process's own were refused"
	[ "$sent" -ge 1 ] || fail "the process's own perf map was not used"
	[ $((rss1 - rss0)) -lt $((32 * 1024)) ] || fail "a 16 MiB perf map grew jsampled's RSS by $(((rss1 - rss0) / 1024)) MiB"
	canary_intact "perf map links"
	rm -f /tmp/perf-"${pids[0]}".map /tmp/perf-"${pids[1]}".map /tmp/perf-"${pids[2]}".map /tmp/perf-"${pids[3]}".map
	note "17. perf maps: a link to a host file, a hard link, another user's: $refused refused; the process's own 16 MiB map used ($sent sent), jsampled RSS $((rss0 / 1024)) -> $((rss1 / 1024)) MiB"
	stop_daemon
}

# --- 18. Who may profile what ---------------------------------------------
# `profile PID` is granted as ptrace grants reading: a setgid program or a
# process that made itself undumpable, of the requester's own uid, is "no
# process" to it (ssh-agent and sshd's session processes are such); its own
# plain process is profiled.
attack_18() {
	local lib=$TMP/crafted FN=jsampled_crafted_spin_function_name_of_forty_bytes
	cp /bin/sleep "$TMP/sgid-sleep"
	chgrp nogroup "$TMP/sgid-sleep" && chmod 2755 "$TMP/sgid-sleep" || fail "cannot make a setgid program"
	DAEMON=${JSAMPLED_UNDER_TEST:-$B/jsampled} ATTACH=off begin_daemon --frequency 499 --socket-group jsampled
	chmod 755 "$TMP"
	"${ASUSER[@]}" "$TMP/sgid-sleep" 30 &
	SGID=$!
	"${ASUSER[@]}" $PY -c 'import ctypes, time; ctypes.CDLL(None).prctl(4, 0, 0, 0, 0); time.sleep(30)' &
	UNDUMP=$!
	"${ASUSER[@]}" "$lib/native_target" "$lib/libcrafted.so" "$FN" 30 >/dev/null 2>&1 &
	PLAIN=$!
	JVM_PIDS+=("$SGID" "$UNDUMP" "$PLAIN")
	sleep 0.5
	for p in "$SGID" "$UNDUMP"; do
		if "${ASUSER[@]}" "$TMP/jsamplectl" --socket "$TMP/q.sock" profile "$p" >"$TMP/deny.out" 2>&1; then
			fail "its user could profile pid $p (setgid or undumpable): $(cat "$TMP/deny.out")"
		fi
		grep -q "no process $p of yours" "$TMP/deny.out" || fail "unexpected answer: $(cat "$TMP/deny.out")"
		targets_has "$p" && fail "pid $p is sampled"
	done
	"${ASUSER[@]}" "$TMP/jsamplectl" --socket "$TMP/q.sock" profile "$PLAIN" >"$TMP/allow.out" 2>&1 ||
		fail "its user could not profile its own plain process: $(cat "$TMP/allow.out")"
	kill "$SGID" "$UNDUMP" "$PLAIN" 2>/dev/null || true
	note "18. profile: a setgid program and an undumpable process of the requester's uid refused as \"no process\" ($(log_new | grep -c 'may not profile') logged), its plain process profiled"
	stop_daemon
}

# ONLY="1 4": run those attacks alone (each is independent of the others,
# but 17 and 18 use the programs 15 builds).
for n in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18; do
	case " ${ONLY:-1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18} " in *" $n "*) "attack_$n" ;; esac
done
canary_intact "the whole test"
note "passed"
