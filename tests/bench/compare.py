#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Accuracy and overhead of jsampled next to the profilers users would
otherwise run, measured in one run on this machine.

  tests/bench/compare.py [--out DIR] [--quick]          (root; `make bench`)
      [--only accuracy|overhead [--reuse]]   one part; --reuse keeps the other's results
      [--workloads W..] [--profilers P..]    accuracy: a subset
      [--threads N..] [--rates HZ..] [--rounds N]   overhead: a subset, more rounds
  tests/bench/compare.py --report-only      the report again from DIR/results.json

Peers: JFR of the same JDK (`profile` settings, and 1 ms periods), a
safepoint-biased GetAllStackTraces sampler (tests/bench/peers), Linux perf
with -XX:+PreserveFramePointer and the agent's perf map, and a null sampler
(the same cpu-clock perf events with an empty BPF program).

Accuracy: tests/bench/java/GroundTruth.java measures each phase's thread CPU
time itself; each profiler's samples are attributed to phases by the phase
methods on their stacks. Reported: total-variation distance (TVD), the
largest single-phase error (percentage points), whether the hottest phase
agrees, and samples attributed per sample expected. A causal check doubles
one kernel's work and compares the profiles' shift with the measured one.

Overhead: a JVM runs tests/bench/java/Throughput.java with 1 busy thread and
with one per CPU; the profilers are switched on one at a time in shuffled
rounds of short windows while the JVM keeps running, and each window's
throughput is compared with the same round's window with all of them off
(trimmed mean over rounds, with a bootstrap 95 % confidence interval). Every
figure comes from this run; nothing is hard-coded.
"""
import argparse
import contextlib
import json
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
B = os.path.join(ROOT, "build")
JAVA_HOME = os.environ.get("JAVA_HOME", "/usr/lib/jvm/java-17-openjdk-amd64")
JAVA = os.path.join(JAVA_HOME, "bin", "java")
CLASSES = os.path.join(B, "bench", "classes")
AGENT = os.path.join(B, "libjsagent.so")
SPSAMPLER = os.path.join(B, "bench", "libspsampler.so")
NULL_SAMPLER = os.path.join(B, "bench", "null_sampler")
NCPU = os.cpu_count() or 2

WORKLOADS = {  # phase -> method names that identify it on a stack
    "scimark": {p: [p] for p in ["fft", "sor", "montecarlo", "sparse", "lu"]},
    "md5": {p: [p] for p in ["randomString", "md5", "hex"]},
    "jni": {"inflate": ["inflate"], "postprocess": ["postprocess"]},
    "recursion": {"recurseA": ["recurseA"], "recurseB": ["recurseB"]},  # told apart 2000 frames below the work
    "threads": {p: [p] for p in ["t0", "t1", "t2", "t3", "t4", "t5"]},
    "lambdas": {p: [p] for p in ["streams", "handles", "classload"]},
}
ACCURACY_PROFILERS = ["jsampled", "jfr-profile", "jfr-1ms", "safepoint", "perf"]
OVERHEAD_KINDS = ["null", "jsampled", "jfr", "safepoint", "perf"]
# jsampled's overhead goals: percentage points above the null sampler, per rate.
GOAL_PP = {100: 0.5, 1000: 1.0, 10000: 5.0}


def log(msg):
    print(f"[bench] {msg}", flush=True)


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


# ---------------------------------------------------------------- jsampled
class Daemon:
    def __init__(self, work, hz):
        self.dir = os.path.join(work, f"jsampled-{hz}")
        os.makedirs(self.dir, exist_ok=True)
        self.sock = os.path.join(self.dir, "q.sock")
        self.agent_sock = os.path.join(self.dir, "agent.sock")
        self.log = open(os.path.join(self.dir, "daemon.log"), "a")
        self.proc = subprocess.Popen(
            [os.path.join(B, "jsampled"), "--socket", self.sock, "--agent-socket", self.agent_sock,
             "--frequency", str(hz), "--attach", "off", "--retention-s", "3600"],
            stdout=self.log, stderr=subprocess.STDOUT)
        for _ in range(200):
            if os.path.exists(self.sock):
                return
            if self.proc.poll() is not None:
                raise RuntimeError(f"jsampled exited: see {self.dir}/daemon.log")
            time.sleep(0.05)
        raise RuntimeError("jsampled did not start")

    def ctl(self, *args):
        return subprocess.run([os.path.join(B, "jsamplectl"), "--socket", self.sock, *args],
                              check=True, capture_output=True, text=True).stdout

    def stats(self, pid=None):
        return json.loads(self.ctl("stats", *([str(pid)] if pid else []), "--json"))

    def cpu_s(self):
        with open(f"/proc/{self.proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def rss_mib(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS"):
                    return int(line.split()[1]) / 1024
        return 0.0

    def wait_live(self, pid, timeout=20):
        end = time.time() + timeout
        while time.time() < end:
            for line in self.ctl("list").splitlines()[1:]:
                f = line.split()
                if f and f[0] == str(pid) and f[1] == "live":
                    return
            time.sleep(0.05)
        raise RuntimeError(f"jsampled did not profile pid {pid}")

    def stop(self):
        self.proc.send_signal(signal.SIGINT)
        self.proc.wait(timeout=30)
        self.log.close()


# -------------------------------------------------------- stacks to phases
def norm(frame):
    """'pkg.Class.method_[j]', 'LClass;::method' ... -> 'method'."""
    frame = re.sub(r"_\[[a-z0-9]\]$", "", frame.strip())
    frame = frame.split("(")[0]
    return re.split(r"[.:]", frame)[-1]


def phase_of(frames, aliases):
    """The phase of a stack (root first): the phase method nearest the leaf."""
    for fr in reversed(frames):
        m = norm(fr)
        for phase, names in aliases.items():
            if m in names:
                return phase
    return None


def shares_from_collapsed(lines, aliases):
    counts = {p: 0 for p in aliases}
    for line in lines:
        line = line.rstrip("\n")
        if not line:
            continue
        stack, _, n = line.rpartition(" ")
        try:
            n = int(n)
        except ValueError:
            continue
        p = phase_of(stack.split(";"), aliases)
        if p:
            counts[p] += n
    return counts


def jfr_collapsed(path):
    """The recording's samples as collapsed stacks (tests/bench/java/JfrCollapsed.java)."""
    p = run([JAVA, "-cp", CLASSES, "JfrCollapsed", path], capture_output=True, text=True)
    return p.stdout.splitlines()


