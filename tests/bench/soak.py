#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""bench-soak: jsampled over a long run with many JVMs and constant churn.

Starts jsampled (the built binary, zero-config attach on, the shipped
deploy/jsampled.conf with --frequency 999, its own sockets and state
directory in a temporary directory), N long-lived JVMs (default 20) running
tests/bench/java/SoakWorkload.java (two threads each, alternating a few ms
of work on two call paths with sleeps: about 3 % of a CPU per JVM), and
every few seconds (default 3) one short JVM of the same program that lives
about 1.5 s and exits: hundreds of JVMs come and go per hour. No JVM gets a
flag: jsampled finds and attaches every one. The JVMs run in a cgroup of
their own (cgroup v2) and jsampled includes only that cgroup
(--include-cgroup), so it leaves the other JVMs of a shared machine alone
(--all-jvms: attach everything, as on a real host).

Every --interval seconds (default 30; 5 for runs under 10 minutes) it
records jsampled's RSS (VmRSS) and what its processes' CCTs and agent
models hold (stats PID; the live processes' trees and their nodes apart,
so a growing tree count tells live trees gaining paths from exited
profiles filling the retention window), open fds (/proc/PID/fd), threads, CPU
seconds (utime+stime) and CPU share over the interval, the depth of the held
queues now (global stats held_bytes, held_samples), processes known (live
and exited), samples so far, drops (the BPF ring buffer full, the held
queues' overflow, out of memory, samples of unknown pids, samples trimmed in
the held queue), attaches, and the JVMs' own CPU share. At the end it prints
the table, the least-squares slope per hour of RSS, fds, held depth and CPU
share over the whole run and over its second half (after warm-up), and the
totals of drops; writes tests/bench/results/soak.json and soak.csv (--out).

Nothing is asserted about the figures. Exit status 1 only if something
broke: jsampled died, a JVM failed (a long-lived JVM exited, a short one
exited non-zero), or no sample arrived at all; the figures are still
printed and written.

usage: soak.py [--duration S] [--jvms N] [--churn-every S] [--interval S]
               [--hz HZ] [--retention-s S] [--daemon PATH] [--out DIR] [--keep]
               [--all-jvms]                                                   (root)
"""
import argparse
import csv
import ctypes
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, "build")
JSAMPLED = os.path.join(BUILD, "jsampled")
JSAMPLECTL = os.path.join(BUILD, "jsamplectl")
AGENT = os.path.join(BUILD, "libjsagent.so")
CONFIG = os.path.join(ROOT, "deploy", "jsampled.conf")
JAVA_HOME = "/usr/lib/jvm/java-17-openjdk-amd64"
JAVA = os.path.join(JAVA_HOME, "bin", "java")
JAVAC = os.path.join(JAVA_HOME, "bin", "javac")
SOURCE = os.path.join(ROOT, "tests", "bench", "java", "SoakWorkload.java")
CLASSES = os.path.join(BUILD, "bench", "soak-classes")
RESULTS = os.path.join(ROOT, "tests", "bench", "results")
CGROUP2 = "/sys/fs/cgroup/unified"  # hybrid hierarchy; /sys/fs/cgroup on pure v2
JVM_OPTS = ["-Xmx48m", "-Xss512k", "-XX:+UseSerialGC", "-XX:CICompilerCount=2"]
# SoakWorkload THREADS BUSY_MS PERIOD_MS: long-lived JVMs about 3 % of a CPU
# each (2 x 3 ms per 200 ms), short ones about 20 % while they live.
LONG_WORK = ["2", "3", "200"]
SHORT_WORK = ["2", "10", "100"]
CLK_TCK = os.sysconf("SC_CLK_TCK")
PR_SET_PDEATHSIG = 1


class SoakError(Exception):
    pass


class Stopped(Exception):
    pass


def fail(msg):
    raise SoakError(msg)


def child_setup(sig, cgroup_procs):
    """preexec_fn: the child gets sig when this script dies, however it
    dies, and joins the soak's cgroup before it execs."""
    libc = ctypes.CDLL(None, use_errno=True)

    def f():
        libc.prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0)
        if cgroup_procs:
            with open(cgroup_procs, "w") as c:
                c.write("0\n")
    return f


