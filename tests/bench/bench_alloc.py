#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""bench-alloc: what allocation and lock profiles cost, in one run per
workload, with their states interleaved.

Workloads (one JVM each, running through all the phases):
  h2      the SQL database of bench-decode-apps (AppH2: H2 running its own
          queries in one JVM); units: its rounds' work
  tokens  tests/bench/java/TokenPass.java: pairs of threads handing a token
          back and forth with park/unpark, each hand-off a call of
          Unsafe.park, which the lock profile hooks; units: hand-offs

One jsampled (--frequency HZ, zero-config attach limited to the harness's
cgroup, CPU sampling on throughout) runs; phases of PHASE seconds go round
in a shuffled order per round:
  cpu         CPU sampling only: the reference
  alloc       + the agent's allocation sampling at the default interval
              (`jsamplectl alloc on`, 512 KiB)
  lock        + the agent's lock sampling (`jsamplectl lock on`)
  asprof      (with --asprof DIR) + async-profiler's allocation mode on the
              JVM at the same interval (asprof start -e alloc --alloc 512k)
Each phase's throughput counts from 0.5 s after its start. Printed per
workload: the median throughput of each state, each state's slowdown
against cpu, the JVM's CPU time per unit of work against cpu's (steadier
than throughput on a shared machine), the events the agent sent per second
and jsampled's CPU per event. It asserts nothing. Results go to tests/bench/results/alloc.{md,json}.

--truth: instead, the ground-truth programs of test_alloc_lock.sh
(WorkloadAllocations, WorkloadLocks) on JDK 17 and 25, each profiled by
jsampled and then run again under async-profiler (-e alloc, -e lock at the
same intervals, collapsed with --total), both scored against the program's
own truth by check_event_truth.py (TVD of the sites' shares, totals).

usage: bench_alloc.py [--workload h2|tokens]... [--rounds N] [--phase S] [--hz N] [--warm S] [--alloc-kb N]
                      [--asprof DIR] [--no-install]
       bench_alloc.py --truth [--asprof DIR] [--seconds S]
"""
import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_decode  # noqa: E402
import bench_decode_apps as apps  # noqa: E402
import bench_offcpu  # noqa: E402

BUILD = bench_decode.BUILD
RESULTS = bench_offcpu.RESULTS
WARM = bench_offcpu.WARM
ALLOC_KB = 512
HZ_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    """utime + stime of the whole process, in seconds."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            w = f.read().rsplit(")", 1)[1].split()
        return (int(w[11]) + int(w[12])) / HZ_TICKS
    except (OSError, IndexError, ValueError):
        return None


