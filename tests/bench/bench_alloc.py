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
against cpu, the events the agent sent per second and jsampled's CPU per
event. It asserts nothing. Results go to tests/bench/results/alloc.{md,json}.

usage: bench_alloc.py [--workload h2|tokens]... [--rounds N] [--phase S] [--hz N]
                      [--asprof DIR] [--no-install]
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


def run_workload(name, args, tools, cgroup):
    out_dir, _ = tools
    tmp = tempfile.mkdtemp(prefix=f"jsampled-alloc-{name}-")
    sock = os.path.join(tmp, "q.sock")
    states = ["cpu", "alloc", "lock"] + (["asprof"] if args.asprof else [])
    seconds = args.rounds * len(states) * args.phase + 10
    jdk = bench_decode.JDKS["17"]
    env = dict(os.environ, APPLOOP_ROUNDS="1")
    if name == "tokens":
        argv = [os.path.join(bench_offcpu.JAVA17, "java"), "-cp", out_dir, "TokenPass", str(seconds), "2"]
    else:
        make_argv, jdk = apps.jvm_command(name, "17", seconds + 30, apps.make_inputs(),
                                          binds=[os.path.realpath(args.asprof)] if args.asprof else ())
        argv = make_argv(tmp, os.path.join(tmp, "go"))
    daemon = subprocess.Popen([os.path.join(BUILD, "jsampled"), "--socket", sock, "--frequency", str(args.hz),
                               "--alloc-interval-kb", str(ALLOC_KB), "--attach", "auto", "--agent-path",
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
        time.sleep(5)  # warm-up: the JIT
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
                subprocess.run([asprof, "start", "-e", "alloc", "--alloc", f"{ALLOC_KB}k", pid],
                               capture_output=True, timeout=30)
            before = bench_offcpu.flat_stats(sock)
            pb = json.loads(bench_decode.ctl(sock, "stats", pid, "--json").stdout)
            t0 = time.time()
            time.sleep(args.phase)
            t1 = time.time()
            after = bench_offcpu.flat_stats(sock)
            pa = json.loads(bench_decode.ctl(sock, "stats", pid, "--json").stdout)
            if st == "asprof":
                subprocess.run([asprof, "stop", "-o", "collapsed", "-f", os.path.join(tmp, "asprof.collapsed"), pid],
                               capture_output=True, timeout=30)
            d = {k: after.get(k, 0) - before.get(k, 0) for k in after if isinstance(after.get(k), (int, float))}
            ev = sum(pa.get(k, 0) - pb.get(k, 0) for k in ("alloc_events", "monitor_events", "park_events"))
            phases.append({"state": st, "t0": t0, "t1": t1, "secs": t1 - t0, "events": ev, "stats": d})
        time.sleep(0.5)
        rate = bench_offcpu.Progress(out_path)
        for ph in phases:
            ph["rate"] = rate.rate(ph["t0"] + WARM, ph["t1"])
    finally:
        if proc and proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        daemon.send_signal(signal.SIGINT)
        daemon.wait(timeout=60)
    return summarize(name, states, phases)


def summarize(name, states, phases):
    med = {}
    for st in states:
        rates = [p["rate"] for p in phases if p["state"] == st and p["rate"]]
        med[st] = statistics.median(rates) if rates else None
    cpu = [p for p in phases if p["state"] == "cpu"]
    cpu_rate = sum(p["stats"].get("cpu_s", 0) for p in cpu) / (sum(p["secs"] for p in cpu) or 1)
    row = {"workload": name, "median": med, "phases": phases}
    for st in states[1:]:
        on = [p for p in phases if p["state"] == st]
        secs = sum(p["secs"] for p in on) or 1
        ev = sum(p["events"] for p in on)
        extra = sum(p["stats"].get("cpu_s", 0) for p in on) - cpu_rate * secs
        row[st] = {"vs_cpu_pct": bench_offcpu.pct(med.get(st), med.get("cpu")), "events_per_s": ev / secs,
                   "daemon_us_per_event": extra * 1e6 / ev if ev else None}
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workload", action="append", choices=["h2", "tokens"])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--phase", type=float, default=6.0)
    ap.add_argument("--hz", type=int, default=99)
    ap.add_argument("--asprof", help="async-profiler's directory (bin/asprof)")
    ap.add_argument("--no-install", action="store_true")
    args = ap.parse_args()
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
          "asprof alloc vs cpu | alloc events/s | lock events/s | us/alloc event |",
          "|" + "---|" * 11]
    for r in rows:
        m = r["median"]
        a, lk, ap_ = r.get("alloc", {}), r.get("lock", {}), r.get("asprof", {})
        md.append(f"| {r['workload']} | {f(m.get('cpu'), '.0f')} | {f(m.get('alloc'), '.0f')} | "
                  f"{f(m.get('lock'), '.0f')} | {f(m.get('asprof'), '.0f')} | {f(a.get('vs_cpu_pct'), '+.2f')} % | "
                  f"{f(lk.get('vs_cpu_pct'), '+.2f')} % | {f(ap_.get('vs_cpu_pct'), '+.2f')} % | "
                  f"{f(a.get('events_per_s'), '.0f')} | {f(lk.get('events_per_s'), '.0f')} | "
                  f"{f(a.get('daemon_us_per_event'), '.1f')} |")
    print("\n".join(md))
    print("slowdowns: positive = slower than cpu (CPU sampling alone), in % of its median throughput")
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, "alloc.md"), "w") as fo:
        fo.write(f"# bench-alloc ({args.rounds} rounds of {args.phase:g} s phases, {args.hz} Hz, "
                 f"{ALLOC_KB} KiB interval)\n\n")
        fo.write("\n".join(md) + "\n")
    with open(os.path.join(RESULTS, "alloc.json"), "w") as fo:
        json.dump(rows, fo, indent=1)


if __name__ == "__main__":
    main()
