#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""bench-decode: how well jsampled decodes samples of diverse Java workloads.

Runs each workload (tests/java/Workload*.java, PhasedWorkload) under jsampled
at 10 kHz, on each JDK given, without -XX:+PreserveFramePointer and without
DebugNonSafepoints, and prints per workload: samples, resolved %, incomplete %,
wrong traces (calling frames not at an invoke instruction, as jsampled checks
them; for WorkloadUniquePaths also every caller/callee pair against its
call graph), the samples jsampled dropped (its held-sample queue overflowed
while they waited for code maps), and the top failure reasons. With --keep DIR
every run is recorded there (jsampled --record) so a failure can be replayed
with build/jsreplay.

usage: bench_decode.py [--seconds N] [--hz N] [--jdk PATH]... [--workload NAME]...
                       [--keep DIR] [--check]
  --check   exit 1 unless every workload meets the goals: >= 99.5% resolved,
            <= 0.1% incomplete (deep-recursion workloads excepted), 0 wrong.
"""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("JSAMPLED_BUILD", os.path.join(ROOT, "build"))
JDKS = {
    "17": "/usr/lib/jvm/java-17-openjdk-amd64",
    "25": "/usr/lib/jvm/temurin-25-jdk-amd64",
}
# name -> (class, extra args, deep stacks expected)
WORKLOADS = [
    ("phased", "PhasedWorkload", ["2"], False),
    ("numeric", "WorkloadNumeric", ["2"], False),
    ("collections", "WorkloadCollections", ["2"], False),
    ("jni", "WorkloadJni", ["2"], False),
    ("recursion", "WorkloadRecursion", ["2"], True),
    ("threads", "WorkloadThreads", ["16"], False),
    ("classloading", "WorkloadClassLoading", ["2"], False),
    ("exceptions", "WorkloadExceptions", ["2"], False),
    ("uniquepaths", "WorkloadUniquePaths", ["2"], False),
]
GOAL_RESOLVED = 99.5
GOAL_INCOMPLETE = 0.1


def ctl(sock, *args):
    return subprocess.run([os.path.join(BUILD, "jsamplectl"), "--socket", sock, *args],
                          capture_output=True, text=True, timeout=60)


def wait_for(cond, timeout, what):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if cond():
            return
        time.sleep(0.05)
    raise RuntimeError("timed out waiting for " + what)


def unique_path_violations(collapsed):
    """Caller/callee pairs of WorkloadUniquePaths that its call graph forbids:
    nX's only caller is nX minus its last "_digit"."""
    bad = 0
    for line in collapsed.splitlines():
        stack, _, count = line.rpartition(" ")
        frames = [re.sub(r"_\[[a-z0-9]\]$", "", f) for f in stack.split(";")]
        names = [f.rsplit(".", 1)[-1] if f.startswith("WorkloadUniquePaths.") else None for f in frames]
        for caller, callee in zip(names, names[1:]):
            if caller and callee and caller.startswith("n0") and callee.startswith("n0"):
                if not (callee.startswith(caller + "_") and re.fullmatch(r"\d", callee[len(caller) + 1:])):
                    bad += int(count)
    return bad


def run_profiled(tag, java_argv, seconds, hz, keep, daemon_args=(), preexec_fn=None, live_timeout=30,
                 done=lambda text: "total" in text):
    """Runs one JVM under a jsampled of its own (own sockets; recorded to
    KEEP/TAG.jsrec with --keep) with the GO-file handshake of tests/java's
    workloads: java_argv(tmp, go) is the JVM's command line; once jsampled
    lists the JVM as live, GO is created; when done(output) the stats are
    read, then GO is removed and the JVM exits. Returns (stats, jsampled's
    CPU seconds, collapsed CCT, the JVM's output, its exit status)."""
    tmp = tempfile.mkdtemp(prefix="jsampled-decode-")
    sock = os.path.join(tmp, "q.sock")
    # Recording costs jsampled CPU (deep stacks at 10 kHz are ~100 MB/s of
    # samples to compress), so only runs kept for replay are recorded.
    record = ["--record", os.path.join(keep, f"{tag}.jsrec")] if keep else []
    if keep and os.path.exists(record[1]):
        os.unlink(record[1])  # jsampled creates its recording anew, never over a file
    daemon = subprocess.Popen([os.path.join(BUILD, "jsampled"), "--socket", sock, "--frequency", str(hz)] + record +
                              list(daemon_args),
                              stderr=open(os.path.join(tmp, "daemon.log"), "w"))
    jvm = None
    output = os.path.join(tmp, "workload.out")
    try:
        wait_for(lambda: os.path.exists(sock), 10, "jsampled's socket")
        go = os.path.join(tmp, "go")
        out = open(output, "w")
        jvm = subprocess.Popen(java_argv(tmp, go), stdout=out, stderr=subprocess.STDOUT, preexec_fn=preexec_fn)
        pid = str(jvm.pid)
        wait_for(lambda: any(l.split()[:2] == [pid, "live"] for l in ctl(sock, "list").stdout.splitlines()) or
                 jvm.poll() is not None, live_timeout, "the JVM to be profiled")
        if jvm.poll() is not None:
            raise RuntimeError(f"the JVM exited ({jvm.returncode}) before it was profiled: " + open(output).read()[-2000:])
        open(go, "w").close()
        wait_for(lambda: done(open(output).read()) or jvm.poll() is not None,
                 seconds + 120, "the workload")
        time.sleep(0.2)
        stats = json.loads(ctl(sock, "stats", pid, "--json").stdout)
        daemon_cpu = json.loads(ctl(sock, "stats", "--json").stdout).get("cpu_s", 0.0)
        if keep:
            with open(os.path.join(keep, f"{tag}.stats.json"), "w") as f:
                json.dump(stats, f, indent=1)
        collapsed = ctl(sock, "cct", pid, "--format", "collapsed").stdout
        os.unlink(go)
        jvm.wait(timeout=60)
        text = open(output).read()
    finally:
        if jvm and jvm.poll() is None:
            jvm.kill()
        daemon.send_signal(signal.SIGINT)
        daemon.wait(timeout=60)
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)
    return stats, daemon_cpu, collapsed, text, jvm.returncode