def run_workload(name, args, tools, cgroup):
    out_dir, _ = tools
    tmp = tempfile.mkdtemp(prefix=f"jsampled-alloc-{name}-")
    sock = os.path.join(tmp, "q.sock")
    states = ["cpu", "alloc", "lock"] + (["asprof"] if args.asprof else [])
    seconds = args.rounds * len(states) * args.phase + args.warm + 10
    jdk = bench_decode.JDKS["17"]
    env = dict(os.environ, APPLOOP_ROUNDS="1")
    if name == "tokens":
        argv = [os.path.join(bench_offcpu.JAVA17, "java"), "-cp", out_dir, "TokenPass", str(seconds), "2"]
    else:
        make_argv, jdk = apps.jvm_command(name, "17", seconds + 30, apps.make_inputs(),
                                          binds=[os.path.realpath(args.asprof)] if args.asprof else ())
        argv = make_argv(tmp, os.path.join(tmp, "go"))
    daemon = subprocess.Popen([os.path.join(BUILD, "jsampled"), "--socket", sock, "--frequency", str(args.hz),
                               "--alloc-interval-kb", str(args.alloc_kb), "--attach", "auto", "--agent-path",
                               os.path.join(BUILD, "libjsagent.so"), "--agent-socket", os.path.join(tmp, "a.sock"),
                               *cgroup.daemon_args(jdk)],
                              stderr=open(os.path.join(tmp, "daemon.log"), "w"))
    out_path = os.path.join(tmp, "workload.out")
    proc = None
    phases = []
    asprof = os.path.join(args.asprof, "bin", "asprof") if args.asprof else None
    try:
        bench_decode.wait_for(lambda: os.path.exists(sock), 10, "jsampled's socket")
        proc = subprocess.Popen(argv, stdout=open(out_path, "w"), stderr=subprocess.STDOUT, env=env,
                                preexec_fn=cgroup.enter)
        pid = str(proc.pid)
        bench_decode.wait_for(lambda: any(l.split()[:2] == [pid, "live"]
                                          for l in bench_decode.ctl(sock, "list").stdout.splitlines()) or
                              proc.poll() is not None, 60, "the JVM to be profiled")
        open(os.path.join(tmp, "go"), "w").close()
        time.sleep(args.warm)  # warm-up: the JIT (H2 still speeds up after 10 s)
        order = []
        for _ in range(args.rounds):
            r = states[:]
            random.shuffle(r)
            order += r
        for st in order:
            if proc.poll() is not None:
                raise RuntimeError(f"{name} exited early: " + open(out_path).read()[-1500:])
            bench_decode.ctl(sock, "alloc", "on" if st == "alloc" else "off")
            bench_decode.ctl(sock, "lock", "on" if st == "lock" else "off")
            if st == "asprof":
                subprocess.run([asprof, "start", "-e", "alloc", "--alloc", f"{args.alloc_kb}k", pid],
                               capture_output=True, timeout=30)
            before = bench_offcpu.flat_stats(sock)
            pb = json.loads(bench_decode.ctl(sock, "stats", pid, "--json").stdout)
            c0, t0 = cpu_seconds(pid), time.time()
            time.sleep(args.phase)
            t1, c1 = time.time(), cpu_seconds(pid)
            after = bench_offcpu.flat_stats(sock)
            pa = json.loads(bench_decode.ctl(sock, "stats", pid, "--json").stdout)
            if st == "asprof":
                subprocess.run([asprof, "stop", "-o", "collapsed", "-f", os.path.join(tmp, "asprof.collapsed"), pid],
                               capture_output=True, timeout=30)
            d = {k: after.get(k, 0) - before.get(k, 0) for k in after if isinstance(after.get(k), (int, float))}
            ev = sum(pa.get(k, 0) - pb.get(k, 0) for k in ("alloc_events", "monitor_events", "park_events"))
            phases.append({"state": st, "t0": t0, "t1": t1, "secs": t1 - t0, "events": ev, "stats": d,
                           "jvm_cpu_s": c1 - c0 if c0 is not None and c1 is not None else None})
        time.sleep(0.5)
        rate = bench_offcpu.Progress(out_path)
        for ph in phases:
            ph["rate"] = rate.rate(ph["t0"] + WARM, ph["t1"])
            # the JVM's CPU per unit of work: steadier than throughput on a shared machine
            ph["cpu_per_unit_us"] = ph["jvm_cpu_s"] * 1e6 / (ph["rate"] * ph["secs"]) \
                if ph["rate"] and ph["jvm_cpu_s"] else None
    finally:
        if proc and proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        daemon.send_signal(signal.SIGINT)
        daemon.wait(timeout=60)
    return summarize(name, states, phases)


