#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""A virtual-thread recording's tree in the default view and --view carrier
(cct_view.h): the same samples; by default every [virtual thread] frame is
a root; with the carrier, none is, each sits under its carrier's frames,
and as many samples pass through it.
    check_vthread_views.py JSREPLAY RECORDING NAME"""
import subprocess
import sys

MARK = "[virtual_thread]"


def collapsed(replay, rec, pid, view):
    out = subprocess.run([replay, rec, "--cct", pid, "--format", "collapsed", "--view", view],
                         check=True, capture_output=True, text=True).stdout
    rows = []
    for line in out.splitlines():
        stack, _, count = line.rpartition(" ")
        rows.append((stack.split(";"), int(count)))
    return rows


def main():
    replay, rec, name = sys.argv[1:4]
    stats = subprocess.run([replay, rec, "--stats"], check=True, capture_output=True, text=True).stdout
    pids = [l.split()[1] for l in stats.splitlines() if l.split()[:1] == ["pid"]]
    errors = []
    for pid in pids:
        java, carrier = collapsed(replay, rec, pid, "java"), collapsed(replay, rec, pid, "carrier")
        total = sum(c for _, c in java)
        if total != sum(c for _, c in carrier):
            errors.append(f"pid {pid}: {total} samples in the Java view, {sum(c for _, c in carrier)} with carriers")
        rooted = sum(c for s, c in java if s[0] == MARK)
        misplaced = [s for s, _ in java if MARK in s[1:]]
        under = sum(c for s, c in carrier if MARK in s[1:])
        if any(s[0] == MARK for s, _ in carrier):
            errors.append(f"pid {pid}: --view carrier has a {MARK} root")
        if misplaced:
            errors.append(f"pid {pid}: {MARK} below other frames in the Java view: {';'.join(misplaced[0][:4])}...")
        if rooted != under:
            errors.append(f"pid {pid}: {rooted} samples under the {MARK} root, {under} under carriers")
        print(f"  {name} pid {pid}: {rooted} of {total} samples under {MARK}, the same under their carriers")
        if rooted == 0:
            errors.append(f"pid {pid}: no sample under {MARK}: nothing was tested")
    for e in errors:
        print(f"FAIL {name}: {e}")
    return 1 if errors or not pids else 0


if __name__ == "__main__":
    sys.exit(main())
