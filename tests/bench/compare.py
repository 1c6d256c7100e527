#!/usr/bin/python3
"""Accuracy and overhead of jsampled next to the profilers users would
otherwise run, measured in one run on this machine.

  tests/bench/compare.py [--out DIR] [--quick]          (root; `make bench`)

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

Overhead: a JVM runs scimark with 1 busy thread and with one per CPU; the
profiler is switched off and on in interleaved phases while the JVM keeps
running, and the median throughput of on-phases is compared with that of
off-phases. Every figure comes from this run; nothing is hard-coded.
"""
import argparse
import json
import os
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
JFR = os.path.join(JAVA_HOME, "bin", "jfr")
JCMD = os.path.join(JAVA_HOME, "bin", "jcmd")
CLASSES = os.path.join(B, "bench", "classes")
AGENT = os.path.join(B, "libjsagent.so")
SPSAMPLER = os.path.join(B, "bench", "libspsampler.so")
NULL_SAMPLER = os.path.join(B, "bench", "null_sampler")
NCPU = os.cpu_count() or 2

WORKLOADS = {  # phase -> method names that identify it on a stack
    "scimark": {p: [p] for p in ["fft", "sor", "montecarlo", "sparse", "lu"]},
    "md5": {p: [p] for p in ["randomString", "md5", "hex"]},
    "jni": {"inflate": ["inflate"], "postprocess": ["postprocess"]},
    "recursion": {"recurseA": ["recurseA", "leafA"], "recurseB": ["recurseB", "leafB"]},
    "threads": {p: [p] for p in ["t0", "t1", "t2", "t3", "t4", "t5"]},
    "lambdas": {p: [p] for p in ["streams", "handles", "classload"]},
}
ACCURACY_PROFILERS = ["jsampled", "jfr-profile", "jfr-1ms", "safepoint", "perf"]


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


def jfr_collapsed(path, work):
    out = os.path.join(work, "jfr.json")
    with open(out, "w") as f:
        run([JFR, "print", "--json", "--stack-depth", "4096", "--events",
             "jdk.ExecutionSample,jdk.NativeMethodSample", path], stdout=f)
    with open(out) as f:
        data = json.load(f)
    lines = []
    for ev in data["recording"]["events"]:
        st = ev["values"].get("stackTrace") or {}
        frames = [f"{fr['method']['type']['name']}.{fr['method']['name']}" for fr in st.get("frames", [])]
        if frames:
            lines.append(";".join(reversed(frames)) + " 1")
    os.unlink(out)
    return lines


def perf_collapsed(path):
    p = subprocess.run(["perf", "script", "-i", path, "-F", "ip,sym"], capture_output=True, text=True)
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
        jvm += [f"-XX:StartFlightRecording=filename={d}/rec.jfr,settings={settings}"]
    elif profiler == "safepoint":
        jvm += [f"-agentpath:{SPSAMPLER}=out={d}/stacks.txt,hz=1000"]
    elif profiler == "perf":
        jvm += ["-XX:+PreserveFramePointer", f"-agentpath:{AGENT}=perfmap,socket:{d}/none.sock"]
    jvm += ["GroundTruth", workload, str(seconds)] + (["1", extra] if extra else [])
    if profiler == "perf":  # the JVM runs under perf, which follows every thread
        jvm = ["perf", "record", "-q", "-e", "cpu-clock", "-F", "1000", "-g", "-o", f"{d}/perf.data", "--"] + jvm
    with open(stdout, "w") as out:
        proc = subprocess.Popen(jvm, stdout=out, stderr=subprocess.STDOUT)
        proc.wait()
    truth = measured_truth(stdout)
    aliases = WORKLOADS[workload]
    if profiler == "jsampled":
        lines = daemon.ctl("cct", str(proc.pid), "--format", "collapsed").splitlines()
    elif profiler == "perf":
        lines = perf_collapsed(f"{d}/perf.data")
    elif profiler.startswith("jfr"):
        lines = jfr_collapsed(f"{d}/rec.jfr", d)
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
def ops_series(path):
    pts = []
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) == 3 and p[0] == "ops":
                pts.append((int(p[1]) / 1000.0, int(p[2])))
    return pts


def throughput(pts, t0, t1):
    inside = [p for p in pts if t0 <= p[0] <= t1]
    if len(inside) < 2:
        return None
    (a, na), (b, nb) = inside[0], inside[-1]
    return (nb - na) / (b - a) if b > a else None