def summarize(name, states, phases):
    med, cpu_unit = {}, {}
    for st in states:
        rates = [p["rate"] for p in phases if p["state"] == st and p["rate"]]
        med[st] = statistics.median(rates) if rates else None
        per = [p["cpu_per_unit_us"] for p in phases if p["state"] == st and p.get("cpu_per_unit_us")]
        cpu_unit[st] = statistics.median(per) if per else None
    cpu = [p for p in phases if p["state"] == "cpu"]
    cpu_rate = sum(p["stats"].get("cpu_s", 0) for p in cpu) / (sum(p["secs"] for p in cpu) or 1)
    row = {"workload": name, "median": med, "cpu_per_unit_us": cpu_unit, "phases": phases}
    for st in states[1:]:
        on = [p for p in phases if p["state"] == st]
        secs = sum(p["secs"] for p in on) or 1
        ev = sum(p["events"] for p in on)
        extra = sum(p["stats"].get("cpu_s", 0) for p in on) - cpu_rate * secs
        row[st] = {"vs_cpu_pct": bench_offcpu.pct(med.get(st), med.get("cpu")), "events_per_s": ev / secs,
                   "cpu_per_unit_vs_cpu_pct": 100.0 * (cpu_unit[st] - cpu_unit["cpu"]) / cpu_unit["cpu"]
                   if cpu_unit.get(st) and cpu_unit.get("cpu") else None,
                   "daemon_us_per_event": extra * 1e6 / ev if ev else None}
    return row


CHECK = os.path.join(bench_decode.ROOT, "tests", "integration", "check_event_truth.py")
TRUTH_ALLOC_KB, TRUTH_LOCK_US = 128, 200


def score(kind, truth, profile):
    r = subprocess.run([sys.executable, CHECK, kind, truth, profile, "1"], capture_output=True, text=True)
    return (r.stdout + r.stderr).strip()


