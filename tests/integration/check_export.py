#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Checks what `jsamplectl export` pushed to pyroscope_receiver.py
(test_export.sh): every request met the contract, names and labels,
intervals contiguous and never repeated (also across the restart), the
refused requests retried, and each process's pushed samples equal to what
jsampled reports for the same window (read back with go tool pprof)."""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pyroscope_receiver import pprof_samples  # noqa: E402

failures = 0


def check(ok, what, detail=""):
    global failures
    print("%s %s%s" % ("ok  " if ok else "FAIL", what, (": " + str(detail)) if detail else ""))
    if not ok:
        failures += 1


def main():
    p = argparse.ArgumentParser()
    for name in ("ctl", "socket", "received", "status1", "status2", "named", "plain", "host", "tmp"):
        p.add_argument("--" + name, required=True)
    a = p.parse_args()
    entries = [json.loads(line) for line in open(a.received)]
    errors = [e for e in entries if "error" in e]
    refused = [e for e in entries if "refused_503" in e]
    accepted = [e for e in entries if "samples" in e]
    check(not errors, "every request met the ingest contract", errors[:3])
    check(len(refused) == 2, "the first two requests were refused (503)", len(refused))
    s1, s2 = json.load(open(a.status1)), json.load(open(a.status2))
    d1, d2 = s1["destinations"]["pyroscope"], s2["destinations"]["pyroscope"]
    check(d1["failed"] == 2 and d1["retried"] >= 1, "the refused requests were retried",
          "failed %d, retried %d" % (d1["failed"], d1["retried"]))
    check(d1["dropped"] == 0 and d2["dropped"] == 0, "nothing dropped", (d1["dropped"], d2["dropped"]))
    check(d1["sent"] + d2["sent"] == len(accepted), "sent (status) = accepted (receiver)",
          "%d + %d vs %d" % (d1["sent"], d2["sent"], len(accepted)))
    check(s1["windows"] == 4 and s2["windows"] == 2, "intervals per run", (s1["windows"], s2["windows"]))

    for pid, app in ((a.named, "orders"), (a.plain, "PhasedWorkload")):
        mine = sorted((e for e in accepted if e["labels"].get("pid") == pid), key=lambda e: e["from"])
        check(len(mine) >= 4, "pid %s: profiles pushed" % pid, len(mine))
        if not mine:
            continue
        check(all(e["app"] == app for e in mine), "pid %s: service name %s" % (pid, app),
              sorted({e["app"] for e in mine}))
        check(all(e["labels"].get("host") == a.host and e["labels"].get("jvm") for e in mine),
              "pid %s: host and jvm labels" % pid, mine[0]["labels"])
        spans = [(e["from"], e["until"]) for e in mine]
        check(all(u - f == 5 and f % 5 == 0 for f, u in spans), "pid %s: 5 s intervals on the grid" % pid,
              spans[:3])
        check(all(spans[i][0] == spans[i - 1][1] for i in range(1, len(spans))),
              "pid %s: intervals contiguous, none repeated" % pid, spans)
        check(any(f == s1["next_from"] for f, _ in spans) and spans[-1][0] > s1["next_from"],
              "pid %s: the second run went on from the first's position %d" % (pid, s1["next_from"]))
        lo, hi = spans[0][0], spans[-1][1]
        path = os.path.join(a.tmp, "window-%s.pb.gz" % pid)
        import subprocess
        subprocess.run([a.ctl, "--socket", a.socket, "cct", pid, "--format", "pprof", "--from", str(lo),
                        "--until", str(hi), "-o", path], check=True)
        with open(path, "rb") as f:
            truth = pprof_samples(f.read(), a.tmp)
        pushed = sum(e["samples"] for e in mine)
        check(pushed == truth, "pid %s: pushed samples = jsampled's for %d..%d" % (pid, lo, hi),
              "%d vs %d" % (pushed, truth))
    if failures:
        print("%d export checks failed" % failures)
        return 1
    print("all export checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
