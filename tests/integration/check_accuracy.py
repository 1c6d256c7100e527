#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Compares a CCT (collapsed format) with the CPU time a workload measured
for its own phases, and the samples delivered with the samples expected.

usage: check_accuracy.py COLLAPSED WORKLOAD_OUTPUT SAMPLES EXPECTED_SAMPLES
                         MAX_ERROR_PP MIN_DELIVERED [MAX_TVD]
Exits 1 (with the table) if any phase's share differs by more than
MAX_ERROR_PP percentage points, fewer than MIN_DELIVERED of the expected
samples arrived, or (if given) the total variation distance between the
measured and the profiled phase shares exceeds MAX_TVD."""
import re
import sys


def phase_of(stack, phases):
    for frame in stack.split(";"):
        name = re.sub(r"_\[[a-z0-9]\]$", "", frame)
        method = name.rsplit(".", 1)[-1]
        if method in phases:
            return method
    return None


def main():
    collapsed, output, samples, expected, max_pp, min_delivered = sys.argv[1:7]
    max_tvd = float(sys.argv[7]) if len(sys.argv) > 7 else None
    measured = {}
    for line in open(output):
        parts = line.split()
        if len(parts) == 3 and parts[0] == "phase":
            measured[parts[1]] = int(parts[2])
    if not measured:
        print("the workload printed no phase times")
        return 1
    counted = {p: 0 for p in measured}
    for line in open(collapsed):
        line = line.rstrip("\n")
        if not line:
            continue
        stack, _, count = line.rpartition(" ")
        p = phase_of(stack, measured)
        if p:
            counted[p] += int(count)
    total_cpu = sum(measured.values())
    total_samples = sum(counted.values())
    if total_samples == 0:
        print("no sample was attributed to any phase")
        return 1
    worst = 0.0
    tvd = 0.0
    print(f"{'phase':<14} {'measured %':>10} {'profiled %':>10} {'error pp':>9} {'samples':>8}")
    for p in measured:
        m = 100.0 * measured[p] / total_cpu
        c = 100.0 * counted[p] / total_samples
        worst = max(worst, abs(m - c))
        tvd += abs(m - c) / 200.0
        print(f"{p:<14} {m:>10.2f} {c:>10.2f} {c - m:>+9.2f} {counted[p]:>8}")
    delivered = int(samples) / max(1.0, float(expected))
    print(f"largest error {worst:.2f} pp (limit {max_pp}); "
          f"samples {samples} of {float(expected):.0f} expected = {100 * delivered:.1f}% "
          f"(limit {100 * float(min_delivered):.0f}%)")
    print(f"total variation distance {tvd:.4f}" + (f" (limit {max_tvd})" if max_tvd is not None else ""))
    ok = worst <= float(max_pp) and delivered >= float(min_delivered) and (max_tvd is None or tvd <= max_tvd)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