class Toggle:
    """Switches one profiler on and off around a running JVM."""

    def __init__(self, kind, rate, pid, work, daemon=None):
        self.kind, self.rate, self.pid, self.work, self.daemon = kind, rate, pid, work, daemon
        self.proc = None
        self.ctl_file = os.path.join(work, "sp.on")

    def on(self):
        if self.kind == "null":
            self.proc = subprocess.Popen([NULL_SAMPLER, str(self.rate)])
        elif self.kind == "jsampled":
            self.daemon.ctl("sampling", "on")
        elif self.kind == "safepoint":
            open(self.ctl_file, "w").close()
        elif self.kind == "perf":
            self.proc = subprocess.Popen(["perf", "record", "-q", "-e", "cpu-clock", "-F", str(self.rate), "-g",
                                          "-p", str(self.pid), "-o", f"{self.work}/perf.data"],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def off(self):
        if self.kind in ("null", "perf") and self.proc:
            self.proc.send_signal(signal.SIGINT)
            self.proc.wait()
            self.proc = None
        elif self.kind == "jsampled":
            self.daemon.ctl("sampling", "off")
        elif self.kind == "safepoint":
            if os.path.exists(self.ctl_file):
                os.unlink(self.ctl_file)
        elif self.kind == "jfr":
            subprocess.run([JCMD, str(self.pid), "JFR.stop", "name=bench"], capture_output=True)


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


def windows_done(result):
    return result.get("_done", False)


def overhead_phases(tg, kind, proc, daemon, d, rate, pairs, phase_s, settle_s, result):
    """Off and on phases around the running JVM; returns the measurement
    windows [(state, t0, t1)] in CLOCK_MONOTONIC seconds."""
    if kind == "jfr":  # jcmd JFR.start with a .jfc of this rate's period
        settings = jfr_settings_for(rate, d)
        tg.on = lambda: subprocess.run([JCMD, str(proc.pid), "JFR.start", "name=bench",
                                        f"settings={settings}", f"filename={d}/t.jfr"], capture_output=True)
    if kind == "jsampled":
        daemon.wait_live(proc.pid)
        daemon.ctl("sampling", "off")
    time.sleep(3)
    windows = []
    s0 = None
    for i in range(pairs):
        # Alternate which comes first, so a drift does not favour one side.
        for state in (("off", "on") if i % 2 == 0 else ("on", "off")):
            if state == "on":
                if kind == "jsampled":
                    c0, n0 = daemon.cpu_s(), daemon.stats()["samples"]
                tg.on()
            else:
                tg.off()
            t0 = time.monotonic()
            time.sleep(phase_s)
            windows.append((state, t0 + settle_s, time.monotonic()))
            if state == "on" and kind == "jsampled":
                c1, n1 = daemon.cpu_s(), daemon.stats()["samples"]
                s0 = (s0 or (0.0, 0))
                s0 = (s0[0] + c1 - c0, s0[1] + n1 - n0)
    tg.off()
    if kind == "jsampled":
        st = daemon.stats()
        result["dropped"] = st["dropped"]
        result["samples"] = st["samples"]
        result["rss_mib"] = daemon.rss_mib()
        if s0 and s0[1]:
            result["cpu_pct_per_1k"] = 100 * s0[0] / (s0[1] / 1000.0) if s0[1] else None
    result["_done"] = True
    result["_windows"] = windows
    return windows


def run_overhead(work, kind, rate, threads, pairs, phase_s, settle_s):
    d = os.path.join(work, f"ovh-{kind}-{rate}-{threads}")
    os.makedirs(d, exist_ok=True)
    daemon = Daemon(d, rate) if kind == "jsampled" else None
    jvm = [JAVA, "-cp", CLASSES]
    if kind == "jsampled":
        jvm += [f"-agentpath:{AGENT}=socket:{daemon.agent_sock}"]
    elif kind == "safepoint":
        jvm += [f"-agentpath:{SPSAMPLER}=out={d}/stacks.txt,hz={rate},ctl={d}/sp.on"]
    elif kind == "perf":
        jvm += ["-XX:+PreserveFramePointer", f"-agentpath:{AGENT}=perfmap,socket:{d}/none.sock"]
    total = 3 + pairs * 2 * phase_s + 2
    jvm += ["GroundTruth", "scimark", str(total), str(threads)]
    out_path = os.path.join(d, "out.txt")
    result = {"kind": kind, "rate": rate, "threads": threads}
    with open(out_path, "w") as out:
        proc = subprocess.Popen(jvm, stdout=out, stderr=subprocess.STDOUT)
        tg = Toggle(kind, rate, proc.pid, d, daemon)
        try:
            windows = overhead_phases(tg, kind, proc, daemon, d, rate, pairs, phase_s, settle_s, result)
        finally:
            tg.off()
            if proc.poll() is None and not windows_done(result):
                proc.kill()
            proc.wait()
            if daemon:
                daemon.stop()
    windows = result.pop("_windows")
    result.pop("_done", None)
    pts = ops_series(out_path)
    on = [throughput(pts, a, b) for s, a, b in windows if s == "on"]
    off = [throughput(pts, a, b) for s, a, b in windows if s == "off"]
    on, off = [x for x in on if x], [x for x in off if x]
    if on and off:
        result["slowdown_pct"] = 100 * (1 - statistics.median(on) / statistics.median(off))
        result["noise_pct"] = 100 * (max(off) - min(off)) / statistics.median(off)
    shutil.rmtree(d, ignore_errors=True)
    return result


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
    for th in sorted(set(r["threads"] for r in ovh)):
        with open(os.path.join(out, f"overhead-{th}.dat"), "w") as f:
            f.write("rate " + " ".join(kinds) + "\n")
            for rate in sorted(set(r["rate"] for r in ovh)):
                row = [str(rate)]
                for k in kinds:
                    m = next((r for r in ovh if r["kind"] == k and r["rate"] == rate and r["threads"] == th), None)
                    row.append(f"{m['slowdown_pct']:.2f}" if m and "slowdown_pct" in m else "NaN")
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
    ths = sorted(set(r["threads"] for r in ovh))
    gnuplot(f"""set terminal pngcairo size 1000,450 font ",10"
set output "overhead.png"
set multiplot layout 1,{len(ths)} title "Slowdown of the workload's throughput, profiler on vs off in the same run"
set logscale x
set xlabel "samples/s per CPU"
set ylabel "slowdown %"
set key top left
set grid
""" + "\n".join(f"""set title "{th} busy thread{'s' if th > 1 else ''}"
plot for [i=2:{len(kinds) + 1}] "overhead-{th}.dat" using 1:i with linespoints title columnheader(i)"""
                  for th in ths) + "\nunset multiplot\n", out)

    md = []
    md.append(f"# jsampled vs JFR, a safepoint sampler and perf — {meta['date']}\n")
    md.append(f"Machine: {meta['machine']}. JDK: {meta['jdk']}. Reproduce: `make bench` "
              f"({meta['minutes']:.1f} min for this run).\n")
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
    md.append("## Overhead (scimark throughput; profiler on vs off, interleaved in one run)\n")
    md.append("Slowdown in % of the throughput with the profiler off (median of "
              f"{meta['pairs']} on- and {meta['pairs']} off-phases of {meta['phase_s']} s). "
              "`null` is the null sampler: the timer interrupts alone. "
              "jsampled − null is what jsampled itself costs. noise = the largest spread "
              "(max − min) / median of the off-phases among the runs of that row: a "
              "difference smaller than it is not a measurement.\n")
    md.append("| threads | rate | " + " | ".join(kinds) + " | jsampled − null | jsampled CPU per 1k samples/s | dropped | noise |")
    md.append("|---|---|" + "---|" * len(kinds) + "---|---|---|---|")
    for th in ths:
        for rate in sorted(set(r["rate"] for r in ovh)):
            row = []
            get = lambda k: next((r for r in ovh if r["kind"] == k and r["rate"] == rate and r["threads"] == th), {})
            for k in kinds:
                v = get(k).get("slowdown_pct")
                row.append("n/a" if v is None else f"{v:.1f}%")
            js, nu = get("jsampled").get("slowdown_pct"), get("null").get("slowdown_pct")
            diff = "n/a" if js is None or nu is None else f"{js - nu:+.1f} pp"
            cpu = get("jsampled").get("cpu_pct_per_1k")
            noise = max((get(k).get("noise_pct") or 0) for k in kinds)
            md.append(f"| {th} | {rate} | " + " | ".join(row) + f" | {diff} | "
                      f"{'n/a' if cpu is None else f'{cpu:.2f}% CPU'} | {get('jsampled').get('dropped', 'n/a')} | "
                      f"{noise:.0f}% |")
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
    ap.add_argument("--pairs", type=int, default=None, help="on/off phase pairs per overhead run")
    ap.add_argument("--report-only", action="store_true", help="rewrite the report from DIR/results.json")
    ap.add_argument("--reuse", action="store_true",
                    help="keep the other part's results from DIR/results.json (with --only)")
    a = ap.parse_args()
    if a.report_only:
        old = json.load(open(os.path.join(a.out, "results.json")))
        write_reports(a.out, old["accuracy"], old["causal"], old["overhead"], old["meta"])
        print(open(os.path.join(a.out, "results.md")).read())
        return
    if os.geteuid() != 0:
        sys.exit("needs root (BPF, perf events)")
    for tool in (JAVA, JFR, JCMD, AGENT, SPSAMPLER, NULL_SAMPLER, os.path.join(B, "jsampled"),
                 shutil.which("perf") or "perf", shutil.which("gnuplot") or "gnuplot"):
        if not os.path.exists(tool):
            sys.exit(f"missing {tool} (run `make bench`, which builds and installs what it needs)")
    started = time.time()
    work = "/tmp/jsampled-bench"
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    os.makedirs(CLASSES, exist_ok=True)
    run([os.path.join(JAVA_HOME, "bin", "javac"), "-d", CLASSES, os.path.join(ROOT, "tests", "bench", "java", "GroundTruth.java")])
    seconds = 3 if a.quick else a.seconds
    pairs, phase_s, settle_s = (2, 2, 0.7) if a.quick else (5, 3, 1.0)
    pairs = a.pairs or pairs
    acc, causal, ovh = [], [], []
    if a.reuse and a.only:
        old = json.load(open(os.path.join(a.out, "results.json")))
        if a.only == "overhead":
            acc, causal = old["accuracy"], old["causal"]
            seconds = old["meta"]["seconds"]
        else:
            ovh = old["overhead"]
    if a.only in (None, "accuracy"):
        daemon = Daemon(work, 1000)
        try:
            wls = ["scimark", "jni"] if a.quick else list(WORKLOADS)
            for w in wls:
                for p in ACCURACY_PROFILERS:
                    m = run_accuracy(work, w, p, seconds, daemon)
                    acc.append({"workload": w, "profiler": p, **(m or {"tvd": None})})
                    log(f"accuracy {w:<10} {p:<12} " + (f"TVD {m['tvd']:.4f}  max {m['max_pp']:.2f} pp  "
                        f"hottest {'tie' if m['hottest_ok'] is None else 'ok' if m['hottest_ok'] else 'WRONG'}  delivered {100 * m['delivered']:.0f}%"
                        if m else "no samples"))
            if not a.quick:
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
    if a.only in (None, "overhead"):
        rates = [1000, 10000] if a.quick else [100, 1000, 10000]
        for th in ([1] if a.quick else [1, NCPU]):
            for rate in rates:
                for kind in ["null", "jsampled", "jfr", "safepoint", "perf"]:
                    if kind == "jfr" and rate > 1000:
                        continue  # JFR's shortest sampling period is 1 ms
                    r = run_overhead(work, kind, rate, th, pairs, phase_s, settle_s)
                    ovh.append(r)
                    log(f"overhead {th} thr {rate:>5} Hz {kind:<9} slowdown "
                        f"{r.get('slowdown_pct', float('nan')):6.2f}%  (off-phase spread "
                        f"{r.get('noise_pct', float('nan')):.1f}%)")
    meta = {"date": time.strftime("%Y-%m-%d %H:%M"), "seconds": seconds, "pairs": pairs, "phase_s": phase_s,
            "machine": f"{NCPU} CPUs, {os.uname().release}",
            "jdk": subprocess.run([JAVA, "-version"], capture_output=True, text=True).stderr.splitlines()[0],
            "minutes": (time.time() - started) / 60}
    write_reports(a.out, acc, causal, ovh, meta)
    log(f"results in {a.out}/results.md ({meta['minutes']:.1f} min)")
    print(open(os.path.join(a.out, "results.md")).read())


if __name__ == "__main__":
    main()