def top_reasons(stats, n=3):
    """The n most frequent failure reasons, "reason count, ..."."""
    reasons = sorted(((v, k) for k, v in stats["reasons"].items() if v), reverse=True)[:n]
    return ", ".join(f"{k} {v}" for v, k in reasons) or "-"


def run_one(jdk_name, jdk, wl, seconds, hz, keep, daemon_args=()):
    name, cls, extra, deep = wl

    def argv(tmp, go):
        return [os.path.join(jdk, "bin", "java"), f"-agentpath:{BUILD}/libjsagent.so=socket:{tmp}/agent.sock",
                "-cp", os.path.join(BUILD, "java"), cls, str(seconds), go, *extra]

    stats, daemon_cpu, collapsed, _, _ = run_profiled(f"{name}-jdk{jdk_name}", argv, seconds, hz, keep, daemon_args)
    return {
        "jdk": jdk_name, "workload": name, "samples": stats["samples"], "java": stats["java_samples"],
        "resolved": stats["resolved_pct"], "incomplete": stats["incomplete_pct"], "wrong": stats["wrong"],
        "dropped": 100.0 * stats["dropped"] / max(1, stats["samples"]),
        "copy_kb": stats["stack_bytes"] / max(1, stats["samples"]) / 1024.0, "daemon_cpu_s": daemon_cpu,
        "path_violations": unique_path_violations(collapsed) if cls == "WorkloadUniquePaths" else None,
        "reasons": top_reasons(stats), "deep": deep,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=int, default=8)
    ap.add_argument("--hz", type=int, default=10000)
    ap.add_argument("--jdk", action="append")
    ap.add_argument("--workload", action="append")
    ap.add_argument("--keep")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--daemon-arg", action="append", default=[],
                    help="extra jsampled option, e.g. --daemon-arg=--max-fragment-bytes=16384")
    a = ap.parse_args()
    jdks = a.jdk or ["17", "25"]
    for j in jdks:
        if j not in JDKS or not os.path.exists(os.path.join(JDKS[j], "bin", "java")):
            print(f"bench-decode: JDK {j} not found at {JDKS.get(j)}", file=sys.stderr)
            return 1
    if a.keep:
        os.makedirs(a.keep, exist_ok=True)
    wls = [w for w in WORKLOADS if not a.workload or w[0] in a.workload]
    print(f"{'JDK':<4} {'workload':<13} {'samples':>8} {'resolved%':>9} {'incompl%':>8} {'wrong':>6} "
          f"{'dropped%':>8} {'copy KiB':>8} {'cpu s':>6}  top failure reasons")
    ok = True
    for j in jdks:
        for wl in wls:
            r = run_one(j, JDKS[j], wl, a.seconds, a.hz, a.keep, a.daemon_arg)
            wrong = r["wrong"] + (r["path_violations"] or 0)
            print(f"{r['jdk']:<4} {r['workload']:<13} {r['samples']:>8} {r['resolved']:>9.2f} {r['incomplete']:>8.3f} "
                  f"{wrong:>6} {r['dropped']:>8.2f} {r['copy_kb']:>8.1f} {r['daemon_cpu_s']:>6.1f}  {r['reasons']}",
                  flush=True)
            if r["resolved"] < GOAL_RESOLVED or wrong or (not r["deep"] and r["incomplete"] > GOAL_INCOMPLETE):
                ok = False
    print(f"goals: resolved >= {GOAL_RESOLVED}%, incomplete <= {GOAL_INCOMPLETE}% (deep recursion excepted), "
          "0 wrong traces; " + ("all met" if ok else "NOT all met"))
    return 0 if ok or not a.check else 1


if __name__ == "__main__":
    sys.exit(main())
