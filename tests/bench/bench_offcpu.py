#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""bench-offcpu: what off-CPU sampling costs, in one run per workload, with
its states interleaved.

Workloads (each one JVM, or process, running through all the phases):
  tokens   tests/bench/java/TokenPass.java: pairs of threads handing a token
           back and forth with park/unpark (two context switches a
           hand-off); units: hand-offs
  tomcat   the servlet container of bench-decode-apps (AppTomcat: embedded
           Tomcat 10 under wrk load over loopback); units: requests
  syscalls tests/bench/syscall_loop.c, a process jsampled does not profile,
           making getppid calls: what the hook on every system call's return
           costs the rest of the host; units: calls

One jsampled (--offcpu on, --frequency HZ, zero-config attach limited to the
harness's cgroup) runs throughout; phases of PHASE seconds go round in a
shuffled order per round:
  off         jsampled's sampling paused (`jsamplectl sampling off`: no perf
              event, no off-CPU program attached)
  cpu         CPU sampling only (`jsamplectl offcpu off`)
  cpu+offcpu  CPU and off-CPU sampling: the cpu, offcpu and wall profiles
  asprof      (with --asprof DIR) async-profiler's wall-clock mode on the JVM
              (asprof start -e wall -i 1/HZ s), jsampled paused
Each phase's throughput counts from 0.5 s after its start. Printed per
workload: the median throughput of each state, the slowdowns of cpu+offcpu
against cpu (what off-CPU sampling adds) and of cpu+offcpu and asprof
against off (wall-clock profiling in all), context switches per second of
the profiled threads, the BPF program's ns per switch (run_time_ns of the
sched_switch program over its runs, kernel.bpf_stats_enabled=1), jsampled's
CPU us per off-CPU sample and the off-CPU samples skipped (their stash slot
taken, unplaced ns, ring buffer full). It asserts nothing. Results go to
tests/bench/results/offcpu.{md,json}.

usage: bench_offcpu.py [--workload tokens|tomcat|syscalls]... [--rounds N] [--phase S] [--hz N]
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

ROOT = bench_decode.ROOT
BUILD = bench_decode.BUILD
JAVA17 = os.path.join(bench_decode.JDKS["17"], "bin")
RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
WARM = 0.5


def build_tools(out):
    os.makedirs(out, exist_ok=True)
    src = os.path.join(ROOT, "tests", "bench", "java", "TokenPass.java")
    if not os.path.exists(os.path.join(out, "TokenPass.class")) or \
            os.path.getmtime(os.path.join(out, "TokenPass.class")) < os.path.getmtime(src):
        subprocess.run([os.path.join(JAVA17, "javac"), "-d", out, src], check=True)
    loop = os.path.join(out, "syscall_loop")
    csrc = os.path.join(ROOT, "tests", "bench", "syscall_loop.c")
    if not os.path.exists(loop) or os.path.getmtime(loop) < os.path.getmtime(csrc):
        subprocess.run(["cc", "-O2", "-Wall", "-Wextra", "-Werror", csrc, "-o", loop], check=True)
    return out, loop


class Progress:
    """A workload's output: 'p EPOCH_MS COUNT' lines (a running total) or
    'round START_MS END_MS UNITS' lines (AppLoop's rounds)."""

    def __init__(self, path):
        self.path = path

    def rate(self, t0, t1):
        pts, rounds = [], []
        with open(self.path) as f:
            for line in f:
                w = line.split()
                if len(w) == 3 and w[0] == "p":
                    pts.append((int(w[1]) / 1000.0, int(w[2])))
                elif len(w) == 4 and w[0] == "round":
                    rounds.append((int(w[1]) / 1000.0, int(w[2]) / 1000.0, int(w[3])))
        if rounds:
            inside = [r for r in rounds if r[0] >= t0 and r[1] <= t1]
            secs = sum(r[1] - r[0] for r in inside)
            return sum(r[2] for r in inside) / secs if secs > 0 else None
        inside = [p for p in pts if t0 <= p[0] <= t1]
        if len(inside) < 2:
            return None
        return (inside[-1][1] - inside[0][1]) / (inside[-1][0] - inside[0][0])


def flat_stats(sock):
    """jsampled's global stats, groups flattened: {"bpf": {"x": 1}} -> {"bpf_x": 1}."""
    out = {}
    for k, v in json.loads(bench_decode.ctl(sock, "stats", "--json").stdout).items():
        if isinstance(v, dict):
            out.update({f"{k}_{kk}": vv for kk, vv in v.items()})
        else:
            out[k] = v
    return out


