#!/usr/bin/python3
"""Ground truth for completing deep stacks from a thread's stack image
(daemon/stack_bottoms.c).

Replays a recording twice with build/jsreplay --outcomes: once as recorded
(whole copies: the slow way, the truth) and once with every copy cut to its
top N bytes (--truncate-fragment N), as if jsampled had copied no more. For
every sample the truth decodes completely, the cut replay's trace must be
the same trace, frame for frame (method, kind and bci), or be incomplete;
a completed trace that differs is a wrong completion.

usage: check_completion.py RECORDING [--bytes N]... [--check]
  --check  exit 1 unless completed traces agree with the truth on >= 99.9 %
           of the samples and none of the samples the cut replay calls
           resolved differ from the truth.
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
    for key, (status, _, frames) in truth.items():
        if status != "resolved":
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


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("recording")
    ap.add_argument("--bytes", type=int, action="append", help="cut copies to N bytes (default 4096, 8192, 16384)")
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    truth = outcomes(a.recording)
    ok = True
    print(f"{'cut bytes':>9} {'truth ok':>9} {'fit':>8} {'needed':>8} {'completed':>9} {'agree%':>7} "
          f"{'differ':>6} {'left inc':>8} {'cut resolved, differ':>20}")
    for n in a.bytes or [4096, 8192, 16384]:
        c = compare(truth, outcomes(a.recording, n))
        needed = c["truth_resolved"] - c["cut_in_fragment"] - c["missing"]
        agree = 100.0 * c["agree"] / c["completed"] if c["completed"] else 100.0
        print(f"{n:>9} {c['truth_resolved']:>9} {c['cut_in_fragment']:>8} {needed:>8} {c['completed']:>9} "
              f"{agree:>7.2f} {c['differ']:>6} {c['left_incomplete']:>8} {c['resolved_differ']:>20}")
        if agree < GOAL_AGREE or c["resolved_differ"] or not c["completed"]:
            ok = False
    print("completion: needed = samples the truth resolved that the cut copy alone cannot; "
          "agree% = completed traces equal to the truth")
    if a.check and not ok:
        print(f"check_completion: goal not met (>= {GOAL_AGREE}% agree, no cut trace differing, some completed)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
