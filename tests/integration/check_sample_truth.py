#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Each sample against the truth: which phase PhasedWorkload's thread was
in at the sample's time (its -Dphased.timeline file: "tl TID NS PHASE",
PHASE -1 when a call ended; nanoTime and the samples' time_ns are both
CLOCK_MONOTONIC) against the phase the decoded trace names (the outermost
phase method in it; `jsreplay REC --traces`).

usage: check_sample_truth.py TIMELINE TRACES MAX_WRONG_PCT MIN_SAMPLES
Prints the confusion table and the commonest wrong top frames; exits 1 if
more than MAX_WRONG_PCT % of the samples taken inside a phase call name
another phase, or fewer than MIN_SAMPLES were taken inside one."""
import bisect
import collections
import re
import sys

NAMES = ["phaseMatrix", "phaseHash", "phaseSort", "phaseRecurse"]
SAMPLE = re.compile(r"sample tid (\d+) time (\d+): ")


def timeline(path):
    calls = collections.defaultdict(list)
    for line in open(path):
        _, tid, ns, phase = line.split()
        calls[int(tid)].append((int(ns), int(phase)))
    for v in calls.values():
        v.sort()
    return calls, {tid: [t for t, _ in v] for tid, v in calls.items()}


def traces(path):
    """(tid, time_ns, frames leaf first) of every sample."""
    cur = None
    for line in open(path):
        m = SAMPLE.match(line)
        if m:
            if cur:
                yield cur
            cur = (int(m.group(1)), int(m.group(2)), [])
        elif cur is not None:
            cur[2].append(line.strip())
    if cur:
        yield cur


def phase_named(frames):
    """The outermost phase method of a leaf-first trace, or None."""
    for f in reversed(frames):
        for i, name in enumerate(NAMES):
            if f.startswith("PhasedWorkload." + name + " "):
                return i
    return None


def main():
    calls, times = timeline(sys.argv[1])
    max_wrong, min_samples = float(sys.argv[3]), int(sys.argv[4])
    table, wrong_tops = collections.Counter(), collections.Counter()
    for tid, t, frames in traces(sys.argv[2]):
        if tid not in calls:
            continue
        i = bisect.bisect_right(times[tid], t) - 1
        if i < 0 or calls[tid][i][1] < 0:
            continue  # before the first call, or between two
        truth, named = calls[tid][i][1], phase_named(frames)
        table[(truth, named)] += 1
        if named is not None and named != truth:
            wrong_tops[(NAMES[truth], NAMES[named], frames[0][:120] if frames else "")] += 1
    inside = sum(table.values())
    wrong = sum(n for (a, b), n in table.items() if b is not None and b != a)
    print(f"{'truth':<13} {'profiled':<13} {'samples':>8}")
    for (a, b), n in sorted(table.items(), key=lambda x: -x[1]):
        print(f"{NAMES[a]:<13} {NAMES[b] if b is not None else '(none)':<13} {n:>8}")
    for (a, b, top), n in wrong_tops.most_common(5):
        print(f"  {n} of {a} named {b}, top frame {top}")
    pct = 100.0 * wrong / inside if inside else 100.0
    print(f"samples inside a phase call {inside} (at least {min_samples}); "
          f"naming another phase {wrong} = {pct:.3f}% (at most {max_wrong}%)")
    return 0 if inside >= min_samples and pct <= max_wrong else 1


if __name__ == "__main__":
    sys.exit(main())
