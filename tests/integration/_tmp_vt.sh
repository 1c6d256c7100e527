. "$(dirname "$0")/lib.sh"
require_environment
JDK25=/usr/lib/jvm/temurin-25-jdk-amd64
mkdir -p "$TMP/classes"
"$JDK25/bin/javac" -d "$TMP/classes" "$ROOT/tests/java21/WorkloadVirtualWaits.java"
start_daemon --frequency 199 --offcpu on ${VTARGS:-}
JAVA=$JDK25/bin/java start_jvm vthreads -cp "$TMP/classes" WorkloadVirtualWaits 10 8
pid=$JVM_PID
wait_profiled "$pid"
wait "$pid" || true
ctl stats "$pid" > /tmp/vt.pstats
ctl stats > /tmp/vt.gstats
ctl cct "$pid" --format collapsed --type cpu > /tmp/vt.cpu; ctl cct "$pid" --format collapsed --type wall > /tmp/vt.wall
stop_daemon
