#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Allocation and lock profiles against their programs' own truth.

usage: check_event_truth.py KIND TRUTH PROFILE [MAX_TVD]

KIND is alloc (TRUTH is WorkloadAllocations's output: "site NAME BYTES
OBJECTS" per site) or lock (WorkloadLocks's: "site NAME WAIT_NS
ACQUISITIONS"). PROFILE is either `go tool pprof -raw` of the profile
(both of its values are checked: alloc_space and alloc_objects, or delay
and contentions) or a collapsed profile whose counts are bytes or
nanoseconds (jsampled's, or async-profiler's with --total). A stack
belongs to the outermost site method on it.

Checks, each printed with its figures:
 - the sites' shares of the bytes (alloc) or of the wait time (lock)
   within MAX_TVD (default 0.03) by total variation distance, and the
   profile's total within 25 % of the truth's;
 - alloc, from pprof: the sites' shares of the objects within MAX_TVD;
 - lock, from pprof: every site has contentions.
"""
import re
import sys

SITE = re.compile(r"Workload(?:Allocations|Locks)\.(site[A-Za-z]+)(?:_\[.\])?$")


def read_truth(path):
    sites = {}
    with open(path) as f:
        for line in f:
            w = line.split()
            if len(w) == 4 and w[0] == "site":
                sites[w[1]] = (int(w[2]), int(w[3]))
    if not sites:
        sys.exit(f"{path}: no truth (site lines)")
    return sites


def site_of(frames):
    """The outermost site on a stack (frames root first)."""
    for fr in frames:
        m = SITE.search(fr)
        if m:
            return m.group(1)
    return None


def read_collapsed(path):
    per = {}
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            stack, _, count = line.rpartition(" ")
            s = site_of(stack.split(";"))
            per[s] = per.get(s, 0) + int(count)
    return [per], ["collapsed"]


def read_pprof_raw(path):
    """Per sample value index: site -> total; and the value names."""
    names, samples, locs = [], [], {}
    with open(path) as f:
        text = f.read().split("\n")
    i = 0
    while i < len(text) and text[i] != "Samples:":
        i += 1
    names = [t.split("/")[0] for t in text[i + 1].replace("[dflt]", "").split()]
    i += 2
    while i < len(text) and text[i] != "Locations":
        m = re.match(r"\s*([\d\s]+):\s*([\d\s]*)$", text[i])
        if m:
            samples.append(([int(v) for v in m.group(1).split()], [int(v) for v in m.group(2).split()]))
        i += 1
    loc = None
    for line in text[i + 1:]:
        m = re.match(r"\s*(\d+): 0x[0-9a-f]+ M=\d+ (\S+)", line)
        if m:
            loc = int(m.group(1))
            locs[loc] = [m.group(2)]
            continue
        m = re.match(r"\s+(\S+) \S+:\d+ s=", line)  # an inlined function of the same location
        if m and loc is not None:
            locs[loc].append(m.group(1))
        elif not line.startswith(" "):
            loc = None
    per = [{} for _ in names]
    for values, ids in samples:
        frames = []
        for lid in reversed(ids):  # root first
            frames.extend(reversed(locs.get(lid, [])))
        s = site_of(frames)
        for k, v in enumerate(values):
            per[k][s] = per[k].get(s, 0) + v
    return per, names


def tvd(truth, prof, sites):
    tt = sum(truth.values()) or 1
    tp = sum(prof.get(s, 0) for s in sites) or 1
    return 0.5 * sum(abs(truth[s] / tt - prof.get(s, 0) / tp) for s in sites)


def main():
    kind, truth_path, prof_path = sys.argv[1], sys.argv[2], sys.argv[3]
    max_tvd = float(sys.argv[4]) if len(sys.argv) > 4 else 0.03
    truth = read_truth(truth_path)
    sites = sorted(truth)
    with open(prof_path) as f:
        head = f.read(4096)
    per, names = read_pprof_raw(prof_path) if "Samples:" in head else read_collapsed(prof_path)
    first = {"alloc": "alloc_space", "lock": "delay"}[kind]
    second = {"alloc": "alloc_objects", "lock": "contentions"}[kind]
    k = names.index(first) if first in names else 0
    main_truth = {s: truth[s][0] for s in sites}
    d = tvd(main_truth, per[k], sites)
    total_t, total_p = sum(main_truth.values()), sum(per[k].get(s, 0) for s in sites)
    unit = "bytes" if kind == "alloc" else "ns"
    ok = True
    print(f"{kind} {first}: TVD {d:.4f} (max {max_tvd}); sites' total {total_p} {unit}, truth {total_t} "
          f"({100.0 * total_p / max(total_t, 1):.1f} %)")
    for s in sites:
        print(f"  {s}: profile {per[k].get(s, 0) / max(total_p, 1):.3f}, truth {main_truth[s] / max(total_t, 1):.3f}")
    if d > max_tvd or not 0.75 * total_t <= total_p <= 1.25 * total_t:
        ok = False
    if second in names:
        j = names.index(second)
        if kind == "alloc":
            obj_truth = {s: truth[s][1] for s in sites}
            d2 = tvd(obj_truth, per[j], sites)
            print(f"alloc alloc_objects: TVD {d2:.4f} (max {max_tvd}); "
                  + ", ".join(f"{s} {per[j].get(s, 0)} vs {obj_truth[s]}" for s in sites))
            ok = ok and d2 <= max_tvd
        else:
            print("lock contentions: " + ", ".join(f"{s} {per[j].get(s, 0)}" for s in sites))
            ok = ok and all(per[j].get(s, 0) > 0 for s in sites)
    if not ok:
        sys.exit(f"{kind}: the profile misses the truth")


main()
