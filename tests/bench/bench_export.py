#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""bench-export: what the fleet exporter costs per host.

Starts a two-shard ClickHouse test cluster (tests/bench/clickhouse_hold.sh
over tests/integration/clickhouse_cluster.sh), one jsampled with its
production defaults (99 Hz; --attach off, its own sockets in a temporary
directory) and N JVMs (default 50) with the agent: the workloads of
tests/java, one workload per service, services svc-0..svc-(S-1) (default 10,
so 5 JVMs each), small heaps. Then runs `jsamplectl export` to server 1's
Distributed tables (interval_s 15, lag_s 5) for M minutes (default 3) of
profiles: its first interval is set (through its position file) to start
after every JVM is profiled and warmed up, so the exporter runs M minutes
of wall time and exports exactly M minutes of samples.

Measured: the exporter's CPU (user+system from wait4's rusage: exact, every
thread), wall time and peak RSS; the request bodies it sent (gzipped, as on
the wire without HTTP headers) and the rows before compression (its
status.json); then, once the Distributed tables have forwarded everything,
the rows stored in jsampled.samples and jsampled.stacks for this host (as
stored and deduplicated) and the active parts' bytes on disk on both
servers; and jsampled's own CPU over the same minutes. Prints them per
minute and extrapolated to a day. Nothing is asserted beyond the run being
valid: it fails (exit 1, with the reason) if a precondition is missing, a
JVM exits early, or the exporter dropped anything or exported no sample.

usage: bench_export.py [--jvms N] [--services S] [--minutes M] [--warmup S]
                       [--json FILE] [--keep]                       (root)
"""
import argparse
import ctypes
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, "build")
JSAMPLED = os.path.join(BUILD, "jsampled")
JSAMPLECTL = os.path.join(BUILD, "jsamplectl")
AGENT = os.path.join(BUILD, "libjsagent.so")
CLASSES = os.path.join(BUILD, "java")
JAVA = "/usr/lib/jvm/java-17-openjdk-amd64/bin/java"
CH_HOLD = os.path.join(ROOT, "tests", "bench", "clickhouse_hold.sh")
CH_SERVER = "/usr/sbin/clickhouse-server"
CH_CLIENT = "/usr/bin/clickhouse-client"

# One workload per service (a service's replicas run the same code).
WORKLOADS = ["PhasedWorkload", "WorkloadCollections", "WorkloadNumeric", "WorkloadRecursion",
             "WorkloadExceptions"]
JVM_OPTS = ["-Xmx48m", "-Xss512k", "-XX:+UseSerialGC", "-XX:CICompilerCount=2"]
INTERVAL_S = 15
LAG_S = 5
EXPORT_HOST = "bench-export-host"
CLK_TCK = os.sysconf("SC_CLK_TCK")
# ClickHouse on 127.0.0.1: never through an http_proxy of the environment.
HTTP = urllib.request.build_opener(urllib.request.ProxyHandler({}))
PR_SET_PDEATHSIG = 1


class BenchError(Exception):
    pass


class Stopped(Exception):
    pass


def fail(msg):
    raise BenchError(msg)


def die_with_parent(sig):
    """preexec_fn: the child gets sig when this script dies, however it dies."""
    libc = ctypes.CDLL(None, use_errno=True)

    def f():
        libc.prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0)
    return f


def jsampled_cpu_s(sock):
    """jsampled's whole CPU (daemon, native helper, ended render children), from its stats."""
    r = ctl(sock, "stats", "--json", timeout=30)
    if r.returncode != 0:
        return None
    try:
        return float(json.loads(r.stdout)["cpu_s"])
    except (ValueError, KeyError, TypeError):
        return None


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        return state not in ("Z", "X")
    except OSError:
        return False


def ctl(sock, *args, timeout=60):
    return subprocess.run([JSAMPLECTL, "--socket", sock, *args], capture_output=True, text=True,
                          timeout=timeout)


def tail(path, n=30):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError:
        return "(none)\n"