def proc_stat(pid):
    """(utime+stime in seconds, state) of a process."""
    with open(f"/proc/{pid}/stat") as f:
        rest = f.read().rsplit(")", 1)[1].split()
    return (int(rest[11]) + int(rest[12])) / CLK_TCK, rest[0]


def proc_status(pid, keys):
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in keys:
                out[k] = int(v.split()[0])
    return out


def tail(path, n=20):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError:
        return "(none)\n"


def slope_per_hour(points):
    """Least-squares slope of (seconds, value) points, per hour; None if
    fewer than 3 points."""
    if len(points) < 3:
        return None
    n = len(points)
    mx = sum(t for t, _ in points) / n
    my = sum(v for _, v in points) / n
    sxx = sum((t - mx) ** 2 for t, _ in points)
    if sxx == 0:
        return None
    return sum((t - mx) * (v - my) for t, v in points) / sxx * 3600


class Soak:
    def __init__(self, a):
        self.a = a
        self.tmp = None
        self.cgroup = None
        self.daemon = None
        self.long = []            # [Popen, index, log path]
        self.short = {}           # pid -> (Popen, seq, log path, started monotonic)
        self.short_seq = 0
        self.short_pids = set()   # every short JVM started
        self.short_seen = set()   # ... that jsampled listed (profiled)
        self.short_ok = 0
        self.failures = []        # what broke, in words
        self.reaped_cpu = 0.0     # CPU seconds of JVMs that exited (wait4)
        self.rows = []
        self.t0 = None
        self.final = {}           # the last global stats
        self.load0 = None
        self.completed = False    # the whole --duration ran
        self.daemon_log = None
        self.daemon_cmd = []

    # --- setup ---

    def preconditions(self):
        if os.geteuid() != 0:
            fail("needs root: jsampled loads a BPF program, opens perf events and attaches to JVMs")
        for path, what in [("/sys/kernel/btf/vmlinux", "kernel BTF"), (JAVA, "the JDK (make deps)"),
                           (JAVAC, "javac (make deps)"), (JSAMPLED, "jsampled (make)"),
                           (JSAMPLECTL, "jsamplectl (make)"), (AGENT, "the agent (make)"),
                           (self.a.daemon, "the jsampled to run (make; make asan)"),
                           (CONFIG, "deploy/jsampled.conf"), (SOURCE, "SoakWorkload.java")]:
            if not os.path.exists(path):
                fail(f"missing {what}: no {path}")

    def compile(self):
        cls = os.path.join(CLASSES, "SoakWorkload.class")
        if os.path.exists(cls) and os.path.getmtime(cls) >= os.path.getmtime(SOURCE):
            return
        os.makedirs(CLASSES, exist_ok=True)
        r = subprocess.run([JAVAC, "-d", CLASSES, SOURCE], capture_output=True, text=True)
        if r.returncode != 0:
            fail("javac SoakWorkload.java failed:\n" + r.stdout + r.stderr)

    def make_cgroup(self):
        """A cgroup v2 of the soak's own for its JVMs; None if there is no
        writable cgroup v2 hierarchy (then jsampled attaches every JVM)."""
        for base in (CGROUP2, "/sys/fs/cgroup"):
            if not os.path.exists(os.path.join(base, "cgroup.procs")) or \
                    not os.path.exists(os.path.join(base, "cgroup.controllers")):
                continue
            path = os.path.join(base, f"jsampled-soak.{os.getpid()}")
            try:
                os.mkdir(path)
            except OSError:
                continue
            self.cgroup = path
            return "/" + os.path.relpath(path, base)
        return None

    def start_daemon(self):
        a = self.a
        self.sock = os.path.join(self.tmp, "q.sock")
        self.daemon_log = os.path.join(self.tmp, "daemon.log")
        state = os.path.join(self.tmp, "state")
        os.makedirs(state, mode=0o750)
        cmd = [a.daemon, "--config", CONFIG, "--socket", self.sock,
               "--agent-socket", os.path.join(self.tmp, "agent.sock"), "--agent-path", AGENT,
               "--state-dir", state, "--frequency", str(a.hz), "--attach", "auto"]
        if a.retention_s is not None:
            cmd += ["--retention-s", str(a.retention_s)]
        cg = None if a.all_jvms else self.make_cgroup()
        if cg:
            cmd += ["--include-cgroup", cg]
        elif not a.all_jvms:
            print("  no writable cgroup v2 hierarchy: jsampled attaches every JVM of this machine", flush=True)
        self.daemon_cmd = cmd
        env = dict(os.environ)
        # An ASan/UBSan build (--daemon build/asan/jsampled): leaks and
        # errors make it exit non-zero at stop, with the report in its log.
        env.setdefault("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0:exitcode=23")
        env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1:exitcode=24")
        self.daemon = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, env=env, stdout=open(self.daemon_log, "w"),
                                       stderr=subprocess.STDOUT,
                                       preexec_fn=child_setup(signal.SIGTERM, None))
        deadline = time.monotonic() + 10
        while not os.path.exists(self.sock):
            if self.daemon.poll() is not None:
                fail("jsampled exited at start:\n" + tail(self.daemon_log))
            if time.monotonic() > deadline:
                fail("jsampled did not open its socket within 10 s")
            time.sleep(0.05)
        # Ready: it answers queries.
        while self.ctl("stats", "--json") is None:
            if time.monotonic() > deadline:
                fail("jsampled did not answer a stats query within 10 s")
            time.sleep(0.1)

    def ctl(self, *args):
        try:
            r = subprocess.run([JSAMPLECTL, "--socket", self.sock, *args], capture_output=True, text=True,
                               timeout=60)
        except subprocess.TimeoutExpired:
            return None
        if r.returncode != 0:
            return None
        try:
            return json.loads(r.stdout)
        except ValueError:
            return None

    def query(self, line):
        """One query on the socket itself (no jsamplectl process): the
        answer's body as JSON, or None."""
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as c:
                c.settimeout(10)
                c.connect(self.sock)
                c.sendall(line.encode() + b"\n")
                got = []
                while True:
                    b = c.recv(65536)
                    if not b:
                        break
                    got.append(b)
        except OSError:
            return None
        head, _, body = b"".join(got).partition(b"\n")
        if head != b"OK":
            return None
        try:
            return json.loads(body)
        except ValueError:
            return None

    def accounted(self, procs):
        """What jsampled counts of its memory, summed over its processes
        ((pid, state) pairs): CCTs (with their time slices), of them the
        live processes' and their nodes, agent models, held samples."""
        cct = cct_live = nodes_live = model = held = 0
        for pid, state in procs:
            st = self.query(f"stats {pid} json")
            if st:
                cct += st.get("cct_bytes", 0)
                if state == "live":
                    cct_live += st.get("cct_bytes", 0)
                    nodes_live += st.get("cct_nodes", 0)
                model += st.get("model_bytes", 0)
                held += st.get("held_bytes", 0)
        return cct, cct_live, nodes_live, model, held

    def spawn(self, seconds, work, log):
        procs = os.path.join(self.cgroup, "cgroup.procs") if self.cgroup else None
        return subprocess.Popen([JAVA, *JVM_OPTS, "-cp", CLASSES, "SoakWorkload", str(seconds), *work],
                                stdin=subprocess.DEVNULL, stdout=open(log, "w"), stderr=subprocess.STDOUT,
                                preexec_fn=child_setup(signal.SIGKILL, procs))

    def start_long(self, i):
        log = os.path.join(self.tmp, f"long-{i}.log")
        # They outlive the run (killed at its end), and end by themselves
        # if everything else fails.
        p = self.spawn(self.a.duration + 600, LONG_WORK, log)
        if i < len(self.long):
            self.long[i] = [p, i, log]
        else:
            self.long.append([p, i, log])

    def start_short(self):
        self.short_seq += 1
        log = os.path.join(self.tmp, f"short-{self.short_seq}.log")
        p = self.spawn(self.a.churn_life, SHORT_WORK, log)
        self.short[p.pid] = (p, self.short_seq, log, time.monotonic())
        self.short_pids.add(p.pid)

    # --- children ---

    def reap(self, p):
        """wait4 without blocking: the exit status, or None if running. Adds
        its CPU time to reaped_cpu."""
        if p.returncode is not None:
            return p.returncode
        try:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        except ChildProcessError:
            p.returncode = -1
            return p.returncode
        if pid == 0:
            return None
        self.reaped_cpu += ru.ru_utime + ru.ru_stime
        p.returncode = os.waitstatus_to_exitcode(status)
        return p.returncode

    def check_children(self):
        if self.daemon.poll() is not None:
            fail(f"jsampled exited with status {self.daemon.returncode} at "
                 f"t={time.monotonic() - self.t0:.0f} s:\n" + tail(self.daemon_log))
        t = time.monotonic() - self.t0
        for pid, (p, seq, log, started) in list(self.short.items()):
            rc = self.reap(p)
            if rc is None:
                if time.monotonic() - started > self.a.churn_life + 60:
                    self.failures.append(f"short JVM #{seq} (pid {pid}) still running after "
                                         f"{time.monotonic() - started:.0f} s: killed")
                    p.kill()
                continue
            del self.short[pid]
            if rc == 0:
                self.short_ok += 1
                os.unlink(log)
            else:
                self.failures.append(f"short JVM #{seq} (pid {pid}) exited with status {rc} at t={t:.0f} s "
                                     f"(log {log}):\n{tail(log, 10)}")
        for entry in self.long:
            p, i, log = entry
            rc = self.reap(p)
            if rc is not None:
                self.failures.append(f"long-lived JVM {i} (pid {p.pid}) exited with status {rc} at t={t:.0f} s "
                                     f"(log {log}):\n{tail(log, 10)}")
                os.rename(log, log + f".{p.pid}")
                self.start_long(i)  # the soak goes on with N live JVMs

    def jvm_cpu_total(self):
        total = self.reaped_cpu
        for p in [e[0] for e in self.long] + [v[0] for v in self.short.values()]:
            if p.returncode is None:
                try:
                    total += proc_stat(p.pid)[0]
                except OSError:
                    pass  # exited just now: counted once reaped
        return total

    # --- the measurement ---

    def sample(self, last):
        now = time.monotonic()
        pid = self.daemon.pid
        try:
            cpu, _ = proc_stat(pid)
            st = proc_status(pid, ("VmRSS", "VmHWM", "Threads"))
            fds = len(os.listdir(f"/proc/{pid}/fd"))
        except OSError:
            self.check_children()
            raise
        s = self.ctl("stats", "--json") or {}
        lst = self.ctl("list", "--json")
        bpf, disc, dmn = s.get("bpf", {}), s.get("discovery", {}), s.get("daemon", {})
        states = [x.get("state") for x in lst] if isinstance(lst, list) else []
        if isinstance(lst, list):
            self.short_seen |= self.short_pids & {x.get("pid") for x in lst}
        jvm_cpu = self.jvm_cpu_total()
        cct, cct_live, nodes_live, model, held = self.accounted(
            [(x.get("pid"), x.get("state")) for x in lst] if isinstance(lst, list) else [])
        rss = st.get("VmRSS", 0)
        row = {
            "t_s": round(now - self.t0, 1),
            "rss_kib": rss, "hwm_kib": st.get("VmHWM", 0), "fds": fds,
            "threads": st.get("Threads", 0), "cpu_s": round(cpu, 2),
            "processes": s.get("processes"), "live": states.count("live"),
            "exited": len(states) - states.count("live"),
            # Per process, summed: CCTs, models. What nothing accounts for is
            # jsampled's own figure (stats, group memory): its anonymous
            # memory less what its structures count and malloc keeps free
            # (the ring buffer, its program and libraries are apart).
            "cct_kib": cct // 1024, "cct_live_kib": cct_live // 1024, "cct_nodes_live": nodes_live,
            "model_kib": model // 1024,
            "unaccounted_kib": s.get("memory", {}).get("unaccounted_bytes", 0) // 1024,
            "held_bytes": s.get("held_bytes"), "held_samples": s.get("held_samples"),
            "samples": s.get("samples"), "resolved_pct": s.get("resolved_pct"),
            "dropped": s.get("dropped"), "dropped_queue_full": s.get("dropped_queue_full"),
            "dropped_no_memory": s.get("dropped_no_memory"), "held_trimmed": s.get("held_trimmed"),
            "ringbuf_full": bpf.get("ringbuf_full"), "unknown_pid_samples": s.get("unknown_pid_samples"),
            "jvms_found": disc.get("jvms_found"), "attached": disc.get("attached"),
            "attach_failed": disc.get("attach_failed"), "attach_timeouts": disc.get("attach_timeouts"),
            "had_agent": disc.get("had_agent"), "agents_accepted": dmn.get("agents_accepted"),
            # Sampled from the exec before the agent (absent in older builds).
            "startup_sampled": disc.get("startup_sampled"), "startup_attached": disc.get("startup_attached"),
            "startup_not_attached": disc.get("startup_not_attached"),
            "processes_evicted": dmn.get("processes_evicted"),
            "processes_refused_limit": dmn.get("processes_refused_limit"),
            "state_saves": dmn.get("state_saves"), "state_save_errors": dmn.get("state_save_errors"),
            "short_started": self.short_seq, "short_ok": self.short_ok, "short_profiled": len(self.short_seen),
            "jvm_cpu_s": round(jvm_cpu, 2), "stats_ok": bool(s),
        }
        if last is None:
            row["cpu_pct"] = row["jvm_cpu_pct"] = row["samples_per_s"] = None
        else:
            dt = row["t_s"] - last["t_s"]
            row["cpu_pct"] = round((cpu - last["cpu_s"]) / dt * 100, 2)
            row["jvm_cpu_pct"] = round((jvm_cpu - last["jvm_cpu_s"]) / dt * 100, 1)
            row["samples_per_s"] = (round((row["samples"] - last["samples"]) / dt)
                                    if row["samples"] is not None and last["samples"] is not None else None)
        self.rows.append(row)
        self.print_row(row)
        return row

    HEADER = (f"{'t_s':>6} {'rss_MiB':>8} {'cct':>6} {'model':>6} {'other':>6} {'fds':>5} {'thr':>4} {'cpu_%':>6} {'held_KiB':>8} {'held_n':>6} "
              f"{'procs':>5} {'live':>4} {'samples':>10} {'smp/s':>6} {'drops':>6} {'ring':>5} {'trim':>5} "
              f"{'attach':>6} {'short':>5} {'jvm_%':>6}")

    def print_row(self, r):
        def n(v, w, f="{}"):
            return (f.format(v) if v is not None else "?").rjust(w)
        print(f"{r['t_s']:>6.0f} {r['rss_kib'] / 1024:>8.1f} {r['cct_kib'] / 1024:>6.1f} "
              f"{r['model_kib'] / 1024:>6.1f} {r['unaccounted_kib'] / 1024:>6.1f} {r['fds']:>5} {r['threads']:>4} "
              f"{n(r['cpu_pct'], 6, '{:.2f}')} {n(r['held_bytes'] / 1024 if r['held_bytes'] is not None else None, 8, '{:.1f}')} "
              f"{n(r['held_samples'], 6)} {n(r['processes'], 5)} {r['live']:>4} {n(r['samples'], 10)} "
              f"{n(r['samples_per_s'], 6)} {n(r['dropped'], 6)} {n(r['ringbuf_full'], 5)} "
              f"{n(r['held_trimmed'], 5)} {n(r['attached'], 6)} {r['short_started']:>5} "
              f"{n(r['jvm_cpu_pct'], 6, '{:.1f}')}", flush=True)

    def run(self):
        a = self.a
        self.preconditions()
        self.compile()
        self.tmp = tempfile.mkdtemp(prefix="jsampled-soak.")
        os.chmod(self.tmp, 0o755)
        self.load0 = os.getloadavg()
        print(f"bench-soak: {a.duration} s at {a.hz} Hz, {a.jvms} long-lived JVMs, one short JVM "
              f"(~{a.churn_life} s of work) every {a.churn_every} s, a row every {a.interval} s; "
              f"temporary files in {self.tmp}", flush=True)
        self.start_daemon()
        print(f"  jsampled pid {self.daemon.pid}: {' '.join(self.daemon_cmd[1:])}", flush=True)
        for i in range(a.jvms):
            self.start_long(i)
            time.sleep(0.2)  # a host does not start its JVMs in the same instant
        self.t0 = time.monotonic()
        print(f"  {a.jvms} long-lived JVMs started; churn from now on. Columns: jsampled's RSS (MiB), of it its processes' CCTs "
              f"and agent models as it counts them, and what nothing in jsampled accounts for (stats: memory unaccounted_bytes); fds, threads, "
              f"CPU % of one CPU over the interval; held queues now (KiB, samples); processes known, live; "
              f"samples so far and per s; drops (all), ring buffer full, held samples trimmed; JVMs attached; "
              f"short JVMs started; the JVMs' CPU % over the interval", flush=True)
        print(self.HEADER, flush=True)
        last = self.sample(None)
        next_row = self.t0 + a.interval
        next_churn = self.t0 + a.churn_every
        end = self.t0 + a.duration
        while True:
            now = time.monotonic()
            if now >= next_churn and now < end:
                self.start_short()
                next_churn += a.churn_every
                if next_churn < now:
                    next_churn = now + a.churn_every
            self.check_children()
            if now >= next_row:
                last = self.sample(last)
                next_row += a.interval
                if now >= end - 0.5:
                    break
            time.sleep(max(0.0, min(0.25, next_churn - time.monotonic(), next_row - time.monotonic())))
        self.final = self.ctl("stats", "--json") or {}
        self.completed = True
        self.report()

    # --- the report ---

    def report(self):
        a, rows = self.a, self.rows
        half = a.duration / 2
        second = [r for r in rows if r["t_s"] >= half]
        series = {
            "rss_mib": lambda r: r["rss_kib"] / 1024,
            "cct_mib": lambda r: r["cct_kib"] / 1024,
            "cct_live_mib": lambda r: r["cct_live_kib"] / 1024,
            "cct_nodes_live": lambda r: r["cct_nodes_live"],
            "model_mib": lambda r: r["model_kib"] / 1024,
            "unaccounted_mib": lambda r: r["unaccounted_kib"] / 1024,
            "fds": lambda r: r["fds"],
            "threads": lambda r: r["threads"],
            "held_kib": lambda r: r["held_bytes"] / 1024 if r["held_bytes"] is not None else None,
            "held_samples": lambda r: r["held_samples"],
            "cpu_pct": lambda r: r["cpu_pct"],
            "processes": lambda r: r["processes"],
        }
        slopes = {}
        for k, f in series.items():
            slopes[k] = {}
            for name, rs in (("whole", rows), ("second_half", second)):
                pts = [(r["t_s"], f(r)) for r in rs if f(r) is not None]
                vals = [v for _, v in pts]
                slopes[k][name] = {
                    "slope_per_h": slope_per_hour(pts),
                    "first": vals[0] if vals else None, "last": vals[-1] if vals else None,
                    "min": min(vals) if vals else None, "max": max(vals) if vals else None,
                    "mean": sum(vals) / len(vals) if vals else None, "points": len(vals),
                }
        fin = self.final
        last = rows[-1]
        drops = {k: fin.get(k, last.get(k)) for k in
                 ("dropped", "dropped_queue_full", "dropped_no_memory", "unknown_pid_samples", "held_trimmed")}
        drops["ringbuf_full"] = fin.get("bpf", {}).get("ringbuf_full", last.get("ringbuf_full"))
        self.summary = {
            "completed": self.completed, "measured_s": rows[-1]["t_s"],
            "duration_s": a.duration, "hz": a.hz, "jvms": a.jvms, "churn_every_s": a.churn_every,
            "churn_life_s": a.churn_life, "interval_s": a.interval, "retention_s": a.retention_s,
            "cpus": os.cpu_count(), "second_half_from_s": half, "daemon_cmd": self.daemon_cmd,
            "samples": fin.get("samples", last["samples"]), "resolved_pct": fin.get("resolved_pct"),
            "drops": drops, "short_started": self.short_seq, "short_ok": self.short_ok,
            "short_profiled": len(self.short_seen),
            "attached": fin.get("discovery", {}).get("attached"),
            "attach_failed": fin.get("discovery", {}).get("attach_failed"),
            "attach_timeouts": fin.get("discovery", {}).get("attach_timeouts"),
            "jvms_found": fin.get("discovery", {}).get("jvms_found"),
            "had_agent": fin.get("discovery", {}).get("had_agent"),
            "agents_accepted": fin.get("daemon", {}).get("agents_accepted"),
            "startup_sampled": fin.get("discovery", {}).get("startup_sampled"),
            "startup_attached": fin.get("discovery", {}).get("startup_attached"),
            "startup_not_attached": fin.get("discovery", {}).get("startup_not_attached"),
            "processes_evicted": fin.get("daemon", {}).get("processes_evicted"),
            "state_saves": fin.get("daemon", {}).get("state_saves"),
            "state_save_errors": fin.get("daemon", {}).get("state_save_errors"),
            "rss_hwm_mib": round(last["hwm_kib"] / 1024, 1),
            "jsampled_cpu_s": last["cpu_s"],
            "loadavg_start": [round(x, 2) for x in self.load0 or ()],
            "loadavg_end": [round(x, 2) for x in os.getloadavg()],
            "slopes": slopes, "failures": self.failures,
            "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        S = self.summary
        print()
        print(f"=== bench-soak: {a.duration} s at {a.hz} Hz, {a.jvms} long-lived JVMs, "
              f"a short JVM every {a.churn_every} s ({S['short_started']} started, {S['short_ok']} exited 0) ===")
        print(f"slopes: least squares per hour, over the whole run ({len(rows)} rows) and over its second half "
              f"(t >= {half:.0f} s, after warm-up: {len(second)} rows)")
        units = {"rss_mib": "MiB", "cct_mib": "MiB", "cct_live_mib": "MiB", "cct_nodes_live": "nodes",
                 "model_mib": "MiB", "unaccounted_mib": "MiB", "fds": "fds", "threads": "threads", "held_kib": "KiB",
                 "held_samples": "samples", "cpu_pct": "% of a CPU", "processes": "processes"}

        def fmt(v, d=2):
            return "?" if v is None else f"{v:+.{d}f}"

        def num(v, d=1):
            return "?" if v is None else f"{v:.{d}f}"
        print(f"  {'':<13} {'whole run /h':>14} {'second half /h':>15}   second half: first -> last (min..max, mean)")
        for k, u in units.items():
            w, h = slopes[k]["whole"], slopes[k]["second_half"]
            print(f"  {k:<13} {fmt(w['slope_per_h']):>14} {fmt(h['slope_per_h']):>15}   "
                  f"{num(h['first'])} -> {num(h['last'])} ({num(h['min'])}..{num(h['max'])}, "
                  f"mean {num(h['mean'])}) {u}")
        print(f"samples {S['samples']}, resolved {num(S['resolved_pct'], 2)} %; jsampled CPU {S['jsampled_cpu_s']} s; "
              f"peak RSS (VmHWM) {S['rss_hwm_mib']} MiB")
        d = S["drops"]
        print(f"drops: dropped {d['dropped']} (ring buffer full {d['ringbuf_full']}, held queue full "
              f"{d['dropped_queue_full']}, no memory {d['dropped_no_memory']}, unknown pid "
              f"{d['unknown_pid_samples']}); held samples trimmed {d['held_trimmed']}")
        print(f"short JVMs: {S['short_started']} started, {S['short_ok']} exited 0, {S['short_profiled']} seen "
              f"in jsampled's process list at some row")
        print(f"discovery (every JVM of the machine it saw): found {S['jvms_found']}, attached {S['attached']}, attach failed {S['attach_failed']}, "
              f"timeouts {S['attach_timeouts']}, had an agent already {S['had_agent']}, agents accepted "
              f"{S['agents_accepted']}; processes evicted {S['processes_evicted']}; state saves {S['state_saves']} "
              f"({S['state_save_errors']} errors)")
        if S["startup_sampled"] is not None:
            print(f"sampled from the exec: {S['startup_sampled']} JVMs, then attached {S['startup_attached']}, "
                  f"not attached {S['startup_not_attached']} (their held samples settled without an agent)")
        print(f"load average {' '.join(map(str, S['loadavg_start']))} at start, "
              f"{' '.join(map(str, S['loadavg_end']))} at the end ({S['cpus']} CPUs)")
        if not any(r["samples"] for r in rows if r["samples"] is not None):
            self.failures.append("no samples at all")
        for f in self.failures:
            print(f"BROKEN: {f}", file=sys.stderr)
        self.write_results()

    def write_results(self):
        out = self.a.out
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "soak.json"), "w") as f:
            json.dump({"summary": self.summary, "rows": self.rows}, f, indent=1)
            f.write("\n")
        with open(os.path.join(out, "soak.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(self.rows[0].keys()))
            w.writeheader()
            w.writerows(self.rows)
        print(f"results: {os.path.join(out, 'soak.json')}, {os.path.join(out, 'soak.csv')}")

    # --- cleanup ---

    def cleanup(self, ok):
        kids = [e[0] for e in self.long] + [v[0] for v in self.short.values()]
        for p in kids:
            if p.returncode is None:
                try:
                    p.kill()
                except OSError:
                    pass
        for p in kids:
            if p.returncode is None:
                try:
                    p.wait(timeout=30)
                except (subprocess.TimeoutExpired, ChildProcessError):
                    pass
        if self.daemon is not None and self.daemon.poll() is None:
            self.daemon.send_signal(signal.SIGINT)
            try:
                self.daemon.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.daemon.kill()
                self.daemon.wait()
            if self.daemon.returncode != 0:
                print(f"BROKEN: jsampled exited with status {self.daemon.returncode} at stop", file=sys.stderr)
                ok = False
            report = [line for line in tail(self.daemon_log, 400).splitlines()
                      if "Sanitizer" in line or "runtime error:" in line or line.startswith("SUMMARY")]
            if report:
                print("BROKEN: sanitizer report in the daemon log:\n  " + "\n  ".join(report[:20]), file=sys.stderr)
                ok = False
        if self.cgroup:
            for _ in range(50):
                try:
                    os.rmdir(self.cgroup)
                    break
                except OSError:
                    time.sleep(0.1)
            else:
                print(f"could not remove the cgroup {self.cgroup}", file=sys.stderr)
        if self.tmp:
            if self.a.keep or not ok:
                if not ok:
                    print(f"--- daemon.log (last lines):\n{tail(self.daemon_log, 15)}", file=sys.stderr, end="")
                print(f"temporary files kept in {self.tmp}", file=sys.stderr)
            else:
                shutil.rmtree(self.tmp, ignore_errors=True)
        return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", type=int, default=3600, help="seconds of soak (default 3600)")
    ap.add_argument("--jvms", type=int, default=20, help="long-lived JVMs (default 20)")
    ap.add_argument("--churn-every", type=float, default=3.0,
                    help="start a short JVM every this many seconds (default 3; 0: none)")
    ap.add_argument("--churn-life", type=float, default=1.2,
                    help="seconds of work of a short JVM (plus its start-up; default 1.2)")
    ap.add_argument("--interval", type=float, default=None,
                    help="seconds between rows (default 30; 5 for runs under 10 minutes)")
    ap.add_argument("--hz", type=int, default=999, help="sampling frequency (default 999)")
    ap.add_argument("--retention-s", type=int, default=None,
                    help="jsampled's --retention-s (default: deploy/jsampled.conf's)")
    ap.add_argument("--daemon", default=JSAMPLED,
                    help="the jsampled binary (default build/jsampled; build/asan/jsampled finds leaks at stop)")
    ap.add_argument("--all-jvms", action="store_true",
                    help="let jsampled attach every JVM of the machine (no cgroup filter)")
    ap.add_argument("--out", default=RESULTS, help=f"directory for soak.json and soak.csv (default {RESULTS})")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory (logs, state)")
    a = ap.parse_args()
    if a.interval is None:
        a.interval = 30.0 if a.duration >= 600 else 5.0
    if a.duration < 3 * a.interval or a.jvms < 0 or a.interval <= 0 or a.churn_every < 0 or a.churn_life <= 0:
        ap.error("--duration must cover at least 3 intervals; --jvms >= 0, --interval > 0, --churn-life > 0")
    if a.churn_every == 0:
        a.churn_every = float("inf")

    def on_signal(sig, frame):
        raise Stopped(signal.Signals(sig).name)
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, on_signal)

    s = Soak(a)
    ok = False
    try:
        s.run()
        ok = not s.failures
    except (SoakError, Stopped) as e:
        if isinstance(e, Stopped):
            print(f"bench-soak: stopped by {e}", file=sys.stderr)
        else:
            print(f"FAIL [bench-soak]: {e}", file=sys.stderr)
        if len(s.rows) >= 2:  # what was measured until then
            try:
                if not s.final and s.daemon is not None and s.daemon.poll() is None:
                    s.final = s.ctl("stats", "--json") or {}
                s.report()
            except Exception as r:  # the report of a broken run must not hide why it broke
                print(f"(no report: {r!r})", file=sys.stderr)
    finally:
        # A second signal must not interrupt the cleanup.
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)
        ok = s.cleanup(ok)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
