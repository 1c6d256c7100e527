#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Compares a replay's outcomes (jsreplay --outcomes) with the expected ones,
sample by sample ("tid time" identifies a sample). A sample expected to
decode must decode to the same trace by the same rule. A sample expected to
fail is a known failure, recorded as such and not as output to preserve:
if it now decodes, or fails for another reason, that is reported, not
failed. Exit 1 on a regression or a changed set of samples.
usage: compare_outcomes.py EXPECTED ACTUAL NAME"""
import sys


def load(path):
    out = {}
    order = []
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            head, _, trace = line.partition(" | ")
            parts = head.split()
            if len(parts) < 4:
                parts = (head + " | ").split()
            key = (parts[0], parts[1])
            out[key] = (parts[2], parts[3], line)
            order.append(key)
    return out, order


def main():
    expected, order = load(sys.argv[1])
    actual, _ = load(sys.argv[2])
    name = sys.argv[3]
    regressions, improved, changed_failure = [], [], []
    if set(expected) != set(actual):
        print(f"FAIL {name}: the replay decoded other samples "
              f"({len(set(expected) - set(actual))} missing, {len(set(actual) - set(expected))} new)")
        return 1
    for key in order:
        e_status, e_outcome, e_line = expected[key]
        a_status, a_outcome, a_line = actual[key]
        if e_line == a_line:
            continue
        if e_status == "failed":
            if a_status == "failed":
                changed_failure.append((e_outcome, a_outcome))
            else:
                improved.append((e_outcome, a_status, a_outcome))
            continue
        regressions.append((e_line, a_line))
    failed = sum(1 for k in order if expected[k][0] == "failed")
    if regressions:
        print(f"FAIL {name}: {len(regressions)} of {len(order)} samples decode differently:")
        for e, a in regressions[:5]:
            print(f"  - {e[:300]}\n  + {a[:300]}")
        return 1
    note = f", {failed} known failures"
    if improved:
        note += f"; {len(improved)} of them now decode ({improved[0][0]} -> {improved[0][1]} {improved[0][2]}, ...): " \
                "review and run check-corpus.sh --update"
    if changed_failure:
        note += f"; {len(changed_failure)} fail for another reason ({changed_failure[0][0]} -> {changed_failure[0][1]})"
    print(f"ok   {name} ({len(order)} samples{note})")
    return 0


sys.exit(main())
