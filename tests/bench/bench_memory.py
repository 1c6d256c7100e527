#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""jsampled's memory against the number of JVMs, their threads, and whether
they run one program or different ones: for each point a fresh jsampled at
its default settings (99 Hz, zero-config attach), N flagless JVMs of T mostly
idle threads started 0.2 s apart, and jsampled's RSS, peak RSS and its own
breakdown (`stats`, group memory) once all are profiled and settled.

  tests/bench/bench_memory.py [--quick] [--settle S] [--out DIR]     (root)

The figure to read is the slope: MiB per JVM past the first, for one
program and for different ones. "Different programs" are generated: each
has its own 300 classes of 10 methods, with their own names and lines
(3,000 methods beside the JDK's that every JVM loads), loaded at start and
called by its threads."""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
B = os.path.join(ROOT, "build")
JAVA_HOME = "/usr/lib/jvm/java-17-openjdk-amd64"
JAVA = os.path.join(JAVA_HOME, "bin", "java")
JAVAC = os.path.join(JAVA_HOME, "bin", "javac")
JVM_FLAGS = ["-Xmx48m", "-Xss256k", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"]
CLASSES, METHODS = 300, 10


def program_source(k):
    """Program k: ManyThreads' threads, each calling into k's own classes."""
    pkg = f"svc{k}"
    files = {}
    for c in range(CLASSES):
        body = "\n".join(
            f"    public static long {pkg}m{m}(long x) {{\n        x = x * {6364136223846793005 + 2 * m + 1}L + {c};\n"
            f"        return (x >>> 7) ^ {m};\n    }}" for m in range(METHODS))
        # Its own names and its own line numbers: nothing like another program's.
        files[f"{pkg}/C{c}.java"] = f"package {pkg};\n{chr(10) * (k % 50)}public class C{c} {{\n{body}\n}}\n"
    calls = "\n".join(f"        x = C{c}.{pkg}m{c % METHODS}(x);" for c in range(CLASSES))
    files[f"{pkg}/Main.java"] = f"""package {pkg};
public class Main {{
    static volatile long sink;
    static long all(long x) {{
{calls}
        return x;
    }}
    public static void main(String[] args) throws Exception {{
        int threads = Integer.parseInt(args[0]);
        long end = System.nanoTime() + (long) (Double.parseDouble(args[1]) * 1e9);
        sink = all(1);
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {{
            final int id = t;
            ts[t] = new Thread(() -> {{
                long x = id;
                try {{
                    while (System.nanoTime() < end) {{
                        x = all(x); // a little work, as ManyThreads' threads do
                        sink = x;
                        Thread.sleep(300 + id % 400);
                    }}
                }} catch (InterruptedException e) {{
                    Thread.currentThread().interrupt();
                }}
            }}, "worker-" + t);
            ts[t].setDaemon(true);
            ts[t].start();
        }}
        for (Thread t : ts) t.join();
    }}
}}
"""
    return files


def build_programs(n, out):
    """Compiles n different programs into out/svc<k>; returns their class path."""
    src = os.path.join(out, "src")
    for k in range(n):
        for path, text in program_source(k).items():
            os.makedirs(os.path.dirname(os.path.join(src, path)), exist_ok=True)
            with open(os.path.join(src, path), "w") as f:
                f.write(text)
    sources = [os.path.join(dp, f) for dp, _, fs in os.walk(src) for f in fs if f.endswith(".java")]
    subprocess.run([JAVAC, "-nowarn", "-d", os.path.join(out, "classes")] + sources, check=True)
    return os.path.join(out, "classes")


def status_kib(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


class Point:
    def __init__(self, jvms, threads, programs, settle, classes):
        self.jvms, self.threads, self.programs, self.settle, self.classes = jvms, threads, programs, settle, classes

    def run(self):
        tmp = tempfile.mkdtemp(prefix="jsampled-bench-memory.")
        sock = os.path.join(tmp, "q.sock")
        daemon = subprocess.Popen(
            [os.path.join(B, "jsampled"), "--socket", sock, "--agent-socket", os.path.join(tmp, "agent.sock"),
             "--agent-path", os.path.join(B, "libjsagent.so"), "--state-dir", os.path.join(tmp, "state"),
             "--attach", "auto"], stdout=open(os.path.join(tmp, "daemon.log"), "w"), stderr=subprocess.STDOUT)
        jvms = []
        try:
            for _ in range(100):
                if os.path.exists(sock):
                    break
                time.sleep(0.1)
            time.sleep(1)
            start_kib = status_kib(daemon.pid, "VmRSS")
            seconds = 600
            for i in range(self.jvms):
                if self.programs == "different":
                    cmd = [JAVA] + JVM_FLAGS + ["-cp", self.classes, f"svc{i}.Main", str(self.threads), str(seconds)]
                else:
                    cmd = [JAVA] + JVM_FLAGS + ["-cp", os.path.join(B, "java"), "ManyThreads", str(self.threads),
                                                str(seconds)]
                jvms.append(subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
                time.sleep(0.2)
            deadline = time.monotonic() + 180
            live = 0
            while time.monotonic() < deadline:
                live = self.live(sock)
                if live >= self.jvms:
                    break
                time.sleep(2)
            time.sleep(self.settle)  # their first batches read, the tables trimmed
            stats = json.loads(self.ctl(sock, "stats", "--json"))
            live = self.live(sock)
            all_kib = status_kib(daemon.pid, "VmRSS")
            peak_kib = status_kib(daemon.pid, "VmHWM")
        finally:
            for j in jvms:
                j.kill()
            for j in jvms:
                j.wait()
            daemon.send_signal(signal.SIGINT)
            try:
                daemon.wait(timeout=30)
            except subprocess.TimeoutExpired:
                daemon.kill()
            shutil.rmtree(tmp, ignore_errors=True)
        m = stats.get("memory", {})
        return {
            "jvms": self.jvms, "threads": self.threads, "programs": self.programs, "live": live,
            "rss_start_mib": start_kib / 1024, "rss_mib": all_kib / 1024, "peak_mib": peak_kib / 1024,
            "ring_rss_mib": m.get("bpf_maps_rss_bytes", 0) / 2**20,
            "models_mib": (m.get("code_maps_bytes", 0) + m.get("methods_bytes", 0) + m.get("threads_bytes", 0)) / 2**20,
            "shared_mib": m.get("shared_names_bytes", 0) / 2**20,
            "shared_charged_mib": m.get("shared_names_charged_bytes", 0) / 2**20,
            "trees_mib": (m.get("trees_bytes", 0) + m.get("event_trees_bytes", 0)) / 2**20,
            "anon_mib": m.get("anon_rss_bytes", 0) / 2**20,
            "unaccounted_mib": m.get("unaccounted_bytes", 0) / 2**20,
            "resolved_pct": stats.get("resolved_pct"), "samples": stats.get("samples"),
        }

    @staticmethod
    def ctl(sock, *args):
        return subprocess.run([os.path.join(B, "jsamplectl"), "--socket", sock] + list(args), capture_output=True,
                              text=True, timeout=60).stdout

    def live(self, sock):
        return sum(1 for line in self.ctl(sock, "list").splitlines()[1:] if line.split()[1:2] == ["live"])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="1, 10 and 20 JVMs only, 20 and 200 threads")
    ap.add_argument("--jvms", type=int, action="append", default=[], help="another point of the JVM axis")
    ap.add_argument("--settle", type=float, default=20, help="seconds after all are profiled (default 20)")
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "bench", "results"))
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("needs root")
    if a.quick:
        jvm_axis, thread_axis, programs_n = [1, 10, 20], [20, 200], 20
    else:
        # 100 JVMs of 200 threads starting saturate a host of 2 CPUs for
        # minutes: the curve stops at 50 there (--jvms adds points).
        jvm_axis, thread_axis, programs_n = [1, 10, 25, 50] + a.jvms, [20, 200, 1000], 50
    work = tempfile.mkdtemp(prefix="jsampled-bench-programs.")
    try:
        classes = build_programs(programs_n, work)
        points = [Point(n, 200, "same", a.settle, classes) for n in jvm_axis]
        points += [Point(10, t, "same", a.settle, classes) for t in thread_axis if t != 200]
        points += [Point(1, 200, "different", a.settle, classes), Point(programs_n, 200, "different", a.settle, classes)]
        rows = []
        print(f"{'JVMs':>5} {'threads':>7} {'programs':>9} {'live':>4} {'RSS@0':>6} {'RSS':>6} {'peak':>6} "
              f"{'ring':>5} {'models':>6} {'shared':>6} {'(alone)':>7} {'trees':>5} {'unacc.':>6}  MiB", flush=True)
        for p in points:
            r = p.run()
            rows.append(r)
            print(f"{r['jvms']:>5} {r['threads']:>7} {r['programs']:>9} {r['live']:>4} {r['rss_start_mib']:>6.1f} "
                  f"{r['rss_mib']:>6.1f} {r['peak_mib']:>6.1f} {r['ring_rss_mib']:>5.1f} {r['models_mib']:>6.1f} "
                  f"{r['shared_mib']:>6.1f} {r['shared_charged_mib']:>7.1f} {r['trees_mib']:>5.1f} "
                  f"{r['unaccounted_mib']:>6.1f}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    def at(n, t=200, prog="same"):
        return next(r for r in rows if r["jvms"] == n and r["threads"] == t and r["programs"] == prog)

    big = 50 if not a.quick else jvm_axis[-1]
    same_slope = (at(big)["rss_mib"] - at(1)["rss_mib"]) / (big - 1)
    diff_slope = (at(programs_n, prog="different")["rss_mib"] - at(1, prog="different")["rss_mib"]) / (programs_n - 1)
    thread_slope = (at(10, thread_axis[-1])["rss_mib"] - at(10, thread_axis[0])["rss_mib"]) / (
        10 * (thread_axis[-1] - thread_axis[0]))
    print()
    print(f"per JVM past the first, one program ({big} JVMs): {same_slope:.2f} MiB")
    print(f"per JVM past the first, different programs ({programs_n} JVMs): {diff_slope:.2f} MiB")
    print(f"per thread (10 JVMs, {thread_axis[0]} to {thread_axis[-1]} threads each): {thread_slope * 1024:.2f} KiB")
    if not a.quick:
        r = at(50)
        print(f"50 JVMs x 200 threads: peak RSS {r['peak_mib']:.1f} MiB, of it the ring buffer's mapping "
              f"{r['ring_rss_mib']:.1f} MiB")
    os.makedirs(a.out, exist_ok=True)
    name = "memory-quick" if a.quick else "memory"
    with open(os.path.join(a.out, name + ".json"), "w") as f:
        json.dump({"rows": rows, "slope_same_mib": same_slope, "slope_different_mib": diff_slope,
                   "slope_thread_kib": thread_slope * 1024}, f, indent=1)


if __name__ == "__main__":
    main()
