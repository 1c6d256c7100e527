#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""bench-cost: what one sample costs jsampled, live and in replay, on real
Java applications at 10 kHz.

Each application of bench_decode_apps.py (same drivers, inputs, Debian
packages and cgroup-limited zero-config attach) runs twice under a jsampled
of its own: once as in production (not recorded) and once recorded
(jsampled --record) for jsreplay. Between the moment the driver starts its
work and the moment it is done, jsampled's global counters are read twice
(`jsamplectl stats --json`), and each row prints, for that window:

  live us/s     jsampled's user+system CPU per sample it processed (not recorded)
  rec us/s      the same in the recorded run (recording costs compression)
  replay us/s   build/jsreplay --stats --cost on the recorded run's file:
                CPU per sample with the file's reading (decompression), and
                without it (decode us/s); samples/s/core of the decoding alone
  KiB/s         user stack bytes the BPF program copied per sample (bytes/emitted)
  BPF ns/s      the BPF program's run time per emitted sample
                (kernel.bpf_stats_enabled=1, run_time_ns from bpf_prog_info)
  wake/s        times jsampled slept and woke per second (its voluntary
                context switches: a wake-up costs tens of us on a VM)
  dropped       ring buffer full + samples jsampled dropped
  trimmed       samples whose copies jsampled cut to fit its held queue

next to the goals (<= 3 us live, <= 3.3 us replayed, i.e. >= 300k
samples/s/core, 0 dropped, 0 trimmed) and whether each is met. It is a
benchmark: it prints, it asserts no figure. The table and the raw figures
go to tests/bench/results/cost.{md,json}.

usage: bench_cost.py [--seconds N] [--hz N] [--jdk 17|25]... [--app NAME]... [--no-install]
                     [--keep DIR] [--daemon-arg=ARG]...
"""
import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_decode  # noqa: E402
import bench_decode_apps as apps  # noqa: E402

BUILD = bench_decode.BUILD
RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
# A default set that runs in about 15 minutes (two runs of ~25 s per app
# plus JVM start, attach and replay): server, compiler, scripting, XML,
# document rendering, search.
DEFAULT_APPS = ["h2", "tomcat", "ecj", "jython", "xalan", "fop", "lucene"]
GOAL_LIVE_US = 3.0
GOAL_REPLAY_US = 3.3
COST_LINE = re.compile(r"^jsreplay-cost: samples=(\d+) total_us=([\d.]+) read_us=([\d.]+) decode_us=([\d.]+)$", re.M)


class Window:
    """The done() callback of bench_decode.run_profiled: its first call
    comes just after the driver was told to go, the one that returns True
    when the work is done; each reads jsampled's global stats, whose
    differences are the window's figures."""

    def __init__(self):
        self.tmp = None
        self.start = None
        self.end = None

    def argv(self, make_argv):
        def wrapped(tmp, go):
            self.tmp = tmp
            return make_argv(tmp, go)
        return wrapped

    def stats(self):
        r = bench_decode.ctl(os.path.join(self.tmp, "q.sock"), "stats", "--json")
        return json.loads(r.stdout)

    def __call__(self, text):
        if self.start is None:
            self.start = self.stats()
        if apps.TOTAL_LINE.search(text) is None:
            return False
        if self.end is None:
            self.end = self.stats()
        return True

    def figures(self):
        a, b = self.start, self.end
        ka, kb = a.get("bpf", {}), b.get("bpf", {})

        def d(x, y, key):
            return y.get(key, 0) - x.get(key, 0)

        samples = d(a, b, "samples")
        seconds = b.get("uptime_s", 0) - a.get("uptime_s", 0)
        emitted = d(ka, kb, "emitted")
        return {
            "samples": samples,
            "cpu_s": d(a, b, "cpu_s"),
            "us_per_sample": 1e6 * d(a, b, "cpu_s") / samples if samples else None,
            "emitted": emitted,
            "kib_per_sample": d(ka, kb, "bytes") / emitted / 1024.0 if emitted else None,
            "bpf_ns_per_sample": d(ka, kb, "run_time_ns") / emitted if emitted and d(ka, kb, "run_cnt") else None,
            "bpf_ns_per_run": d(ka, kb, "run_time_ns") / d(ka, kb, "run_cnt") if d(ka, kb, "run_cnt") else None,
            "ringbuf_full": d(ka, kb, "ringbuf_full"),
            "dropped": d(a, b, "dropped"),
            "trimmed": d(a, b, "held_trimmed"),
            "wakeups_per_s": d(a, b, "sleeps") / seconds if seconds > 0 else None,
            # samples that waited for their agent's news in the window (cost.json only)
            "held": d(a, b, "held"),
            "held_for_code": d(a, b, "held_for_code"),
            "held_for_method": d(a, b, "held_for_method"),
        }


