#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Off-CPU and wall-clock profiles of WorkloadWaits against its own truth.

usage: check_offcpu_truth.py TRUTH HZ CPU OFFCPU WALL [MAX_TVD]

TRUTH is WorkloadWaits's output: "site NAME WALL_NS CPU_NS" per site (the
wall time of the site's calls, the CPU time of the thread that made them)
and "run NS". CPU, OFFCPU and WALL are the process's collapsed profiles of
those types (jsamplectl cct --format collapsed --type ...); a count stands
for one sampling period, 1/HZ s. A stack belongs to the outermost site
method (WorkloadWaits.site*, hold*) on it.

Checks, each printed with its figures:
 - offcpu: the sites' shares of the off-CPU time (truth: wall - CPU of
   each waiting site) within MAX_TVD (default 0.02) by total variation
   distance, and the off-CPU time the profile gives the sites within 15 %
   of the truth's;
 - wall: the same for every site (truth: its wall time), the CPU burner
   included;
 - cpu: the CPU profile holds no off-CPU sample: the waiting sites' CPU
   samples stay within 3 times their threads' CPU time (plus 20 samples);
 - states: each blocked off-CPU stack of a site ends in the state its
   innermost frame waits in (Thread.sleep: sleeping, Unsafe.park: parked,
   Object.wait, a native method: in native, the site method itself, at
   its synchronized block: on a monitor), for at least 95 % of the sites'
   blocked time.
"""
import re
import sys

SITE = re.compile(r"WorkloadWaits\.((?:site|hold)[A-Za-z]+)_\[")
BURNER = "siteBurn"


def read_truth(path):
    sites, run = {}, None
    with open(path) as f:
        for line in f:
            w = line.split()
            if len(w) == 4 and w[0] == "site":
                sites[w[1]] = (int(w[2]), int(w[3]))
            elif len(w) == 2 and w[0] == "run":
                run = int(w[1])
    if not sites or run is None:
        sys.exit(f"{path}: no truth (site and run lines)")
    return sites, run


def read_profile(path, period_ns):
    """ns per site, and the ns of stacks of no site."""
    per, other = {}, 0
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            stack, _, count = line.rpartition(" ")
            ns = int(count) * period_ns
            m = SITE.search(stack)
            if m:
                per[m.group(1)] = per.get(m.group(1), 0) + ns
            else:
                other += ns
    return per, other


# The state an innermost frame waits in, as jsampled names it.
EXPECTED_STATE = [
    (re.compile(r"^java\.lang\.Thread\.sleep"), "[blocked:_sleeping]"),
    (re.compile(r"^jdk\.internal\.misc\.Unsafe\.park_"), "[blocked:_parked]"),
    (re.compile(r"^java\.lang\.Object\.wait"), "[blocked:_in_Object.wait]"),
    (re.compile(r"_\[n\]$"), "[blocked:_in_native]"),
    (re.compile(r"^WorkloadWaits\.(site|hold)[A-Za-z]+_\["), "[blocked:_on_a_monitor]"),
]


def check_states(path, period_ns, min_share=0.95):
    """Whether the sites' blocked stacks end in the state their innermost
    frame waits in."""
    right, wrong, seen = 0, 0, {}
    with open(path) as f:
        for line in f:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            frames = stack.split(";")
            if len(frames) < 2 or not SITE.search(stack) or not frames[-1].startswith("[blocked"):
                continue
            want = next((st for rx, st in EXPECTED_STATE if rx.search(frames[-2])), None)
            if want is None:
                continue
            ns = int(count) * period_ns
            key = (frames[-2], frames[-1])
            seen[key] = seen.get(key, 0) + ns
            if frames[-1] == want:
                right += ns
            else:
                wrong += ns
    print("states: innermost frame             state                      ms")
    for (frame, state), ns in sorted(seen.items(), key=lambda kv: -kv[1])[:12]:
        print(f"states:   {frame[:32]:32s} {state:26s} {ns / 1e6:6.0f}")
    share = right / (right + wrong) if right + wrong else 0.0
    print(f"states: {100 * share:.2f} % of the sites' blocked time in the state their frame waits in "
          f"(at least {100 * min_share:.0f} %)")
    if share < min_share:
        print("FAIL states: the blocked stacks do not say what they wait for")
        return False
    return True


def tvd(a, b, keys):
    sa, sb = sum(a.get(k, 0) for k in keys), sum(b.get(k, 0) for k in keys)
    if sa <= 0 or sb <= 0:
        return 1.0
    return 0.5 * sum(abs(a.get(k, 0) / sa - b.get(k, 0) / sb) for k in keys)


def compare(kind, truth, prof, keys, max_tvd):
    ok = True
    print(f"{kind}: site            truth ms  profile ms")
    for k in keys:
        print(f"{kind}:   {k:14s} {truth.get(k, 0) / 1e6:9.0f} {prof.get(k, 0) / 1e6:11.0f}")
    d = tvd(truth, prof, keys)
    st, sp = sum(truth.get(k, 0) for k in keys), sum(prof.get(k, 0) for k in keys)
    ratio = sp / st if st else 0.0
    print(f"{kind}: TVD {d:.4f} (at most {max_tvd}); the profile accounts for {100 * ratio:.1f} % of the sites' time")
    if d > max_tvd:
        print(f"FAIL {kind}: the sites' shares are {d:.4f} from the truth")
        ok = False
    if not 0.85 <= ratio <= 1.15:
        print(f"FAIL {kind}: the profile gives the sites {100 * ratio:.1f} % of their time")
        ok = False
    return ok


def main():
    if len(sys.argv) not in (6, 7):
        sys.exit(__doc__)
    truth_path, hz, cpu_path, off_path, wall_path = sys.argv[1:6]
    max_tvd = float(sys.argv[6]) if len(sys.argv) == 7 else 0.02
    period = 1e9 / int(hz)
    sites, run = read_truth(truth_path)
    waiting = [k for k in sites if k != BURNER]
    off_truth = {k: max(0, sites[k][0] - sites[k][1]) for k in waiting}
    wall_truth = {k: sites[k][0] for k in sites}
    off, off_other = read_profile(off_path, period)
    wall, wall_other = read_profile(wall_path, period)
    cpu, _ = read_profile(cpu_path, period)
    print(f"the sites ran {run / 1e9:.2f} s; off-CPU time of no site {off_other / 1e9:.2f} s, "
          f"wall time of no site {wall_other / 1e9:.2f} s (JVM threads, start-up)")
    ok = compare("offcpu", off_truth, off, waiting, max_tvd)
    ok = compare("wall", wall_truth, wall, list(sites), max_tvd) and ok
    for k in waiting:
        limit = 3 * sites[k][1] + 20 * period
        if cpu.get(k, 0) > limit:
            print(f"FAIL cpu: {k} has {cpu[k] / 1e6:.0f} ms of CPU samples, its thread used {sites[k][1] / 1e6:.0f} ms")
            ok = False
    ok = check_states(off_path, period) and ok
    if not ok:
        sys.exit(1)
    print("all off-CPU truth checks passed")


if __name__ == "__main__":
    main()