def perf_collapsed(path):
    p = subprocess.run(["perf", "script", "-i", path, "-F", "ip,sym", "--max-stack", str(PERF_MAX_STACK)],
                       capture_output=True, text=True)
    lines, frames = [], []
    for line in p.stdout.splitlines() + [""]:
        if not line.strip():
            if frames:
                lines.append(";".join(reversed(frames)) + " 1")
            frames = []
            continue
        parts = line.split(None, 1)
        frames.append(parts[1] if len(parts) > 1 else "[unknown]")
    return lines


def measured_truth(stdout_path):
    truth = {}
    with open(stdout_path) as f:
        for line in f:
            p = line.split()
            if len(p) == 3 and p[0] == "phase":
                truth[p[1]] = int(p[2])
    return truth


def metrics(truth, counts):
    tt, ct = sum(truth.values()), sum(counts.values())
    if not tt or not ct:
        return None
    t = {p: truth[p] / tt for p in truth}
    c = {p: counts.get(p, 0) / ct for p in truth}
    ranked = sorted(t.values(), reverse=True)
    # With phases of equal truth (scimark's five kernels) "the hottest" is a
    # coin toss: judged only when the top phase leads by 2 pp or more.
    clear = len(ranked) < 2 or ranked[0] - ranked[1] >= 0.02
    return {
        "tvd": 0.5 * sum(abs(t[p] - c[p]) for p in truth),
        "max_pp": 100 * max(abs(t[p] - c[p]) for p in truth),
        "hottest_ok": (max(t, key=t.get) == max(c, key=c.get)) if clear else None,
        "truth": t, "profile": c, "samples": ct,
    }


# ----------------------------------------------------------------- accuracy
def jfc_1ms(work):
    """JDK 17 has no `jfr configure`: the profile settings with 1 ms periods."""
    src = os.path.join(JAVA_HOME, "lib", "jfr", "profile.jfc")
    text = open(src).read()
    for ev in ("jdk.ExecutionSample", "jdk.NativeMethodSample"):
        text = re.sub(r'(<event name="%s">.*?<setting name="period"[^>]*>)[^<]*(</setting>)' % ev,
                      r"\g<1>1 ms\g<2>", text, flags=re.S)
    dst = os.path.join(work, "profile-1ms.jfc")
    open(dst, "w").write(text)
    return dst


PERF_MAX_STACK = 4096


@contextlib.contextmanager
def perf_max_stack(on):
    """Lets perf record stacks of PERF_MAX_STACK frames (the kernel's default
    is 127), so it too can see the recursion's bottom frame; restored after."""
    path = "/proc/sys/kernel/perf_event_max_stack"
    old = open(path).read().strip() if on else None
    if on:
        open(path, "w").write(str(PERF_MAX_STACK))
    try:
        yield
    finally:
        if on:
            open(path, "w").write(old)