def run_window(name, jdk_name, seconds, hz, keep, inputs, cgroup, extra_args):
    """One run of the application under jsampled (recorded into KEEP when
    keep is set); the window's figures."""
    jdk = apps.JDKS[jdk_name]
    java = os.path.join(jdk, "bin", "java")
    if not os.path.exists(java):
        raise apps.AppError(f"JDK {jdk_name} not found at {jdk}")
    cp = apps.compile_driver(name)
    cls = apps.APPS[name][0]
    w = Window()
    daemon_args = ["--attach", "auto", "--agent-path", os.path.join(BUILD, "libjsagent.so"),
                   *cgroup.daemon_args(jdk), *extra_args]
    try:
        _, _, _, out, rc = bench_decode.run_profiled(
            f"{name}-jdk{jdk_name}", w.argv(lambda tmp, go: [java, "-cp", ":".join(cp), cls, str(seconds), go, inputs]),
            seconds, hz, keep, daemon_args, preexec_fn=cgroup.enter, live_timeout=60, done=w)
    except RuntimeError as e:
        raise apps.AppError(str(e)[:1500])
    if rc != 0 or w.end is None:
        raise apps.AppError(f"the driver failed (exit {rc}): " + out[-1500:])
    return w.figures()


def replay_cost(rec, repeats):
    """jsreplay --cost on a recording, the median of repeats runs: (total,
    reading, decoding) us per sample and the samples replayed."""
    runs = []
    for _ in range(repeats):
        r = subprocess.run([os.path.join(BUILD, "jsreplay"), rec, "--stats", "--cost"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        m = COST_LINE.search(r.stderr)
        if r.returncode != 0 or not m:
            raise apps.AppError("jsreplay --cost: " + r.stderr[-800:])
        runs.append((float(m.group(2)), float(m.group(3)), float(m.group(4)), int(m.group(1))))
    runs.sort()
    return runs[len(runs) // 2]


def met(value, goal, below=True):
    if value is None:
        return "?"
    return "yes" if (value <= goal if below else value >= goal) else "NO"


def fmt(v, spec):
    return "-" if v is None else format(v, spec)


COLUMNS = (f"{'app':<9} {'JDK':<3} {'samples':>8} {'live us/s':>9} {'rec us/s':>8} {'replay us/s':>11} "
           f"{'decode us/s':>11} {'decode/s/core':>13} {'KiB/s':>6} {'BPF ns/s':>8} {'dropped':>7} {'trimmed':>7} {'wake/s':>6}")
GOALS = (f"{'goal':<9} {'':<3} {'':>8} {'<=' + str(GOAL_LIVE_US):>9} {'':>8} {'<=' + str(GOAL_REPLAY_US):>11} "
         f"{'<=' + str(GOAL_REPLAY_US):>11} {'>=300000':>13} {'':>6} {'':>8} {'0':>7} {'0':>7} {'':>6}")


def row_text(r):
    return (f"{r['app']:<9} {r['jdk']:<3} {r['live']['samples']:>8} {fmt(r['live']['us_per_sample'], '.2f'):>9} "
            f"{fmt(r['recorded']['us_per_sample'], '.2f'):>8} {r['replay_us']:>11.2f} {r['decode_us']:>11.2f} "
            f"{r['decode_per_s']:>13.0f} {fmt(r['live']['kib_per_sample'], '.2f'):>6} "
            f"{fmt(r['live']['bpf_ns_per_sample'], '.0f'):>8} {r['live']['dropped']:>7} {r['live']['trimmed']:>7} "
            f"{fmt(r['live'].get('wakeups_per_s'), '.0f'):>6}")


def verdict(r):
    live = r["live"]
    v = {
        "live": met(live["us_per_sample"], GOAL_LIVE_US),
        "replay": met(r["replay_us"], GOAL_REPLAY_US),
        "decode": met(r["decode_us"], GOAL_REPLAY_US),
        "dropped": met(live["dropped"] + r["recorded"]["dropped"], 0),
        "trimmed": met(live["trimmed"] + r["recorded"]["trimmed"], 0),
    }
    return v


def bpf_stats(enable):
    """kernel.bpf_stats_enabled: on for the benchmark (BPF run times), then
    as it was. Returns the previous value."""
    path = "/proc/sys/kernel/bpf_stats_enabled"
    try:
        with open(path) as f:
            old = f.read().strip()
        with open(path, "w") as f:
            f.write(enable)
        return old
    except OSError as e:
        print(f"bench-cost: cannot set {path} ({e}): no BPF run times", file=sys.stderr)
        return None


def write_results(rows, failed, args, started):
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, "cost.json"), "w") as f:
        json.dump({"date": time.strftime("%Y-%m-%d %H:%M", time.localtime(started)), "args": args,
                   "machine": {"cpus": os.cpu_count(), "kernel": platform.release()},
                   "goals": {"live_us": GOAL_LIVE_US, "replay_us": GOAL_REPLAY_US, "dropped": 0, "trimmed": 0},
                   "rows": rows, "failed": failed}, f, indent=1)
    with open(os.path.join(RESULTS, "cost.md"), "w") as f:
        f.write(f"# jsampled's cost per sample — {time.strftime('%Y-%m-%d %H:%M', time.localtime(started))}\n\n")
        f.write(f"Machine: {os.cpu_count()} CPUs, {platform.release()}. Reproduce: `make bench-cost` "
                f"(`{' '.join(args)}`; {(time.time() - started) / 60:.1f} min).\n\n")
        f.write("live/rec us/s: jsampled's CPU per processed sample while the driver worked, unrecorded/recorded run; "
                "replay us/s: jsreplay's CPU per sample of the recorded run, with reading (decompressing) the file; "
                "decode us/s: without it; KiB/s: stack bytes copied per sample; BPF ns/s: BPF run time per sample; "
                "wake/s: the times jsampled slept and woke a second.\n\n")
        f.write("```\n" + COLUMNS + "\n" + GOALS + "\n")
        for r in rows:
            f.write(row_text(r) + "  " + " ".join(f"{k}:{v}" for k, v in r["met"].items()) + "\n")
        for name, jdk, why in failed:
            f.write(f"{name:<9} {jdk:<3} FAILED: {why}\n")
        f.write("```\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=int, default=20)
    ap.add_argument("--hz", type=int, default=10000)
    ap.add_argument("--jdk", action="append", choices=sorted(apps.JDKS))
    ap.add_argument("--app", action="append", choices=sorted(apps.APPS))
    ap.add_argument("--replays", type=int, default=3, help="jsreplay runs per recording (the median is printed)")
    ap.add_argument("--keep", help="keep the recordings here (default: a temporary directory, removed)")
    ap.add_argument("--daemon-arg", action="append", default=[], help="extra jsampled option, e.g. --daemon-arg=--native-stacks=on")
    ap.add_argument("--no-install", action="store_true", help="do not apt-get install missing packages")
    a = ap.parse_args()
    if os.geteuid() != 0:
        print("bench-cost: needs root (jsampled loads BPF and attaches to JVMs)", file=sys.stderr)
        return 1
    started = time.time()
    jdks = a.jdk or ["17"]
    names = a.app or DEFAULT_APPS
    if not a.no_install:
        apps.install(sorted({p for n in names for p in apps.APPS[n][1]}))
    keep = a.keep or tempfile.mkdtemp(prefix="jsampled-cost-")
    os.makedirs(keep, exist_ok=True)
    inputs = apps.make_inputs()
    cgroup = apps.Cgroup()
    old_stats = bpf_stats("1")
    rows, failed = [], []
    print(COLUMNS + "\n" + GOALS, flush=True)
    try:
        for j in jdks:
            for name in names:
                try:
                    live = run_window(name, j, a.seconds, a.hz, None, inputs, cgroup, a.daemon_arg)
                    recorded = run_window(name, j, a.seconds, a.hz, keep, inputs, cgroup, a.daemon_arg)
                    rec = os.path.join(keep, f"{name}-jdk{j}.jsrec")
                    total, read, decode, replayed = replay_cost(rec, a.replays)
                except apps.AppError as e:
                    failed.append((name, j, str(e)[:300]))
                    print(f"{name:<9} {j:<3} FAILED: {e}", flush=True)
                    continue
                r = {"app": name, "jdk": j, "live": live, "recorded": recorded, "replay_us": total,
                     "read_us": read, "decode_us": decode, "replayed_samples": replayed,
                     "decode_per_s": 1e6 / decode if decode else 0.0,
                     "replay_per_s": 1e6 / total if total else 0.0,
                     "recording_bytes": os.path.getsize(rec)}
                r["met"] = verdict(r)
                rows.append(r)
                print(row_text(r) + "  " + " ".join(f"{k}:{v}" for k, v in r["met"].items()), flush=True)
                if not a.keep:
                    os.unlink(rec)
    finally:
        cgroup.remove()
        if old_stats is not None:
            bpf_stats(old_stats)
        if not a.keep:
            subprocess.run(["rm", "-rf", keep])
    write_results(rows, failed, sys.argv[1:], started)
    # No row measured nothing: no goal is met then.
    goals = {k: bool(rows) and all(r["met"][k] == "yes" for r in rows)
             for k in ("live", "replay", "decode", "dropped", "trimmed")}
    print("goals: " + ", ".join(f"{k} {'met' if v else 'NOT met'}" for k, v in goals.items())
          + (f"; {len(failed)} runs FAILED: " + ", ".join(f"{n}/jdk{j}" for n, j, _ in failed) if failed else "")
          + f"; results in {os.path.relpath(RESULTS, bench_decode.ROOT)}/cost.md")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
