#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Checks of test_fleet_clickhouse.sh: what `jsamplectl fleet` reads back
from ClickHouse against what each host's own jsampled reports for the same
window. No figure is hard-coded: every expectation comes from the hosts."""
import argparse
import collections
import json
import os
import re
import subprocess
import sys
import time

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


def run(args, **kw):
    r = subprocess.run(args, capture_output=True, **kw)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({r.returncode}): {r.stderr.decode(errors='replace')[-600:]}")
    return r.stdout


def collapsed(text):
    """FlameGraph folded lines -> {stack: count}."""
    out = collections.Counter()
    for line in text.splitlines():
        stack, _, n = line.rpartition(" ")
        if stack:
            out[stack] += int(n)
    return out


def local_profile(ctl, socket, pids, lo, hi):
    total = collections.Counter()
    for pid in pids:
        total += collapsed(run([ctl, "--socket", socket, "cct", pid, "--format", "collapsed",
                                "--from", str(lo), "--until", str(hi)]).decode())
    return total


def first_interval(log):
    m = re.search(r"intervals of \d+s from (\d+)", open(log).read())
    if not m:
        raise SystemExit(f"{log}: no 'from' line")
    return int(m.group(1))


def fleet(a, *args):
    return run([a.ctl, "fleet", "--clickhouse-url", a.clickhouse, *args])


def fleet_hosts(a, lo, hi, host=None):
    args = ["hosts", "--service", "orders", "--from", str(lo), "--until", str(hi)]
    if host:
        args += ["--host", host]
    out = {}
    for line in fleet(a, *args).decode().splitlines()[1:]:
        f = line.split()
        out[f[0]] = int(f[1])
    return out


def main():
    ap = argparse.ArgumentParser()
    for k in ("ctl", "tmp", "clickhouse", "host-a", "socket-a", "pids-a", "host-b", "socket-b", "pids-b",
              "export-a", "export-b", "status-b"):
        ap.add_argument("--" + k, required=True)
    ap.add_argument("--intervals", type=int, default=10)
    ap.add_argument("--interval-s", type=int, default=5)
    a = ap.parse_args()

    span = a.intervals * a.interval_s
    win = {a.host_a: (first_interval(a.export_a),), a.host_b: (first_interval(a.export_b),)}
    win = {h: (w[0], w[0] + span) for h, w in win.items()}
    expected = {
        a.host_a: local_profile(a.ctl, a.socket_a, a.pids_a.split(","), *win[a.host_a]),
        a.host_b: local_profile(a.ctl, a.socket_b, a.pids_b.split(","), *win[a.host_b]),
    }
    for h in expected:
        print(f"     {h}: window {win[h][0]}..{win[h][1]}, {sum(expected[h].values())} samples in its own jsampled")
        check(sum(expected[h].values()) > 0, f"{h} has samples in its window")

    # Rows sent through the Distributed table to a shard that was down are
    # forwarded by ClickHouse when it is back: wait for them (bounded).
    deadline = time.time() + 120
    while True:
        got = {h: fleet_hosts(a, *win[h], host=h).get(h, 0) for h in expected}
        if all(got[h] == sum(expected[h].values()) for h in expected) or time.time() > deadline:
            break
        time.sleep(2)
    for h in expected:
        check(got[h] == sum(expected[h].values()),
              f"fleet hosts: {h} has {got[h]} samples in ClickHouse, its jsampled {sum(expected[h].values())}")

    # The merged profile over the window both covered, stack by stack.
    lo = max(w[0] for w in win.values())
    hi = min(w[1] for w in win.values())
    check(hi - lo >= 4 * a.interval_s, f"the exporters' windows overlap ({lo}..{hi})")
    want = local_profile(a.ctl, a.socket_a, a.pids_a.split(","), lo, hi) + \
        local_profile(a.ctl, a.socket_b, a.pids_b.split(","), lo, hi)
    # Stack rows may still be on their way to a shard that was down.
    deadline = time.time() + 120
    while True:
        got = collapsed(fleet(a, "cct", "--service", "orders", "--from", str(lo), "--until", str(hi),
                              "--format", "collapsed").decode())
        if got == want or time.time() > deadline:
            break
        time.sleep(2)
    diff = [(s, want[s], got[s]) for s in set(want) | set(got) if want[s] != got[s]]
    check(not diff, f"fleet cct (collapsed) = the sum of both hosts' own profiles: {len(want)} stacks, "
                    f"{sum(want.values())} samples; {len(diff)} differ")
    for s, w, g in sorted(diff, key=lambda d: -abs(d[1] - d[2]))[:5]:
        print(f"     {w} local vs {g} fleet: {s}")
    per_host = fleet_hosts(a, lo, hi)
    check(sum(per_host.values()) == sum(got.values()),
          f"fleet hosts parts {per_host} add up to the merged profile's {sum(got.values())}")

    # Host filter and the stopped shard.
    only_b = collapsed(fleet(a, "cct", "--service", "orders", "--host", a.host_b, "--from", str(lo),
                             "--until", str(hi), "--format", "collapsed").decode())
    check(sum(only_b.values()) == per_host.get(a.host_b, -1), "fleet cct --host selects that host's part")
    st = json.load(open(a.status_b))["destinations"]["clickhouse"]
    print(f"     exporter B (shard 2 stopped 20 s): {st}")
    check(st["failed"] > 0 and st["retried"] > 0, "exporter B saw the stopped shard and retried")
    check(st["dropped"] == 0 and st["waiting"] == 0, "exporter B dropped nothing, left nothing behind")

    # pprof and diff.
    path = os.path.join(a.tmp, "fleet.pb.gz")
    with open(path, "wb") as f:
        f.write(fleet(a, "cct", "--service", "orders", "--from", str(lo), "--until", str(hi), "--format", "pprof"))
    env = dict(os.environ, HOME=a.tmp, GOCACHE=os.path.join(a.tmp, "gocache"))
    raw = subprocess.run(["go", "tool", "pprof", "-raw", path], capture_output=True, text=True, env=env)
    samples = sum(int(m.group(1)) for m in re.finditer(r"^\s+(\d+)(?:\s+\d+)?:\s+[\d ]+$", raw.stdout, re.M))
    check(raw.returncode == 0 and samples == sum(got.values()),
          f"fleet pprof decodes with go tool pprof: {samples} samples {raw.stderr.strip()[:200]}")
    mid = (lo + hi) // 2 // a.interval_s * a.interval_s
    text = fleet(a, "diff", "--service", "orders", "--base", f"{lo}..{mid}", "--target", f"{mid}..{hi}",
                 "--format", "text").decode()
    check(len(text.splitlines()) > 3, f"fleet diff renders ({len(text.splitlines())} lines)")
    html = fleet(a, "diff", "--service", "orders", "--base", f"{lo}..{mid}", "--target", f"{mid}..{hi}").decode()
    check("<html" in html.lower(), "fleet diff html is a page")

    if failures:
        print(f"{len(failures)} fleet checks failed")
        return 1
    print("all fleet checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