def run_accuracy(work, workload, profiler, seconds, daemon, extra=""):
    tag = f"{workload}{'-' + extra if extra else ''}-{profiler}"
    d = os.path.join(work, tag)
    os.makedirs(d, exist_ok=True)
    stdout = os.path.join(d, "out.txt")
    jvm = [JAVA, "-cp", CLASSES]
    pre, post = [], None
    if profiler == "jsampled":
        jvm += [f"-agentpath:{AGENT}=socket:{daemon.agent_sock}"]
    elif profiler.startswith("jfr"):
        settings = "profile" if profiler == "jfr-profile" else jfc_1ms(work)
        # JFR's deepest stacks (default 64 frames), so it can see the recursion's bottom frame
        jvm += ["-XX:FlightRecorderOptions:stackdepth=2048",
                f"-XX:StartFlightRecording=filename={d}/rec.jfr,settings={settings}"]
    elif profiler == "safepoint":
        jvm += [f"-agentpath:{SPSAMPLER}=out={d}/stacks.txt,hz=1000"]
    elif profiler == "perf":
        jvm += ["-XX:+PreserveFramePointer", f"-agentpath:{AGENT}=perfmap,socket:{d}/none.sock"]
    jvm += ["GroundTruth", workload, str(seconds)] + (["1", extra] if extra else [])
    if profiler == "perf":  # the JVM runs under perf, which follows every thread
        jvm = ["perf", "record", "-q", "-e", "cpu-clock", "-F", "1000", "-g", "-o", f"{d}/perf.data", "--"] + jvm
    with open(stdout, "w") as out, perf_max_stack(profiler == "perf"):
        proc = subprocess.Popen(jvm, stdout=out, stderr=subprocess.STDOUT)
        proc.wait()
    truth = measured_truth(stdout)
    aliases = WORKLOADS[workload]
    if profiler == "jsampled":
        lines = daemon.ctl("cct", str(proc.pid), "--format", "collapsed").splitlines()
    elif profiler == "perf":
        lines = perf_collapsed(f"{d}/perf.data")
    elif profiler.startswith("jfr"):
        lines = jfr_collapsed(f"{d}/rec.jfr")
    else:
        lines = open(f"{d}/stacks.txt").read().splitlines()
    m = metrics(truth, shares_from_collapsed(lines, aliases))
    if m:
        rate = {"jsampled": 1000, "jfr-profile": 100, "jfr-1ms": 1000, "safepoint": 1000, "perf": 1000}[profiler]
        if profiler == "jfr-profile":
            rate = 100  # 10 ms Java samples (20 ms in native code)
        m["delivered"] = m["samples"] / max(1.0, rate * sum(truth.values()) / 1e9)
    if m:
        shutil.rmtree(d, ignore_errors=True)
    return m


# ----------------------------------------------------------------- overhead
# One JVM per (threads, rate) runs tests/bench/java/Throughput.java: a fixed
# unit of numeric work per thread, each thread on its own data. Every
# profiler is loaded but idle; rounds of short windows then switch exactly
# one of them on at a time (or none: "off"), in a shuffled order per round,
# and each window's throughput is compared with the same round's "off"
# window. Pairing within a round cancels the slow drift of these VMs (±5 %
# between runs, ~1 % between neighbouring seconds), so a difference of a few
# tenths of a point is measurable. perf runs in its own JVM, because it needs
# -XX:+PreserveFramePointer, which changes the compiled code of every state.
OVH_WARM_S = 10.0
OVH_EXTRA_ROUNDS = 8


def ops_series(path):
    pts = []
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) == 3 and p[0] == "ops":
                pts.append((int(p[1]) / 1e6, int(p[2])))
    return pts


def throughput(pts, t0, t1):
    inside = [p for p in pts if t0 <= p[0] <= t1]
    if len(inside) < 2:
        return None
    (a, na), (b, nb) = inside[0], inside[-1]
    return (nb - na) / (b - a) if b > a else None


def proc_cpu_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class NullSwitch:
    """The null sampler on the JVM's threads (as jsampled's default
    --sample-events threads opens its own), started with its events
    disabled; SIGUSR1/2 switch them."""
    def __init__(self, rate, pid):
        self.proc = subprocess.Popen([NULL_SAMPLER, str(rate), "off", str(pid)])

    def on(self):
        self.proc.send_signal(signal.SIGUSR1)

    def off(self):
        self.proc.send_signal(signal.SIGUSR2)

    def close(self):
        self.proc.send_signal(signal.SIGINT)
        self.proc.wait()


class JsampledSwitch:
    """jsampled's own host-wide switch (root-only query `sampling on|off`)."""
    def __init__(self, daemon):
        self.daemon = daemon

    def on(self):
        self.daemon.ctl("sampling", "on")

    def off(self):
        self.daemon.ctl("sampling", "off")

    def close(self):
        pass


class FileSwitch:
    """A control file the in-JVM peer polls: the safepoint sampler's `ctl=`
    (exists = sample) and Throughput's JFR control (holds the .jfc path)."""
    def __init__(self, path, content=""):
        self.path, self.content = path, content

    def on(self):
        with open(self.path + ".tmp", "w") as f:
            f.write(self.content)
        os.rename(self.path + ".tmp", self.path)

    def off(self):
        if os.path.exists(self.path):
            os.unlink(self.path)

    def close(self):
        self.off()