def switches(pid):
    """Voluntary + involuntary context switches of all of pid's threads."""
    n = 0
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                for line in f:
                    if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                        n += int(line.split()[1])
    except OSError:
        pass
    return n


def run_workload(name, args, tools, cgroup, hz):
    out_dir, loop = tools
    tmp = tempfile.mkdtemp(prefix=f"jsampled-offcpu-{name}-")
    sock = os.path.join(tmp, "q.sock")
    states = ["off", "cpu", "cpu+offcpu"] + (["asprof"] if args.asprof and name != "syscalls" else [])
    seconds = args.rounds * len(states) * args.phase + 5
    jdk = bench_decode.JDKS["17"]
    env = dict(os.environ, APPLOOP_ROUNDS="1")
    if name == "tokens":
        argv = [os.path.join(JAVA17, "java"), "-cp", out_dir, "TokenPass", str(seconds), "2"]
    elif name == "tomcat":
        make_argv, jdk = apps.jvm_command("tomcat", "17", seconds + 30, apps.make_inputs())
        argv = make_argv(tmp, os.path.join(tmp, "go"))
    else:
        argv = [loop, str(seconds)]
    daemon = subprocess.Popen([os.path.join(BUILD, "jsampled"), "--socket", sock, "--frequency", str(hz),
                               "--offcpu", "on", "--attach", "auto", "--agent-path",
                               os.path.join(BUILD, "libjsagent.so"), "--agent-socket", os.path.join(tmp, "a.sock"),
                               *cgroup.daemon_args(jdk)],
                              stderr=open(os.path.join(tmp, "daemon.log"), "w"))
    out_path = os.path.join(tmp, "workload.out")
    proc = None
    phases = []
    try:
        bench_decode.wait_for(lambda: os.path.exists(sock), 10, "jsampled's socket")
        # syscalls: not in the cgroup, so not profiled (the host's other processes).
        proc = subprocess.Popen(argv, stdout=open(out_path, "w"), stderr=subprocess.STDOUT, env=env,
                                preexec_fn=cgroup.enter if name != "syscalls" else None)
        pid = str(proc.pid)
        if name != "syscalls":
            bench_decode.wait_for(lambda: any(l.split()[:2] == [pid, "live"]
                                              for l in bench_decode.ctl(sock, "list").stdout.splitlines()) or
                                  proc.poll() is not None, 60, "the JVM to be profiled")
        open(os.path.join(tmp, "go"), "w").close()
        time.sleep(3)  # warm-up: the JIT, wrk's first round
        order = []
        for _ in range(args.rounds):
            r = states[:]
            random.shuffle(r)
            order += r
        for st in order:
            if proc.poll() is not None:
                raise RuntimeError(f"{name} exited early: " + open(out_path).read()[-1500:])
            bench_decode.ctl(sock, "sampling", "off" if st in ("off", "asprof") else "on")
            bench_decode.ctl(sock, "offcpu", "on" if st == "cpu+offcpu" else "off")
            if st == "asprof":
                subprocess.run([os.path.join(args.asprof, "bin", "asprof"), "start", "-e", "wall", "-i",
                                f"{1000000 // hz}us", pid], capture_output=True, timeout=30)
            before = flat_stats(sock)
            sw0, t0 = switches(pid), time.time()
            time.sleep(args.phase)
            t1, sw1 = time.time(), switches(pid)
            after = flat_stats(sock)
            if st == "asprof":
                subprocess.run([os.path.join(args.asprof, "bin", "asprof"), "stop", "-o", "collapsed",
                                "-f", os.path.join(tmp, "asprof.collapsed"), pid], capture_output=True, timeout=30)
            d = {k: after.get(k, 0) - before.get(k, 0) for k in after if isinstance(after.get(k), (int, float))}
            phases.append({"state": st, "t0": t0, "t1": t1, "secs": t1 - t0, "switches": sw1 - sw0, "stats": d})
        time.sleep(0.5)
        rate = Progress(out_path)
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
    on = [p for p in phases if p["state"] == "cpu+offcpu"]
    secs = sum(p["secs"] for p in on) or 1
    sw_runs = sum(p["stats"].get("bpf_switch_run_cnt", 0) for p in on)
    sw_ns = sum(p["stats"].get("bpf_switch_run_time_ns", 0) for p in on)
    ex_runs = sum(p["stats"].get("bpf_sys_exit_run_cnt", 0) for p in on)
    ex_ns = sum(p["stats"].get("bpf_sys_exit_run_time_ns", 0) for p in on)
    off_samples = sum(p["stats"].get("bpf_offcpu_samples", 0) for p in on)
    cpu_on = sum(p["stats"].get("cpu_s", 0) for p in on)
    cpu_only = [p for p in phases if p["state"] == "cpu"]
    cpu_base = sum(p["stats"].get("cpu_s", 0) for p in cpu_only) / (sum(p["secs"] for p in cpu_only) or 1) * secs
    row = {
        "workload": name, "median": med,
        "offcpu_vs_cpu_pct": pct(med.get("cpu+offcpu"), med.get("cpu")),
        "wall_vs_off_pct": pct(med.get("cpu+offcpu"), med.get("off")),
        "asprof_vs_off_pct": pct(med.get("asprof"), med.get("off")),
        "switches_per_s": sum(p["switches"] for p in on) / secs,
        "bpf_ns_per_switch": sw_ns / sw_runs if sw_runs else None,
        "bpf_ns_per_sys_exit": ex_ns / ex_runs if ex_runs else None,
        "offcpu_samples_per_s": off_samples / secs,
        "daemon_us_per_offcpu_sample": (cpu_on - cpu_base) * 1e6 / off_samples if off_samples else None,
        "skipped": {k: sum(p["stats"].get("bpf_" + k, 0) for p in on)
                    for k in ("offcpu_stash_taken", "offcpu_unplaced_ns", "ringbuf_full")},
        "phases": phases,
    }
    return row