def run_truth(args):
    """Each truth program under jsampled, then under async-profiler."""
    rows = []
    java_dir = os.path.join(BUILD, "java")
    for jdk_name in ("17", "25"):
        java = os.path.join(bench_decode.JDKS[jdk_name], "bin", "java")
        for kind, prog in (("alloc", "WorkloadAllocations"), ("lock", "WorkloadLocks")):
            tmp = tempfile.mkdtemp(prefix=f"jsampled-truth-{kind}-")
            sock, asock = os.path.join(tmp, "q.sock"), os.path.join(tmp, "a.sock")
            daemon = subprocess.Popen([os.path.join(BUILD, "jsampled"), "--socket", sock, "--agent-socket", asock,
                                       "--attach", "off", "--alloc", "on", "--alloc-interval-kb", str(TRUTH_ALLOC_KB),
                                       "--lock", "on", "--lock-interval-us", str(TRUTH_LOCK_US)],
                                      stderr=open(os.path.join(tmp, "daemon.log"), "w"))
            try:
                bench_decode.wait_for(lambda: os.path.exists(sock), 10, "jsampled's socket")
                out = os.path.join(tmp, "js.out")
                p = subprocess.Popen([java, f"-agentpath:{os.path.join(BUILD, 'libjsagent.so')}=socket:{asock}",
                                      "-cp", java_dir, prog, str(args.seconds)], stdout=open(out, "w"),
                                     stderr=subprocess.DEVNULL)
                p.wait(timeout=args.seconds + 120)
                pid = str(p.pid)
                prof = os.path.join(tmp, "js.collapsed")
                with open(prof, "w") as f:
                    f.write(bench_decode.ctl(sock, "cct", pid, "--format", "collapsed", "--type", kind).stdout)
                js = score(kind, out, prof)
            finally:
                daemon.send_signal(signal.SIGINT)
                daemon.wait(timeout=60)
            ap = "-"
            if args.asprof:
                out2, prof2 = os.path.join(tmp, "ap.out"), os.path.join(tmp, "ap.collapsed")
                event = ["-e", "alloc", "--alloc", f"{TRUTH_ALLOC_KB}k"] if kind == "alloc" else \
                    ["-e", "lock", "--lock", f"{TRUTH_LOCK_US}us"]
                lib = os.path.join(args.asprof, "lib", "libasyncProfiler.so")
                opts = ",".join(["start", "event=" + event[1], event[2][2:] + "=" + event[3], "collapsed", "total",
                                 "file=" + prof2])
                subprocess.run([java, f"-agentpath:{lib}={opts}", "-cp", java_dir, prog, str(args.seconds)],
                               stdout=open(out2, "w"), stderr=subprocess.DEVNULL, timeout=args.seconds + 120)
                ap = score(kind, out2, prof2)
            rows.append((jdk_name, kind, js, ap))
            print(f"JDK {jdk_name} {kind}\n  jsampled:       {js}\n  async-profiler: {ap}", flush=True)
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, "alloc-truth.md"), "w") as fo:
        for jdk_name, kind, js, ap in rows:
            fo.write(f"## JDK {jdk_name} {kind}\n\njsampled:\n\n    " + js.replace("\n", "\n    ") +
                     "\n\nasync-profiler:\n\n    " + ap.replace("\n", "\n    ") + "\n\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workload", action="append", choices=["h2", "tokens"])
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--phase", type=float, default=6.0)
    ap.add_argument("--hz", type=int, default=99)
    ap.add_argument("--warm", type=float, default=30.0, help="seconds before the first phase")
    ap.add_argument("--alloc-kb", type=int, default=ALLOC_KB,
                    help="the allocation interval of both profilers (smaller: more events, a cost easier to see)")
    ap.add_argument("--asprof", help="async-profiler's directory (bin/asprof)")
    ap.add_argument("--no-install", action="store_true")
    ap.add_argument("--truth", action="store_true")
    ap.add_argument("--seconds", type=int, default=8)
    args = ap.parse_args()
    if args.truth:
        return run_truth(args)
    workloads = args.workload or ["h2", "tokens"]
    if "h2" in workloads and not args.no_install:
        apps.install(apps.APPS["h2"][1])
    tools = bench_offcpu.build_tools(os.path.join(BUILD, "bench-offcpu"))
    cgroup = apps.Cgroup()
    rows = []
    try:
        for w in workloads:
            rows.append(run_workload(w, args, tools, cgroup))
    finally:
        cgroup.remove()
    f = bench_offcpu.fmt
    md = ["| workload | cpu /s | +alloc /s | +lock /s | +asprof alloc /s | alloc vs cpu | lock vs cpu | "
          "asprof alloc vs cpu | JVM CPU/unit: alloc, lock, asprof vs cpu | alloc events/s | lock events/s | "
          "jsampled us/alloc event |",
          "|" + "---|" * 12]
    for r in rows:
        m = r["median"]
        a, lk, ap_ = r.get("alloc", {}), r.get("lock", {}), r.get("asprof", {})
        md.append(f"| {r['workload']} | {f(m.get('cpu'), '.0f')} | {f(m.get('alloc'), '.0f')} | "
                  f"{f(m.get('lock'), '.0f')} | {f(m.get('asprof'), '.0f')} | {f(a.get('vs_cpu_pct'), '+.2f')} % | "
                  f"{f(lk.get('vs_cpu_pct'), '+.2f')} % | {f(ap_.get('vs_cpu_pct'), '+.2f')} % | "
                  f"{f(a.get('cpu_per_unit_vs_cpu_pct'), '+.2f')}, {f(lk.get('cpu_per_unit_vs_cpu_pct'), '+.2f')}, "
                  f"{f(ap_.get('cpu_per_unit_vs_cpu_pct'), '+.2f')} % | "
                  f"{f(a.get('events_per_s'), '.0f')} | {f(lk.get('events_per_s'), '.0f')} | "
                  f"{f(a.get('daemon_us_per_event'), '.1f')} |")
    print("\n".join(md))
    print("slowdowns: positive = slower than cpu (CPU sampling alone), in % of its median throughput")
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, "alloc.md"), "w") as fo:
        fo.write(f"# bench-alloc ({args.rounds} rounds of {args.phase:g} s phases, {args.hz} Hz, "
                 f"{args.alloc_kb} KiB interval)\n\n")
        fo.write("\n".join(md) + "\n")
    with open(os.path.join(RESULTS, "alloc.json"), "w") as fo:
        json.dump(rows, fo, indent=1)


if __name__ == "__main__":
    main()