class PerfSwitch:
    """perf record attached to the JVM with its events disabled (-D -1),
    switched through its control FIFO."""
    def __init__(self, rate, pid, d):
        self.ctl, self.ack = os.path.join(d, "perf.ctl"), os.path.join(d, "perf.ack")
        for f in (self.ctl, self.ack):
            os.mkfifo(f)
        self.proc = subprocess.Popen(["perf", "record", "-q", "-e", "cpu-clock", "-F", str(rate), "-g",
                                      "-p", str(pid), "-o", os.path.join(d, "perf.data"), "-D", "-1",
                                      f"--control=fifo:{self.ctl},{self.ack}"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.wctl = open(self.ctl, "w")
        self.rack = open(self.ack)

    def _say(self, what):
        self.wctl.write(what + "\n")
        self.wctl.flush()
        self.rack.readline()

    def on(self):
        self._say("enable")

    def off(self):
        self._say("disable")

    def close(self):
        self.wctl.close()
        self.rack.close()
        self.proc.send_signal(signal.SIGINT)
        self.proc.wait()


def pin_workers(pid, threads, timeout=10):
    """Pins Throughput's worker-i thread to CPU i, so that every window sees
    the same placement of the workers and windows differ only in the
    profiler that is on. (The daemon and the peers' threads stay unpinned:
    with one worker per CPU they must take their CPU time from a worker,
    as they would from a busy application.)"""
    end = time.monotonic() + timeout
    pinned = set()
    while len(pinned) < threads and time.monotonic() < end:
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                comm = open(f"/proc/{pid}/task/{tid}/comm").read().strip()
            except OSError:
                continue
            if comm.startswith("worker-") and comm not in pinned:
                os.sched_setaffinity(int(tid), {int(comm[7:]) % NCPU})
                pinned.add(comm)
        time.sleep(0.05)
    if len(pinned) < threads:
        raise RuntimeError(f"found {len(pinned)} of {threads} worker threads to pin in pid {pid}")


def jfr_settings_for(rate, work):
    """A .jfc with Java and native sample periods of 1000/rate ms."""
    src = os.path.join(JAVA_HOME, "lib", "jfr", "profile.jfc")
    text = open(src).read()
    for ev in ("jdk.ExecutionSample", "jdk.NativeMethodSample"):
        text = re.sub(r'(<event name="%s">.*?<setting name="period"[^>]*>)[^<]*(</setting>)' % ev,
                      r"\g<1>%d ms\g<2>" % (1000 // rate), text, flags=re.S)
    dst = os.path.join(work, f"jfr-{rate}.jfc")
    open(dst, "w").write(text)
    return dst


def trimmed_mean(xs, cut=0.2):
    """Mean of the middle 60 %: robust to a window the host disturbed, and
    closer to the mean's precision than the median is."""
    xs = sorted(xs)
    k = int(len(xs) * cut)
    return statistics.mean(xs[k:len(xs) - k])


def estimate_ci(xs, seed=1, n=2000):
    """Trimmed mean and its 95 % bootstrap (percentile) confidence interval."""
    rng = random.Random(seed)
    ests = sorted(trimmed_mean(rng.choices(xs, k=len(xs))) for _ in range(n))
    return trimmed_mean(xs), ests[int(0.025 * n)], ests[int(0.975 * n) - 1]


def overhead_figures(kind, per_round):
    """Slowdown of `kind` against the same round's all-off window, and for
    jsampled also against the null sampler's window of the round."""
    full = [v for v in per_round if all(v.get(s) for s in v)]
    res = {}
    m, lo, hi = estimate_ci([100 * (1 - v[kind] / v["off"]) for v in full])
    res.update({"slowdown_pct": m, "ci": [lo, hi]})
    if kind == "jsampled" and all("null" in v for v in full):
        res["minus_null_pp"] = list(estimate_ci([100 * (v["null"] - v["jsampled"]) / v["off"] for v in full]))
    off = [v["off"] for v in full]
    res["noise_pct"] = 100 * statistics.pstdev(off) / statistics.mean(off)
    return res


def complete_rounds(out_path, windows, states):
    """Each round's throughput per state, for the rounds that have them all."""
    pts = ops_series(out_path)
    tp = {}
    for r, st, a, b in windows:
        tp.setdefault(r, {})[st] = throughput(pts, a, b)
    return [v for v in tp.values() if all(v.get(s) for s in states)]


def undecided(out_path, windows, states, rate):
    """Whether jsampled − null's interval still straddles the goal. Then the
    run gets more rounds (at most 2 × OVH_EXTRA_ROUNDS): on a noisy day the
    question is answered at the price of a minute, instead of "unclear"."""
    if "jsampled" not in states or "null" not in states or rate not in GOAL_PP:
        return False
    full = complete_rounds(out_path, windows, states)
    if len(full) < 3:
        return False
    _, lo, hi = estimate_ci([100 * (v["null"] - v["jsampled"]) / v["off"] for v in full])
    return lo <= GOAL_PP[rate] < hi


def run_overhead(work, kinds, rate, threads, rounds, window_s, settle_s):
    """One JVM; returns {kind: result} for the kinds switched in it."""
    d = os.path.join(work, f"ovh-{'-'.join(kinds)}-{rate}-{threads}")
    os.makedirs(d, exist_ok=True)
    perf = "perf" in kinds
    daemon = Daemon(d, rate) if "jsampled" in kinds else None
    jvm = [JAVA, "-cp", CLASSES]
    if daemon:
        jvm += [f"-agentpath:{AGENT}=socket:{daemon.agent_sock}"]
    if "safepoint" in kinds:
        jvm += [f"-agentpath:{SPSAMPLER}=out={d}/stacks.txt,hz={rate},ctl={d}/sp.on"]
    if perf:
        jvm += ["-XX:+PreserveFramePointer", f"-agentpath:{AGENT}=perfmap,socket:{d}/none.sock"]
    states = ["off"] + list(kinds)
    max_rounds = rounds + 2 * OVH_EXTRA_ROUNDS if "jsampled" in kinds and "null" in kinds else rounds
    total = OVH_WARM_S + max_rounds * len(states) * (window_s + settle_s) + 30  # killed when done
    jvm += ["Throughput", str(total), str(threads), f"{d}/jfr.on"]
    out_path = os.path.join(d, "out.txt")
    windows, sw = [], {}
    js = {"cpu_s": 0.0, "samples": 0, "jvm_cpu_s": 0.0}
    with open(out_path, "w") as out:
        proc = subprocess.Popen(jvm, stdout=out, stderr=subprocess.STDOUT)
        try:
            for k in kinds:
                if k != "perf":
                    sw[k] = (NullSwitch(rate, proc.pid) if k == "null" else JsampledSwitch(daemon) if k == "jsampled" else
                             FileSwitch(f"{d}/sp.on") if k == "safepoint" else
                             FileSwitch(f"{d}/jfr.on", jfr_settings_for(rate, d)))
            if daemon:
                daemon.wait_live(proc.pid)
                daemon.ctl("sampling", "off")
            warm_end = time.monotonic() + OVH_WARM_S
            pin_workers(proc.pid, threads)
            if "jfr" in sw:  # JFR's first start initialises it (a second or more of CPU): not in a window
                sw["jfr"].on()
                time.sleep(3)
                sw["jfr"].off()
            time.sleep(max(0.0, warm_end - time.monotonic()))
            if "perf" in kinds:  # now: `perf record -p` follows only the threads that exist when it starts
                sw["perf"] = PerfSwitch(rate, proc.pid, d)
                time.sleep(1)
            rng = random.Random(rate * 10 + threads)
            r, target = 0, rounds
            while r < target:
                if r == target - 1 and target < max_rounds and undecided(out_path, windows, states, rate):
                    target = min(max_rounds, target + OVH_EXTRA_ROUNDS)
                order = states[:]
                rng.shuffle(order)
                for st in order:
                    if st != "off":
                        if st == "jsampled":
                            c0, n0, j0 = daemon.cpu_s(), daemon.stats()["samples"], proc_cpu_s(proc.pid)
                        sw[st].on()
                    t0 = time.monotonic()
                    time.sleep(settle_s + window_s)
                    windows.append((r, st, t0 + settle_s, time.monotonic()))
                    if st != "off":
                        sw[st].off()
                        if st == "jsampled":
                            js["cpu_s"] += daemon.cpu_s() - c0
                            js["samples"] += daemon.stats()["samples"] - n0
                            js["jvm_cpu_s"] += proc_cpu_s(proc.pid) - j0
                r += 1
            if daemon:
                st = daemon.stats()
                js["dropped"] = st["dropped"]
                js["rss_mib"] = daemon.rss_mib()
        finally:
            for s in sw.values():
                s.close()
            proc.kill()
            proc.wait()
            if daemon:
                daemon.stop()
    full = complete_rounds(out_path, windows, states)
    if len(full) < max(3, rounds // 2):
        log(f"overhead: too few complete rounds ({len(full)} of {rounds}) in {out_path}")
        return {k: {"kind": k, "rate": rate, "threads": threads} for k in kinds}
    results = {}
    for k in kinds:
        res = {"kind": k, "rate": rate, "threads": threads, "rounds": len(full),
               # ops/s of each round's windows: the report's figures are recomputed from these
               "per_round": [{s: round(v[s], 2) for s in ("off", k, "null") if s in v} for v in full],
               **overhead_figures(k, [{s: v[s] for s in ("off", k, "null") if s in v} for v in full])}
        if k == "jsampled":
            if js["samples"]:
                res["cpu_pct_per_1k"] = 100 * js["cpu_s"] / (js["samples"] / 1000.0)
            if js["jvm_cpu_s"]:
                res["delivered"] = js["samples"] / (js["jvm_cpu_s"] * rate)
            res.update({k2: js[k2] for k2 in ("dropped", "rss_mib", "samples") if k2 in js})
        results[k] = res
    shutil.rmtree(d, ignore_errors=True)
    return results


# ------------------------------------------------------------------ reports
def gnuplot(script, cwd):
    subprocess.run(["gnuplot"], input=script, text=True, cwd=cwd, check=True)


def write_reports(out, acc, causal, ovh, meta):
    os.makedirs(out, exist_ok=True)
    if not acc or not ovh:
        raise SystemExit("nothing to report: run both parts (no --only)")
    profs = [p for p in ACCURACY_PROFILERS if any(r["profiler"] == p for r in acc)]
    wls = list(dict.fromkeys(r["workload"] for r in acc))
    with open(os.path.join(out, "accuracy.dat"), "w") as f:
        f.write("workload " + " ".join(profs) + "\n")
        for w in wls:
            row = [w]
            for p in profs:
                m = next((r for r in acc if r["workload"] == w and r["profiler"] == p), None)
                row.append(f"{m['tvd']:.4f}" if m and m.get("tvd") is not None else "NaN")
            f.write(" ".join(row) + "\n")
    kinds = list(dict.fromkeys(r["kind"] for r in ovh))
    ths = sorted(set(r["threads"] for r in ovh))
    rates = sorted(set(r["rate"] for r in ovh))
    ovh_get = lambda k, rate, th: next((r for r in ovh if r["kind"] == k and r["rate"] == rate and r["threads"] == th), {})
    for th in ths:  # per rate: estimate, CI low, CI high of each kind; then jsampled − null and its goal
        with open(os.path.join(out, f"overhead-{th}.dat"), "w") as f:
            f.write("rate " + " ".join(f"{k} {k}_lo {k}_hi" for k in kinds) + " js_null js_null_lo js_null_hi goal\n")
            for rate in rates:
                row = [str(rate)]
                for k in kinds:
                    m = ovh_get(k, rate, th)
                    row += ([f"{m['slowdown_pct']:.3f}", f"{m['ci'][0]:.3f}", f"{m['ci'][1]:.3f}"]
                            if "slowdown_pct" in m else ["NaN"] * 3)
                mn = ovh_get("jsampled", rate, th).get("minus_null_pp")
                row += [f"{x:.3f}" for x in mn] if mn else ["NaN"] * 3
                row.append(str(GOAL_PP.get(rate, "NaN")))
                f.write(" ".join(row) + "\n")
    gnuplot(f"""set terminal pngcairo size 1000,500 font ",10"
set output "accuracy.png"
set title "Accuracy: total-variation distance from the measured truth (lower is better), 1 kHz, {meta['seconds']} s"
set style data histograms
set style histogram cluster gap 1
set style fill solid border -1
set logscale y
set yrange [0.0001:1]
set ylabel "TVD (log scale)"
set key top left
plot for [i=2:{len(profs) + 1}] "accuracy.dat" using i:xtic(1) title columnheader(i)
""", out)
    ymax = 40  # the safepoint sampler's 10 kHz cost would flatten everything else: clipped, labelled
    n = len(kinds)
    panels = []
    for th in ths:
        labels = [f'set label "{k} {r["slowdown_pct"]:.0f}%" at {r["rate"]},{ymax - 3} right offset -0.5,0 front'
                  for k in kinds for r in [ovh_get(k, rate, th) for rate in rates] if r.get("slowdown_pct", 0) > ymax]
        panels += ["unset label", *labels,
                   f'set title "{th} busy thread{"s" if th > 1 else ""}: slowdown % (95 % CI)"',
                   f"set yrange [-3:{ymax}]",
                   f'plot for [i=0:{n - 1}] "overhead-{th}.dat" using 1:(column(2+3*i)):(column(3+3*i)):(column(4+3*i)) '
                   f'with yerrorlines title word("{" ".join(kinds)}", i+1)']
    js = ", ".join(f'"overhead-{th}.dat" using 1:{3 * n + 2}:{3 * n + 3}:{3 * n + 4} with yerrorlines '
                   f'title "{th} thread{"s" if th > 1 else ""}"' for th in ths)
    panels += ["unset label", 'set title "jsampled − null sampler, pp (95 % CI), and the goal"',
               "set yrange [*:*]",
               f'plot {js}, "overhead-{ths[0]}.dat" using 1:{3 * n + 5} with linespoints dt 2 lw 2 lc "red" title "goal"']
    gnuplot("\n".join([
        'set terminal pngcairo size 1500,480 font ",10"',
        'set output "overhead.png"',
        f'set multiplot layout 1,{len(ths) + 1} title "Overhead: the workload\'s throughput with one profiler on vs all off, in the same run"',
        "set logscale x", "set xrange [70:14000]", 'set xlabel "samples/s per CPU"', "set key top left", "set grid",
        *panels, "unset multiplot", ""]), out)

    md = []
    md.append(f"# jsampled vs JFR, a safepoint sampler and perf — {meta['date']}\n")
    md.append(f"Machine: {meta['machine']}. JDK: {meta['jdk']}. Reproduce: `make bench` "
              f"({meta['minutes']:.1f} min: "
              + ", ".join(f"{k} {v:.1f}" for k, v in meta.get("part_minutes", {}).items()) + ").\n")
    md.append("## Accuracy (1 kHz; JFR `profile` = 10 ms Java / 20 ms native periods)\n")
    md.append("TVD = total-variation distance between the profile's phase shares and the phase CPU "
              "times the workload measured itself; max = largest single-phase error (pp); hot = hottest "
              "phase agrees; delivered = samples attributed to phases per sample expected at the "
              "profiler's rate.\n")
    md.append("| workload | " + " | ".join(profs) + " |")
    md.append("|---|" + "---|" * len(profs))
    for w in wls:
        cells = []
        for p in profs:
            m = next((r for r in acc if r["workload"] == w and r["profiler"] == p), None)
            if not m or m.get("tvd") is None:
                cells.append("no samples")
            else:
                hot = "tie" if m["hottest_ok"] is None else "yes" if m["hottest_ok"] else "**no**"
                cells.append(f"{m['tvd']:.3f} / {m['max_pp']:.1f} pp / {hot}"
                             f" / {100 * m['delivered']:.0f}%")
        md.append(f"| {w} | " + " | ".join(cells) + " |")
    md.append("\nCells: TVD / max error / hottest agrees (tie: equal phases) / delivered.\n")
    md.append("![accuracy](accuracy.png)\n")
    if causal:
        md.append("## Causal check (scimark, `sor` gets twice the CPU time of each other kernel)\n")
        md.append("| profiler | sor share before | after | profile moved | truth moved | error |")
        md.append("|---|---|---|---|---|---|")
        for c in causal:
            md.append(f"| {c['profiler']} | {c['before']:.1f}% | {c['after']:.1f}% | {c['moved']:+.1f} pp | "
                      f"{c['truth_moved']:+.1f} pp | {c['moved'] - c['truth_moved']:+.1f} pp |")
        md.append("")
    md.append("## Overhead (Throughput.java; profilers switched on one at a time in shuffled rounds)\n")
    md.append(f"Slowdown of the workload's throughput in % of the same round's window with every profiler off: "
              f"trimmed mean (middle 60 %) over {meta['rounds']} rounds (column rounds: up to "
              f"{meta['rounds'] + 2 * OVH_EXTRA_ROUNDS} where jsampled − null's interval still straddled its goal; "
              f"perf's own run {max(4, meta['rounds'] * 3 // 5)}) of {meta['window_s']} s windows (after {meta['settle_s']} s "
              "to settle), [95 % bootstrap confidence interval]. `null` is the null sampler: the timer "
              "interrupts alone. jsampled − null, paired per round, is what jsampled itself costs; goal = "
              "jsampled's goal for it; met when the whole interval is at or below the goal. noise = the "
              "coefficient of variation of the all-off windows of the run. delivered = samples received "
              "per sample expected from the JVM's CPU time at that rate.\n")
    md.append("| threads | rate | " + " | ".join(kinds) + " | jsampled − null | goal | met | "
              "jsampled CPU per 1k samples/s | delivered | dropped | noise | rounds |")
    md.append("|---|---|" + "---|" * len(kinds) + "---|---|---|---|---|---|---|---|")
    for th in ths:
        for rate in sorted(set(r["rate"] for r in ovh)):
            row = []
            get = lambda k: next((r for r in ovh if r["kind"] == k and r["rate"] == rate and r["threads"] == th), {})
            for k in kinds:
                v = get(k).get("slowdown_pct")
                row.append("n/a" if v is None else f"{v:.1f}%")
            js = get("jsampled")
            mn, goal = js.get("minus_null_pp"), GOAL_PP.get(rate)
            diff = "n/a" if not mn else f"{mn[0]:+.2f} pp [{mn[1]:+.2f}, {mn[2]:+.2f}]"
            met = ("n/a" if not mn or goal is None else "yes" if mn[2] <= goal else
                   "**no**" if mn[1] > goal else "unclear")
            cpu, dl = js.get("cpu_pct_per_1k"), js.get("delivered")
            md.append(f"| {th} | {rate} | " + " | ".join(row) + f" | {diff} | ≤ {goal} pp | {met} | "
                      f"{'n/a' if cpu is None else f'{cpu:.2f}% CPU'} | "
                      f"{'n/a' if dl is None else f'{100 * dl:.0f}%'} | {js.get('dropped', 'n/a')} | "
                      f"{js.get('noise_pct', float('nan')):.1f}% | {js.get('rounds', 'n/a')} |")
    md.append("\n![overhead](overhead.png)\n")
    rss = [r.get("rss_mib") for r in ovh if r.get("rss_mib")]
    if rss:
        md.append(f"jsampled RSS during the overhead runs: {min(rss):.0f}–{max(rss):.0f} MiB "
                  "(the 64 MiB ring buffer mapping included).\n")
    held = [r["rate"] for r in ovh if r["kind"] == "jsampled" and r.get("dropped") == 0]
    md.append(f"Highest rate jsampled held with no sample dropped: {max(held) if held else 'none'} samples/s per CPU.\n")
    open(os.path.join(out, "results.md"), "w").write("\n".join(md))
    json.dump({"accuracy": acc, "causal": causal, "overhead": ovh, "meta": meta},
              open(os.path.join(out, "results.json"), "w"), indent=1, default=str)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "bench", "results"))
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--quick", action="store_true", help="fewer, shorter runs (a smoke test)")
    ap.add_argument("--only", choices=["accuracy", "overhead"], default=None)
    ap.add_argument("--rounds", type=int, default=None, help="rounds of overhead windows per run")
    ap.add_argument("--workloads", nargs="+", choices=list(WORKLOADS), default=None, help="accuracy: these workloads only")
    ap.add_argument("--profilers", nargs="+", choices=ACCURACY_PROFILERS, default=None, help="accuracy: these profilers only")
    ap.add_argument("--threads", type=int, nargs="+", default=None, help="overhead: busy threads (default 1 and one per CPU)")
    ap.add_argument("--rates", type=int, nargs="+", default=None, help="overhead: samples/s (default 100 1000 10000)")
    ap.add_argument("--report-only", action="store_true", help="rewrite the report from DIR/results.json")
    ap.add_argument("--reuse", action="store_true",
                    help="keep the other part's results from DIR/results.json (with --only)")
    a = ap.parse_args()
    if a.report_only:
        old = json.load(open(os.path.join(a.out, "results.json")))
        for r in old["overhead"]:  # recomputed, so a change of statistic applies to recorded runs
            if r.get("per_round"):
                r.update(overhead_figures(r["kind"], r["per_round"]))
        write_reports(a.out, old["accuracy"], old["causal"], old["overhead"], old["meta"])
        print(open(os.path.join(a.out, "results.md")).read())
        return
    if os.geteuid() != 0:
        sys.exit("needs root (BPF, perf events)")
    for tool in (JAVA, AGENT, SPSAMPLER, NULL_SAMPLER, os.path.join(B, "jsampled"),
                 shutil.which("perf") or "perf", shutil.which("gnuplot") or "gnuplot"):
        if not os.path.exists(tool):
            sys.exit(f"missing {tool} (run `make bench`, which builds and installs what it needs)")
    started = time.time()
    work = "/tmp/jsampled-bench"
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    os.makedirs(CLASSES, exist_ok=True)
    run([os.path.join(JAVA_HOME, "bin", "javac"), "-d", CLASSES,
         *(os.path.join(ROOT, "tests", "bench", "java", j)
           for j in ("GroundTruth.java", "Throughput.java", "JfrCollapsed.java"))])
    seconds = 3 if a.quick else a.seconds
    rounds, window_s, settle_s = (4, 0.75, 0.2) if a.quick else (20, 0.75, 0.2)
    rounds = a.rounds or rounds
    acc, causal, ovh = [], [], []
    if a.reuse and a.only:
        old = json.load(open(os.path.join(a.out, "results.json")))
        if a.only == "overhead":
            acc, causal = old["accuracy"], old["causal"]
            seconds = old["meta"]["seconds"]
        else:
            ovh = old["overhead"]
    part_min = {}
    if a.reuse and a.only:  # the kept part's duration, for the report's total
        part_min = dict(old["meta"].get("part_minutes", {}))
    if a.only in (None, "accuracy"):
        t_part = time.time()
        daemon = Daemon(work, 1000)
        try:
            wls = a.workloads or (["scimark", "jni"] if a.quick else list(WORKLOADS))
            for w in wls:
                for p in a.profilers or ACCURACY_PROFILERS:
                    m = run_accuracy(work, w, p, seconds, daemon)
                    acc.append({"workload": w, "profiler": p, **(m or {"tvd": None})})
                    log(f"accuracy {w:<10} {p:<12} " + (f"TVD {m['tvd']:.4f}  max {m['max_pp']:.2f} pp  "
                        f"hottest {'tie' if m['hottest_ok'] is None else 'ok' if m['hottest_ok'] else 'WRONG'}  delivered {100 * m['delivered']:.0f}%"
                        if m else "no samples"))
            if not a.quick and not a.workloads and not a.profilers:
                for p in ["jsampled", "jfr-1ms", "safepoint"]:
                    base = next(r for r in acc if r["workload"] == "scimark" and r["profiler"] == p)
                    m = run_accuracy(work, "scimark", p, seconds, daemon, extra="sor")
                    if m and base.get("tvd") is not None:
                        c = {"profiler": p, "before": 100 * base["profile"]["sor"], "after": 100 * m["profile"]["sor"],
                             "truth_moved": 100 * (m["truth"]["sor"] - base["truth"]["sor"])}
                        c["moved"] = c["after"] - c["before"]
                        causal.append(c)
                        log(f"causal {p}: sor {c['before']:.1f}% -> {c['after']:.1f}% "
                            f"(truth moved {c['truth_moved']:+.1f} pp)")
        finally:
            daemon.stop()
        part_min["accuracy"] = (time.time() - t_part) / 60
    if a.only in (None, "overhead"):
        t_part = time.time()
        rates = a.rates or ([1000, 10000] if a.quick else [100, 1000, 10000])
        for th in a.threads or ([1] if a.quick else [1, NCPU]):
            for rate in rates:
                res = run_overhead(work, ["null", "jsampled", "safepoint"] + (["jfr"] if rate <= 1000 else []),
                                   rate, th, rounds, window_s, settle_s)
                # perf's own run: fewer rounds (its interval is narrow; it is a peer)
                res.update(run_overhead(work, ["perf"], rate, th, max(4, rounds * 3 // 5), window_s, settle_s))
                for kind in OVERHEAD_KINDS:
                    if kind not in res:
                        continue  # JFR's shortest sampling period is 1 ms
                    r = res[kind]
                    ovh.append(r)
                    ci = r.get("ci", [float("nan")] * 2)
                    log(f"overhead {th} thr {rate:>5} Hz {kind:<9} slowdown "
                        f"{r.get('slowdown_pct', float('nan')):6.2f}% [{ci[0]:.2f}, {ci[1]:.2f}]"
                        + (f"  minus null {r['minus_null_pp'][0]:+.2f} pp [{r['minus_null_pp'][1]:+.2f}, "
                           f"{r['minus_null_pp'][2]:+.2f}]" if "minus_null_pp" in r else ""))
        part_min["overhead"] = (time.time() - t_part) / 60
    meta = {"date": time.strftime("%Y-%m-%d %H:%M"), "seconds": seconds, "rounds": rounds,
            "window_s": window_s, "settle_s": settle_s,
            "machine": f"{NCPU} CPUs, {os.uname().release}",
            "jdk": subprocess.run([JAVA, "-version"], capture_output=True, text=True).stderr.splitlines()[0],
            "part_minutes": part_min, "minutes": sum(part_min.values()) or (time.time() - started) / 60}
    write_reports(a.out, acc, causal, ovh, meta)
    log(f"results in {a.out}/results.md ({meta['minutes']:.1f} min)")
    print(open(os.path.join(a.out, "results.md")).read())


if __name__ == "__main__":
    main()