class Bench:
    def __init__(self, args):
        self.args = args
        self.tmp = None
        self.ch = None           # the clickhouse_hold.sh process
        self.ch_http = []        # HTTP ports of servers 1 and 2
        self.daemon = None
        self.jvms = []           # (Popen, service, workload)
        self.exporter = None

    # --- ClickHouse over HTTP ---

    def query(self, server, sql, timeout=60):
        url = f"http://127.0.0.1:{self.ch_http[server - 1]}/?" + urllib.parse.urlencode(
            {"wait_end_of_query": "1"})
        req = urllib.request.Request(url, data=sql.encode(), method="POST")
        try:
            with HTTP.open(req, timeout=timeout) as r:
                return r.read().decode()
        except urllib.error.HTTPError as e:
            fail(f"ClickHouse server {server} answered HTTP {e.code} to {sql!r}: "
                 f"{e.read().decode(errors='replace')[:500]}")
        except OSError as e:
            fail(f"ClickHouse server {server} did not answer {sql!r}: {e}")

    def query_rows(self, server, sql):
        """The result's rows as lists of strings (TabSeparated)."""
        out = self.query(server, sql + " FORMAT TabSeparated")
        return [line.split("\t") for line in out.splitlines() if line]

    # --- setup ---

    def cpu_s(self, otherwise=None):
        """jsampled's CPU so far; its stats count the native helper and render children too."""
        v = jsampled_cpu_s(self.sock)
        if v is not None:
            return v
        if otherwise is not None:
            return otherwise
        fail("jsampled's stats have no cpu_s")

    def preconditions(self):
        if os.geteuid() != 0:
            fail("needs root: jsampled loads a BPF program and opens perf events")
        for path, what in [("/sys/kernel/btf/vmlinux", "kernel BTF"), (JAVA, "the JDK (make deps)"),
                           (JSAMPLED, "jsampled (make)"), (JSAMPLECTL, "jsamplectl (make)"),
                           (AGENT, "the agent (make)"), (os.path.join(CLASSES, ".stamp"),
                                                         "the Java workloads (make java)"),
                           (CH_SERVER, "clickhouse-server (make deps)"),
                           (CH_CLIENT, "clickhouse-client (make deps)"), (CH_HOLD, "clickhouse_hold.sh")]:
            if not os.path.exists(path):
                fail(f"missing {what}: no {path}")
        for w in WORKLOADS:
            if not os.path.exists(os.path.join(CLASSES, w + ".class")):
                fail(f"missing {w}.class in {CLASSES} (make java)")
        if shutil.which("curl") is None:
            fail("curl is not installed (the ClickHouse cluster library needs it)")

    def start_clickhouse(self):
        self.ch = subprocess.Popen([CH_HOLD, os.path.join(self.tmp, "ch")], stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, stderr=open(os.path.join(self.tmp, "ch.err"), "w"),
                                   text=True, preexec_fn=die_with_parent(signal.SIGTERM))
        line = self.ch.stdout.readline().split()
        if len(line) != 5 or line[0] != "ready":
            self.ch.wait(timeout=60)
            self.ch = None
            fail("the ClickHouse cluster did not start:\n" + tail(os.path.join(self.tmp, "ch.err")))
        self.ch_http = [int(line[1]), int(line[2])]
        for s in (1, 2):
            tables = self.query(s, "SELECT name FROM system.tables WHERE database = 'jsampled'").split()
            for t in ("samples", "samples_local", "stacks", "stacks_local"):
                if t not in tables:
                    fail(f"ClickHouse server {s} has no jsampled.{t} (schema not loaded?)")

    def start_daemon(self):
        self.sock = os.path.join(self.tmp, "q.sock")
        self.agent_sock = os.path.join(self.tmp, "agent.sock")
        self.daemon_log = os.path.join(self.tmp, "daemon.log")
        self.daemon = subprocess.Popen(
            [JSAMPLED, "--socket", self.sock, "--agent-socket", self.agent_sock, "--attach", "off"],
            stdin=subprocess.DEVNULL, stdout=open(self.daemon_log, "w"), stderr=subprocess.STDOUT,
            preexec_fn=die_with_parent(signal.SIGTERM))
        deadline = time.time() + 10
        while not os.path.exists(self.sock):
            if self.daemon.poll() is not None:
                fail("jsampled exited at start:\n" + tail(self.daemon_log))
            if time.time() > deadline:
                fail("jsampled did not open its socket within 10 s")
            time.sleep(0.05)

    def start_jvms(self, run_s):
        a = self.args
        for i in range(a.jvms):
            k = i % a.services
            workload = WORKLOADS[k % len(WORKLOADS)]
            service = f"svc-{k}"
            out = open(os.path.join(self.tmp, f"jvm-{i}.log"), "w")
            p = subprocess.Popen(
                [JAVA, f"-agentpath:{AGENT}=socket:{self.agent_sock}", *JVM_OPTS, f"-Djsampled.service={service}",
                 "-cp", CLASSES, workload, str(run_s)],
                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                preexec_fn=die_with_parent(signal.SIGKILL))
            self.jvms.append((p, service, workload))
            time.sleep(0.2)  # a host does not start 50 JVMs in the same instant

    def wait_live(self, timeout):
        want = {p.pid for p, _, _ in self.jvms}
        deadline = time.time() + timeout
        while True:
            self.check_jvms()
            r = ctl(self.sock, "list")
            live = set()
            if r.returncode == 0:
                for line in r.stdout.splitlines():
                    f = line.split()
                    if len(f) >= 2 and f[0].isdigit() and f[1] == "live":
                        live.add(int(f[0]))
            if want <= live:
                return
            if time.time() > deadline:
                fail(f"only {len(want & live)} of {len(want)} JVMs profiled (live) after {timeout} s")
            time.sleep(0.5)

    def check_jvms(self):
        for i, (p, service, workload) in enumerate(self.jvms):
            if p.poll() is not None:
                fail(f"JVM {i} ({workload}, {service}, pid {p.pid}) exited with status {p.returncode}:\n"
                     + tail(os.path.join(self.tmp, f"jvm-{i}.log")))

    # --- the measurement ---

    def run_exporter(self, first_from, intervals):
        state = os.path.join(self.tmp, "export")
        os.makedirs(state, mode=0o750)
        # Where the exporter starts: the first interval, exactly.
        with open(os.path.join(state, "position"), "w") as f:
            f.write(f"next_from={first_from}\nsent=\n")
        conf = os.path.join(self.tmp, "export.conf")
        with open(conf, "w") as f:
            f.write(f"clickhouse_url = http://127.0.0.1:{self.ch_http[0]}\nhost = {EXPORT_HOST}\n"
                    f"state_dir = {state}\ninterval_s = {INTERVAL_S}\nlag_s = {LAG_S}\n")
        os.chmod(conf, 0o600)
        err_path = os.path.join(self.tmp, "export.err")
        d0 = self.cpu_s()
        t0 = time.monotonic()
        self.exporter = subprocess.Popen(
            [JSAMPLECTL, "--socket", self.sock, "export", "--config", conf, "--max-intervals", str(intervals)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=open(err_path, "w"),
            preexec_fn=die_with_parent(signal.SIGTERM))
        pid = self.exporter.pid
        d_last, d_polled = d0, t0
        # Each interval's batch, as it shows in status.json (polled; each
        # interval adds its rows once, then its bodies once pushed).
        status_path = os.path.join(state, "status.json")
        batches = {"rows_bytes": [], "sent_bytes": []}
        seen = {"rows_bytes": 0, "sent_bytes": 0}

        def poll_status():
            try:
                with open(status_path) as f:
                    st = json.load(f)
                now = {"rows_bytes": st["clickhouse_rows_bytes"],
                       "sent_bytes": st["destinations"]["clickhouse"]["sent_bytes"]}
            except (OSError, ValueError, KeyError):
                return
            for k, v in now.items():
                if v != seen[k]:
                    batches[k].append(v - seen[k])
                    seen[k] = v
        limit = t0 + intervals * INTERVAL_S + LAG_S + 120
        while True:
            # wait4 gives the exact CPU and peak RSS of the child once it exits.
            wpid, status, ru = os.wait4(pid, os.WNOHANG)
            if wpid == pid:
                break
            if time.monotonic() - d_polled >= 5:
                d_last, d_polled = self.cpu_s(d_last), time.monotonic()
            poll_status()
            if time.monotonic() > limit:
                fail(f"the exporter did not finish {intervals} intervals in time:\n" + tail(err_path))
            if self.daemon.poll() is not None:
                fail("jsampled exited during the measurement:\n" + tail(self.daemon_log))
            time.sleep(0.2)
        wall = time.monotonic() - t0
        d1 = self.cpu_s(d_last) if alive(self.daemon.pid) else d_last
        self.exporter.returncode = os.waitstatus_to_exitcode(status)
        self.exporter = None
        if os.waitstatus_to_exitcode(status) != 0:
            fail(f"the exporter exited with status {os.waitstatus_to_exitcode(status)}:\n" + tail(err_path))
        poll_status()
        with open(status_path) as f:
            st = json.load(f)
        return {"batches": batches, "wall_s": wall, "cpu_user_s": ru.ru_utime, "cpu_sys_s": ru.ru_stime,
                "max_rss_kib": ru.ru_maxrss, "daemon_cpu_s": d1 - d0, "status": st,
                "log": tail(err_path, 3).strip()}

    def wait_forwarded(self):
        """Until the Distributed tables have sent everything on: the row counts
        through them stable for 5 s."""
        sql = ("SELECT (SELECT count() FROM jsampled.samples), (SELECT count() FROM jsampled.stacks)")
        last, since = None, time.monotonic()
        deadline = time.monotonic() + 120
        while True:
            now = self.query(1, sql).strip()
            if now != last:
                last, since = now, time.monotonic()
            elif time.monotonic() - since >= 5:
                return
            if time.monotonic() > deadline:
                fail("the Distributed tables' row counts did not settle within 120 s")
            time.sleep(0.5)

    def clickhouse_figures(self, first_from, until):
        host = EXPORT_HOST.replace("'", "\\'")
        key = "service, host, time, pid, stack_hash"
        r = self.query_rows(1, f"SELECT count(), uniqExact({key}), sum(count), min(toUInt32(time)), "
                            f"max(toUInt32(time)) FROM jsampled.samples WHERE host = '{host}'")[0]
        samples_rows, samples_unique, samples_sum = int(r[0]), int(r[1]), int(r[2])
        tmin, tmax = int(r[3]), int(r[4])
        exported = int(self.query(1, f"SELECT sum(c) FROM (SELECT any(count) AS c FROM jsampled.samples "
                                     f"WHERE host = '{host}' GROUP BY {key})").strip() or 0)
        # Stacks have no host column: this host is the cluster's only writer.
        r = self.query_rows(1, "SELECT count(), uniqExact(date, stack_hash), avg(length(frames)), "
                               "max(length(frames)) FROM jsampled.stacks")[0]
        stacks_rows, stacks_unique = int(r[0]), int(r[1])
        frames_avg, frames_max = float(r[2]), int(r[3])
        parts = {}
        for s in (1, 2):
            for t, n, rows, disk, comp, uncomp, level in self.query_rows(
                    s, "SELECT table, count(), sum(rows), sum(bytes_on_disk), sum(data_compressed_bytes), "
                       "sum(data_uncompressed_bytes), max(level) FROM system.parts "
                       "WHERE database = 'jsampled' AND active GROUP BY table"):
                p = parts.setdefault(t, {"parts": 0, "rows": 0, "bytes_on_disk": 0, "compressed_bytes": 0,
                                         "uncompressed_bytes": 0, "max_level": 0, "per_server_rows": {}})
                p["parts"] += int(n)
                p["rows"] += int(rows)
                p["bytes_on_disk"] += int(disk)
                p["compressed_bytes"] += int(comp)
                p["uncompressed_bytes"] += int(uncomp)
                p["max_level"] = max(p["max_level"], int(level))
                p["per_server_rows"][str(s)] = int(rows)
        for t in ("samples_local", "stacks_local"):
            if t not in parts:
                fail(f"no active part of jsampled.{t} on either server")
        if tmin != first_from or tmax != until - INTERVAL_S:
            fail(f"ClickHouse holds intervals {tmin}..{tmax}, expected {first_from}..{until - INTERVAL_S}")
        return {"samples_rows": samples_rows, "samples_rows_unique": samples_unique,
                "samples_count_sum": samples_sum, "samples_exported": exported,
                "stacks_rows": stacks_rows, "stacks_rows_unique": stacks_unique,
                "stack_frames_avg": round(frames_avg, 1), "stack_frames_max": frames_max, "parts": parts}

    def jsampled_window_samples(self, first_from, until):
        """jsampled's own sample count over the exported window (all JVMs)."""
        total = 0
        for p, _, _ in self.jvms:
            r = ctl(self.sock, "cct", str(p.pid), "--format", "collapsed", "--from", str(first_from),
                    "--until", str(until))
            if r.returncode != 0:
                return None
            for line in r.stdout.splitlines():
                n = line.rpartition(" ")[2]
                if n.isdigit():
                    total += int(n)
        return total

    def run(self):
        a = self.args
        self.preconditions()
        self.tmp = tempfile.mkdtemp(prefix="jsampled-bench-export.")
        intervals = a.minutes * 60 // INTERVAL_S
        load0 = os.getloadavg()
        print(f"bench-export: {a.jvms} JVMs, {a.services} services, {a.minutes} min "
              f"({intervals} intervals of {INTERVAL_S} s), temporary files in {self.tmp}", flush=True)
        self.start_clickhouse()
        print(f"  ClickHouse 2 shards: http://127.0.0.1:{self.ch_http[0]} (exporter's), "
              f"http://127.0.0.1:{self.ch_http[1]}", flush=True)
        self.start_daemon()
        # JVMs outlive the measurement: start-up, warm-up, alignment, the
        # minutes themselves, and the wait for ClickHouse.
        run_s = 600 + 7 * a.jvms + a.warmup + a.minutes * 60
        t = time.monotonic()
        self.start_jvms(run_s)
        self.wait_live(timeout=120 + 6 * a.jvms)
        t_live = time.time()
        hz = None
        r = ctl(self.sock, "list", "--json")
        if r.returncode == 0:
            for proc in json.loads(r.stdout):
                hz = proc.get("frequency_hz") or hz
        print(f"  {a.jvms} JVMs profiled (live) after {time.monotonic() - t:.0f} s; warming up {a.warmup} s",
              flush=True)
        # The first interval starts after the warm-up, on an interval
        # boundary; the exporter starts lag_s after it, and fetches interval
        # k at first_from + (k+1)*15 + lag_s: M minutes of wall time.
        first_from = -(-int(t_live + a.warmup) // INTERVAL_S) * INTERVAL_S
        until = first_from + intervals * INTERVAL_S
        start_at = first_from + LAG_S + 0.5
        # jsampled's CPU without the exporter: from the middle of the warm-up.
        base_from = t_live + a.warmup / 2
        d_before, t_before, base_set = self.cpu_s(), time.monotonic(), False
        while time.time() < start_at:
            if not base_set and time.time() >= base_from:
                d_before, t_before, base_set = self.cpu_s(), time.monotonic(), True
            self.check_jvms()
            time.sleep(min(1.0, max(0.0, start_at - time.time())))
        daemon_baseline = (self.cpu_s() - d_before) / (time.monotonic() - t_before) * 60
        baseline_s = time.monotonic() - t_before
        print(f"  exporting intervals {first_from}..{until} "
              f"({time.strftime('%H:%M:%S', time.gmtime(first_from))}.."
              f"{time.strftime('%H:%M:%S', time.gmtime(until))} UTC)", flush=True)
        ex = self.run_exporter(first_from, intervals)
        self.check_jvms()
        load1 = os.getloadavg()
        st = ex["status"]
        dest = st.get("destinations", {}).get("clickhouse")
        if dest is None:
            fail("status.json has no clickhouse destination")
        problems = []
        for k in ("dropped", "dropped_samples", "waiting"):
            if dest.get(k):
                problems.append(f"{k} {dest[k]}")
        for k in ("batch_failures", "query_errors", "skipped_windows"):
            if st.get(k):
                problems.append(f"{k} {st[k]}")
        if st.get("windows") != intervals:
            problems.append(f"windows {st.get('windows')} (expected {intervals})")
        if problems:
            fail("the exporter did not export everything: " + ", ".join(problems)
                 + f"; last error: {dest.get('last_error') or st.get('last_error')}")
        own = self.jsampled_window_samples(first_from, until)
        batches = ex["batches"]
        self.wait_forwarded()
        ch = self.clickhouse_figures(first_from, until)
        if ch["samples_exported"] == 0:
            fail("the exporter exported 0 samples")

        m = a.minutes
        cpu = ex["cpu_user_s"] + ex["cpu_sys_s"]
        sp, kp = ch["parts"]["samples_local"], ch["parts"]["stacks_local"]
        fig = {
            "jvms": a.jvms, "services": a.services, "sampling_hz": hz, "minutes": m, "intervals": intervals,
            "interval_s": INTERVAL_S, "lag_s": LAG_S, "cpus": os.cpu_count(),
            "window": [first_from, until],
            "samples_exported": ch["samples_exported"], "jsampled_window_samples": own,
            "profiles": st.get("profiles"), "empty": st.get("empty"),
            "exporter": {
                "wall_s": round(ex["wall_s"], 2), "cpu_user_s": round(ex["cpu_user_s"], 3),
                "cpu_sys_s": round(ex["cpu_sys_s"], 3), "cpu_s": round(cpu, 3),
                "cpu_s_per_min": round(cpu / m, 4), "cpu_pct_of_core": round(cpu / (m * 60) * 100, 3),
                "cpu_pct_of_core_wall": round(cpu / ex["wall_s"] * 100, 3),
                "max_rss_kib": ex["max_rss_kib"],
                "sent_bytes": dest["sent_bytes"], "sent_bytes_per_min": round(dest["sent_bytes"] / m),
                "rows_bytes": st["clickhouse_rows_bytes"],
                "rows_bytes_per_min": round(st["clickhouse_rows_bytes"] / m),
                "requests_sent": dest.get("sent"), "failed": dest.get("failed"), "retried": dest.get("retried"),
                "dropped": dest.get("dropped"),
                "batch_rows_bytes": batches["rows_bytes"], "batch_sent_bytes": batches["sent_bytes"],
            },
            "clickhouse": {
                "samples_rows": ch["samples_rows"], "samples_rows_unique": ch["samples_rows_unique"],
                "stacks_rows": ch["stacks_rows"], "stacks_rows_unique": ch["stacks_rows_unique"],
                "stack_frames_avg": ch["stack_frames_avg"], "stack_frames_max": ch["stack_frames_max"],
                "samples_rows_per_min": round(ch["samples_rows"] / m, 1),
                "stacks_rows_per_min": round(ch["stacks_rows"] / m, 1),
                "samples_rows_per_day": round(ch["samples_rows"] / m * 1440),
                "stacks_rows_per_day_upper_bound": round(ch["stacks_rows"] / m * 1440),
                "parts": ch["parts"],
                "samples_bytes_on_disk_per_day": round(sp["bytes_on_disk"] / m * 1440),
                "stacks_bytes_on_disk_per_day_upper_bound": round(kp["bytes_on_disk"] / m * 1440),
                "bytes_on_disk_per_day_upper_bound": round((sp["bytes_on_disk"] + kp["bytes_on_disk"]) / m * 1440),
                "merged": sp["max_level"] > 0 or kp["max_level"] > 0,
            },
            "jsampled": {"cpu_s": round(ex["daemon_cpu_s"], 3), "cpu_s_per_min": round(ex["daemon_cpu_s"] / m, 3),
                         "cpu_s_per_min_before_export": round(daemon_baseline, 3),
                         "before_export_s": round(baseline_s, 1)},
            "loadavg_start": [round(x, 2) for x in load0], "loadavg_end": [round(x, 2) for x in load1],
        }
        self.report(fig, ex["log"])
        if a.json:
            with open(a.json, "w") as f:
                json.dump(fig, f, indent=1)
                f.write("\n")
            print(f"figures written to {a.json}")

    def report(self, f, log):
        e, c, j = f["exporter"], f["clickhouse"], f["jsampled"]
        m = f["minutes"]
        sp, kp = c["parts"]["samples_local"], c["parts"]["stacks_local"]

        def mib(b):
            return f"{b / 1048576:.2f} MiB"

        def kib(b):
            return f"{b / 1024:.1f} KiB"
        own = f["jsampled_window_samples"]
        print()
        print(f"exporter: {log}")
        print()
        print("=== bench-export: the exporter per host ===")
        print(f"JVMs                       {f['jvms']} ({f['services']} services, one workload each), "
              f"{f['cpus']} CPUs")
        print(f"sampling                   {f['sampling_hz']} Hz (jsampled default)")
        print(f"measured                   {m} min = {f['intervals']} intervals of {f['interval_s']} s "
              f"(lag {f['lag_s']} s); exporter wall {e['wall_s']:.1f} s")
        print(f"samples exported           {f['samples_exported']} ({f['profiles']} process-intervals); "
              f"jsampled's own count for the window: {own if own is not None else '?'}")
        print("exporter")
        print(f"  CPU                      {e['cpu_s']:.3f} s in {m} min (user {e['cpu_user_s']:.3f}, "
              f"sys {e['cpu_sys_s']:.3f}) = {e['cpu_s_per_min']:.3f} CPU-s/min "
              f"= {e['cpu_pct_of_core']:.3f} % of one core")
        print(f"  peak RSS                 {e['max_rss_kib'] / 1024:.1f} MiB")
        print(f"  network (gzipped bodies) {kib(e['sent_bytes_per_min'])}/min ({e['sent_bytes']} B total, "
              f"{e['requests_sent']} batches; HTTP headers not counted) = {mib(e['sent_bytes_per_min'] * 1440)}/day")
        print(f"  rows uncompressed        {kib(e['rows_bytes_per_min'])}/min ({e['rows_bytes']} B total) "
              f"= {mib(e['rows_bytes_per_min'] * 1440)}/day; gzip ratio "
              f"{e['rows_bytes'] / max(1, e['sent_bytes']):.1f}x")
        per_min = 60 // f["interval_s"]
        for what, k in (("uncompressed", "batch_rows_bytes"), ("gzipped", "batch_sent_bytes")):
            b = e[k]
            if b:
                last = b[-per_min:]
                print(f"  per batch, {what:<13} " + " ".join(f"{x / 1024:.0f}" for x in b)
                      + f" KiB; the last minute's rate: {sum(last) / len(last) * per_min / 1024:.1f} KiB/min")
        print(f"  retries                  failed {e['failed']}, retried {e['retried']}, dropped {e['dropped']}")
        print("ClickHouse (this host)")
        print(f"  samples rows             {c['samples_rows']} ({c['samples_rows_unique']} unique) "
              f"= {c['samples_rows_per_min']:.0f}/min = {c['samples_rows_per_day']}/day")
        print(f"  stacks rows              {c['stacks_rows']} ({c['stacks_rows_unique']} unique) "
              f"= {c['stacks_rows_per_min']:.0f}/min; per day at most {c['stacks_rows_per_day_upper_bound']} "
              f"(upper bound: stacks are written once per day each, so they grow sublinearly); "
              f"frames per stack {c['stack_frames_avg']:.0f} on average, {c['stack_frames_max']} at most")
        merged = "merged" if c["merged"] else "not merged yet"
        print(f"  on disk, as stored       samples_local {kib(sp['bytes_on_disk'])} in {sp['parts']} parts, "
              f"stacks_local {kib(kp['bytes_on_disk'])} in {kp['parts']} parts (both servers; "
              f"{merged}: max level {max(sp['max_level'], kp['max_level'])})")
        print(f"  on disk per day          samples {mib(c['samples_bytes_on_disk_per_day'])} "
              f"+ stacks at most {mib(c['stacks_bytes_on_disk_per_day_upper_bound'])} "
              f"= at most {mib(c['bytes_on_disk_per_day_upper_bound'])} (linear from {m} min, parts as stored)")
        print("jsampled (context)")
        print(f"  CPU                      {j['cpu_s']:.2f} s in the {m} min = {j['cpu_s_per_min']:.2f} CPU-s/min "
              f"({j['cpu_s_per_min'] / 60 * 100:.2f} % of one core); {j['cpu_s_per_min_before_export']:.2f} "
              f"CPU-s/min in the {j['before_export_s']:.0f} s before the export started (the difference: "
              f"answering the exporter's queries, roughly)")
        print(f"load average               {' '.join(map(str, f['loadavg_start']))} at start, "
              f"{' '.join(map(str, f['loadavg_end']))} at the end")

    # --- cleanup ---

    def cleanup(self, ok):
        if self.exporter is not None and self.exporter.poll() is None:
            self.exporter.terminate()
            try:
                self.exporter.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.exporter.kill()
                self.exporter.wait()
        for p, _, _ in self.jvms:
            if p.poll() is None:
                p.kill()
        for p, _, _ in self.jvms:
            p.wait()
        if self.daemon is not None and self.daemon.poll() is None:
            self.daemon.send_signal(signal.SIGINT)
            try:
                self.daemon.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.daemon.kill()
                self.daemon.wait()
        if self.ch is not None:
            try:
                self.ch.stdin.close()  # clickhouse_hold.sh stops both servers
                self.ch.wait(timeout=60)
            except (subprocess.TimeoutExpired, OSError):
                self.ch.terminate()
                try:
                    self.ch.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    self.ch.kill()
                    self.ch.wait()
        if self.tmp:
            if self.args.keep:
                print(f"temporary files kept in {self.tmp}", file=sys.stderr)
                return
            if not ok:
                for name in ("export.err", "daemon.log", "ch.err"):
                    path = os.path.join(self.tmp, name)
                    if os.path.exists(path) and os.path.getsize(path):
                        print(f"--- {name} (last lines):\n{tail(path, 15)}", file=sys.stderr, end="")
            shutil.rmtree(self.tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jvms", type=int, default=50, help="JVMs to profile (default 50)")
    ap.add_argument("--services", type=int, default=10, help="services they belong to (default 10)")
    ap.add_argument("--minutes", type=int, default=3, help="minutes of profiles to export (default 3)")
    ap.add_argument("--warmup", type=int, default=30,
                    help="seconds between the last JVM being profiled and the first interval (default 30)")
    ap.add_argument("--json", metavar="FILE", help="write every figure as JSON to FILE")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory (logs, ClickHouse data)")
    a = ap.parse_args()
    if a.jvms < 1 or a.minutes < 1 or a.services < 1 or a.warmup < 0:
        ap.error("--jvms, --minutes and --services must be at least 1, --warmup at least 0")
    a.services = min(a.services, a.jvms)

    def on_signal(sig, frame):
        raise Stopped(signal.Signals(sig).name)
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, on_signal)

    b = Bench(a)
    ok = False
    try:
        b.run()
        ok = True
    except BenchError as e:
        print(f"FAIL [bench-export]: {e}", file=sys.stderr)
    except Stopped as e:
        print(f"bench-export: stopped by {e}", file=sys.stderr)
    finally:
        # A second signal must not interrupt the cleanup.
        for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(s, signal.SIG_IGN)
        b.cleanup(ok)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