def pct(a, b):
    return 100.0 * (b - a) / b if a and b else None


def fmt(v, spec):
    return "-" if v is None else format(v, spec)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workload", action="append", choices=["tokens", "tomcat", "syscalls"])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--phase", type=float, default=6.0)
    ap.add_argument("--hz", type=int, default=99)
    ap.add_argument("--asprof", help="async-profiler's directory (bin/asprof)")
    ap.add_argument("--no-install", action="store_true")
    args = ap.parse_args()
    workloads = args.workload or ["tokens", "tomcat", "syscalls"]
    if "tomcat" in workloads and not args.no_install:
        apps.install(apps.APPS["tomcat"][1])
    subprocess.run(["sysctl", "-q", "kernel.bpf_stats_enabled=1"], check=False)
    tools = build_tools(os.path.join(BUILD, "bench-offcpu"))
    cgroup = apps.Cgroup()
    rows = []
    try:
        for w in workloads:
            rows.append(run_workload(w, args, tools, cgroup, args.hz))
    finally:
        cgroup.remove()
        subprocess.run(["sysctl", "-q", "kernel.bpf_stats_enabled=0"], check=False)
    md = ["| workload | off /s | cpu /s | cpu+offcpu /s | asprof wall /s | offcpu vs cpu | wall vs off | "
          "asprof vs off | switches/s | BPF ns/switch | BPF ns/sys_exit | off-CPU samples/s | us/off-CPU sample | "
          "skipped (stash, unplaced ms, ring) |",
          "|" + "---|" * 14]
    for r in rows:
        m = r["median"]
        sk = r["skipped"]
        md.append(f"| {r['workload']} | {fmt(m.get('off'), '.0f')} | {fmt(m.get('cpu'), '.0f')} | "
                  f"{fmt(m.get('cpu+offcpu'), '.0f')} | {fmt(m.get('asprof'), '.0f')} | "
                  f"{fmt(r['offcpu_vs_cpu_pct'], '+.2f')} % | {fmt(r['wall_vs_off_pct'], '+.2f')} % | "
                  f"{fmt(r['asprof_vs_off_pct'], '+.2f')} % | {r['switches_per_s']:.0f} | "
                  f"{fmt(r['bpf_ns_per_switch'], '.0f')} | {fmt(r['bpf_ns_per_sys_exit'], '.0f')} | "
                  f"{r['offcpu_samples_per_s']:.0f} | {fmt(r['daemon_us_per_offcpu_sample'], '.1f')} | "
                  f"{sk['offcpu_stash_taken']}, {sk['offcpu_unplaced_ns'] / 1e6:.0f}, {sk['ringbuf_full']} |")
    print("\n".join(md))
    print("slowdowns: positive = slower than the reference state, in % of its median throughput")
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, "offcpu.md"), "w") as f:
        f.write(f"# bench-offcpu ({args.rounds} rounds of {args.phase:g} s phases, {args.hz} Hz)\n\n")
        f.write("\n".join(md) + "\n")
    with open(os.path.join(RESULTS, "offcpu.json"), "w") as f:
        json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
