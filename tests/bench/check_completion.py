#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Ground truth for completing deep stacks from a thread's stack image
(daemon/decode/stack_bottoms.c).

Replays a recording twice with build/jsreplay --outcomes: once as recorded
(whole copies: the slow way, the truth) and once with every copy cut to its
top N bytes (--truncate-fragment N), as if jsampled had copied no more. For
every sample the truth decodes completely, the cut replay's trace must be
the same trace, frame for frame (method, kind and bci), or be incomplete;
a completed trace that differs is a wrong completion.

usage: check_completion.py RECORDING [--bytes N]... [--check]
       check_completion.py --record DIR [--jdk 17|25]... [--depth N] [--seconds N] [--bytes N]... [--check]
  --record DIR  first records WorkloadRecursion (its deep recursion N frames
           deep, default 1200: stacks a whole 64 KiB copy holds once
           compiled) at 10 kHz with every copy whole (--fragment-bytes
           65536), into DIR, per JDK, then checks those recordings.
  --check  exit 1 unless completed traces agree with the truth on >= 99.9 %
           of the samples, some were completed, and none of the samples the
           cut replay calls resolved differ from the truth.
"""
import argparse
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
JSREPLAY = os.path.join(ROOT, "build", "jsreplay")
GOAL_AGREE = 99.9


def outcomes(recording, cut=None):
    """(tid, time) -> (status, rule, frames) from jsreplay --outcomes."""
    argv = [JSREPLAY, recording, "--outcomes"] + (["--truncate-fragment", str(cut)] if cut else [])
    run = subprocess.run(argv, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"check_completion: {' '.join(argv)} failed: {run.stderr[-2000:]}")
    out = {}
    for line in run.stdout.splitlines():
        head, _, frames = line.partition(" |")
        tid, time, status, rule = head.split()[:4]
        out[(tid, time)] = (status, rule, frames.strip())
    return out


def compare(truth, cut):
    c = dict(truth_resolved=0, cut_in_fragment=0, completed=0, agree=0, differ=0, left_incomplete=0,
             resolved_differ=0, missing=0)
    for key, (status, rule, frames) in truth.items():
        # The truth is what the whole copy decodes by itself.
        if status != "resolved" or rule.endswith("+image"):
            continue
        c["truth_resolved"] += 1
        got = cut.get(key)
        if not got:
            c["missing"] += 1
            continue
        gstatus, grule, gframes = got
        if gstatus == "resolved" and not grule.endswith("+image"):
            c["cut_in_fragment"] += 1
            if gframes != frames:
                c["resolved_differ"] += 1
        elif gstatus == "resolved":
            c["completed"] += 1
            if gframes == frames:
                c["agree"] += 1
            else:
                c["differ"] += 1
        else:
            c["left_incomplete"] += 1
    return c


def record(directory, jdk_name, depth, seconds):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import bench_decode
    os.makedirs(directory, exist_ok=True)
    wl = ("recursion-truth", "WorkloadRecursion", ["1", str(depth)], True)
    r = bench_decode.run_one(jdk_name, bench_decode.JDKS[jdk_name], wl, seconds, 10000, directory,
                             ["--fragment-bytes=65536"])
    print(f"recorded JDK {jdk_name}: {r['samples']} samples, {r['resolved']:.2f}% resolved, "
          f"{r['incomplete']:.2f}% incomplete with whole copies (depth {depth})")
    return os.path.join(directory, f"recursion-truth-jdk{jdk_name}.jsrec")


def check(recording, sizes):
    truth = outcomes(recording)
    ok = True
    print(recording)
    print(f"{'cut bytes':>9} {'truth ok':>9} {'fit':>8} {'needed':>8} {'completed':>9} {'agree%':>7} "
          f"{'differ':>6} {'left inc':>8} {'cut resolved, differ':>20}")
    for n in sizes:
        c = compare(truth, outcomes(recording, n))
        needed = c["truth_resolved"] - c["cut_in_fragment"] - c["missing"]
        agree = 100.0 * c["agree"] / c["completed"] if c["completed"] else 100.0
        print(f"{n:>9} {c['truth_resolved']:>9} {c['cut_in_fragment']:>8} {needed:>8} {c['completed']:>9} "
              f"{agree:>7.2f} {c['differ']:>6} {c['left_incomplete']:>8} {c['resolved_differ']:>20}")
        if agree < GOAL_AGREE or c["resolved_differ"] or not c["completed"]:
            ok = False
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("recording", nargs="?")
    ap.add_argument("--record")
    ap.add_argument("--jdk", action="append")
    ap.add_argument("--depth", type=int, default=1200)
    ap.add_argument("--seconds", type=int, default=8)
    ap.add_argument("--bytes", type=int, action="append", help="cut copies to N bytes (default 4096, 16384)")
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    if bool(a.recording) == bool(a.record):
        ap.error("give a recording or --record DIR")
    recordings = [a.recording] if a.recording else \
        [record(a.record, j, a.depth, a.seconds) for j in (a.jdk or ["17", "25"])]
    ok = all([check(r, a.bytes or [4096, 16384]) for r in recordings])
    print("needed: samples the whole copy resolved by itself that the cut copy alone cannot; "
          "agree%: completed traces equal to the whole copy's")
    if a.check and not ok:
        print(f"check_completion: goal not met (>= {GOAL_AGREE}% agree, some completed, no cut trace differing)")
        return 1
    print("check_completion: " + ("goal met" if ok else "goal NOT met"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
