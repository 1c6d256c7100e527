#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""The outputs of a live jsampled, read back with real tools (run by
test_outputs.sh, which starts jsampled and the JVMs):

  check_outputs.py --ctl JSAMPLECTL --socket SOCK --phased PID --shifting PID
                   --shifting-out FILE --live PID --screenshots DIR

- pprof: `go tool pprof -raw` and `-top` and `protoc --decode` with the
  upstream profile.proto: totals equal the CCT's, the top frame is the CCT's.
- the flame-graph page in headless Chromium with no network: the workload's
  hot method is drawn, a click zooms, search reports its share.
- time windows of a workload whose hot method changes: each window has fewer
  samples than the whole and the right hot method; their diff shows the swap.
- the live view (jsamplectl serve): token and host checks, the list's and
  the flame graph's numbers grow between refreshes; screenshots.
Exit 1 on a failed check, with what was measured."""
import argparse
import contextlib
import gzip
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from webdriver import WebDriver  # noqa: E402

PROTO = "/usr/share/gocode/src/github.com/google/pprof/proto/profile.proto"
NO_NETWORK = ["--host-resolver-rules=MAP * ~NOTFOUND"]
failures = []


def check(ok, what, measured):
    print("%s %s: %s" % ("ok  " if ok else "FAIL", what, measured), flush=True)
    if not ok:
        failures.append(what)
    return ok


def wait_for(fn, timeout=10.0, step=0.2):
    deadline = time.time() + timeout
    while True:
        value = fn()
        if value or time.time() > deadline:
            return value
        time.sleep(step)


class Ctl:
    def __init__(self, path, sock):
        self.path, self.sock = path, sock

    def run(self, *args, binary=False):
        r = subprocess.run([self.path, "--socket", self.sock] + list(args), capture_output=True, timeout=60)
        if r.returncode != 0:
            raise RuntimeError("jsamplectl %s: %s" % (" ".join(args), r.stderr.decode(errors="replace")))
        return r.stdout if binary else r.stdout.decode()


def strip_kind(frame):
    return re.sub(r"_\[[a-z0-9]\]$", "", frame)


def parse_collapsed(text):
    """{stack tuple (kind suffixes removed): count}"""
    out = Counter()
    for line in text.splitlines():
        stack, _, n = line.rpartition(" ")
        out[tuple(strip_kind(f) for f in stack.split(";"))] += int(n)
    return out


def leaf_counts(stacks):
    c = Counter()
    for s, n in stacks.items():
        c[s[-1]] += n
    return c


def share_containing(stacks, needle):
    total = sum(stacks.values())
    hit = sum(n for s, n in stacks.items() if any(needle in f for f in s))
    return 100.0 * hit / total if total else 0.0


def stable_collapsed(ctl, pid, *window):
    """The profile once it stops changing (the workload is done)."""
    prev = None
    for _ in range(20):
        cur = parse_collapsed(ctl.run("cct", str(pid), "--format", "collapsed", *window))
        if cur == prev:
            return cur
        prev = cur
        time.sleep(0.5)
    return prev


@contextlib.contextmanager
def stopped(pid):
    """The process stopped (SIGSTOP: no thread runs, none is sampled)."""
    def signal_it(sig):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass  # exited: nothing more comes
    signal_it(signal.SIGSTOP)
    try:
        yield
    finally:
        signal_it(signal.SIGCONT)


def check_pprof(ctl, pid, tmp):
    path = os.path.join(tmp, "phased.pb.gz")
    # The workload is done, but the JVM's own threads (GC, JIT) may still
    # take a sample now and then, longer on a busy machine: the JVM is
    # stopped while its profile is read in two formats.
    with stopped(pid):
        for attempt in range(10):
            stacks = stable_collapsed(ctl, pid)
            total = sum(stacks.values())
            ctl.run("cct", str(pid), "--format", "pprof", "-o", path)
            again = sum(parse_collapsed(ctl.run("cct", str(pid), "--format", "collapsed")).values())
            if again == total:
                break
    check(again == total, "the profile is stable while it is read", "%d then %d samples (%d attempts)" %
          (total, again, attempt + 1))
    with open(path, "rb") as f:
        check(f.read(2) == b"\x1f\x8b", "pprof is gzipped", path)

    env = dict(os.environ, HOME=tmp, GOCACHE=os.path.join(tmp, "gocache"))
    raw = subprocess.run(["go", "tool", "pprof", "-raw", path], capture_output=True, text=True, env=env, timeout=120)
    check(raw.returncode == 0, "go tool pprof -raw reads it", raw.stderr.strip()[:300] or "exit 0")
    sample_lines = re.findall(r"^\s+(\d+)\s+(\d+):\s+[\d ]+$", raw.stdout, re.M)
    raw_total = sum(int(a) for a, _ in sample_lines)
    period = re.search(r"^Period: (\d+)", raw.stdout, re.M)
    check(raw_total == total, "pprof samples (go tool pprof -raw) = the CCT's total",
          "%d in %d samples vs %d" % (raw_total, len(sample_lines), total))
    check(period and all(int(b) == int(a) * int(period.group(1)) for a, b in sample_lines),
          "cpu nanoseconds = samples x period", "period %s ns" % (period.group(1) if period else "?"))

    top = subprocess.run(["go", "tool", "pprof", "-top", "-nodecount=5", "-sample_index=samples", path],
                         capture_output=True, text=True, env=env, timeout=120)
    rows = re.findall(r"^\s*(\d+)\s+[\d.]+%\s+[\d.]+%\s+\d+\s+[\d.]+%\s+(\S+)", top.stdout, re.M)
    leaves = leaf_counts(stacks)
    cct_top, cct_n = leaves.most_common(1)[0]
    check(rows and rows[0][1] == cct_top and int(rows[0][0]) == cct_n,
          "go tool pprof -top: the top frame and its count are the CCT's",
          "pprof %s, CCT %s %d" % (rows[0] if rows else top.stdout[-300:], cct_top, cct_n))

    unzipped = gzip.decompress(open(path, "rb").read())
    dec = subprocess.run(["protoc", "--decode=perftools.profiles.Profile", "--proto_path=" + os.path.dirname(PROTO),
                          os.path.basename(PROTO)], input=unzipped, capture_output=True, timeout=60)
    text = dec.stdout.decode(errors="replace")
    check(dec.returncode == 0, "protoc --decode with the upstream profile.proto", dec.stderr.decode()[:300] or "exit 0")
    values = [int(v) for v in re.findall(r"sample \{.*?\n  \}", text, re.S)
              for v in re.findall(r"value: (\d+)", v)[:1]]
    check(sum(values) == total, "protoc: sample values add up to the CCT's total", "%d vs %d" % (sum(values), total))
    names = set(re.findall(r'string_table: "([^"]*)"', text))
    check({"samples", "count", "cpu", "nanoseconds", cct_top} <= names, "protoc: sample types and the hot method",
          "%d strings" % len(names))
    lines = re.findall(r"line \{\n\s+function_id: \d+\n\s+line: (\d+)", text)
    check(any(int(n) > 0 for n in lines), "locations carry line numbers", "%d of %d lines > 0" %
          (sum(1 for n in lines if int(n) > 0), len(lines)))
    return stacks


def check_page(ctl, pid, stacks, tmp, shots):
    path = os.path.join(tmp, "phased.html")
    # The JVM's own threads may still take a sample now and then: the page
    # is written while the JVM is stopped, and compared with a tree that
    # did not change meanwhile.
    with stopped(pid):
        for _ in range(10):
            ctl.run("cct", str(pid), "--format", "html", "-o", path)
            after = parse_collapsed(ctl.run("cct", str(pid), "--format", "collapsed"))
            if after == stacks:
                break
            stacks = stable_collapsed(ctl, pid)
    check(after == stacks, "the profile is stable while the page is written",
          "%d then %d samples" % (sum(stacks.values()), sum(after.values())))
    leaves = leaf_counts(stacks)
    hot = leaves.most_common(1)[0][0]
    want = share_containing(stacks, hot)
    with WebDriver(extra_args=NO_NETWORK) as wd:
        wd.get("file://" + path)
        frames = wait_for(lambda: wd.find_all(".frame"))
        check(len(frames) > 5, "the page draws frames", "%d frames" % len(frames))
        loaded = wd.execute("return performance.getEntriesByType('resource').map(e => e.name)")
        check(loaded == [], "the page loads nothing (no network)", loaded)
        hot_frames = wd.execute("return Array.from(document.querySelectorAll('.frame'))"
                                ".filter(f => f.dataset.name === arguments[0])"
                                ".sort((a, b) => b.getBoundingClientRect().width - a.getBoundingClientRect().width)",
                                hot)
        check(len(hot_frames) > 0, "the workload's hot method is shown", "%s: %d frames" % (hot, len(hot_frames)))
        if not hot_frames:
            return
        width = wd.execute("return document.querySelector('.frame').parentElement.getBoundingClientRect().width")
        wd.click(hot_frames[0])
        w = wait_for(lambda: (wd.rect(hot_frames[0])["width"] if hot_frames[0] in wd.find_all(".frame") else 0)
                     > 0.95 * width and wd.rect(hot_frames[0])["width"])
        zoomed = wd.execute("return Array.from(document.querySelectorAll('.frame'))"
                            ".filter(f => f.dataset.name === arguments[0])"
                            ".map(f => f.getBoundingClientRect().width)", hot)
        check(max(zoomed or [0]) > 0.95 * width, "a click zooms the hot method to the full width",
              "%.0f of %.0f px" % (max(zoomed or [0]), width))
        wd.click(wd.find("#reset"))
        box = wd.find("#search")
        wd.send_keys(box, hot.rsplit(".", 1)[-1])
        text = wait_for(lambda: wd.text_of("#match"))
        m = re.search(r"([\d.]+)%", text or "")
        got = float(m.group(1)) if m else -1
        check(m and abs(got - want) < 0.05, "search reports the hot method's share",
              "%r; from the CCT %.2f%%" % (text, want))
        highlighted = wd.execute("return document.querySelectorAll('.frame.match, .frame.hit, .frame[data-match]').length")
        check(highlighted is not None, "search highlights frames", "%s highlighted" % highlighted)
        wd.screenshot(os.path.join(shots, "flamegraph-page.png"))
        wd.get("file://" + path.replace(".html", ".svg"))
    svg_path = os.path.join(tmp, "phased.svg")
    ctl.run("cct", str(pid), "--format", "svg", "-o", svg_path)
    svg = open(svg_path).read()
    check(svg.startswith("<?xml") and ('data-n="%s"' % hot) in svg, "the SVG holds the hot method", hot)
    with WebDriver(extra_args=NO_NETWORK) as wd:
        wd.get("file://" + svg_path)
        n = wd.execute("return document.querySelectorAll('g.f').length")
        check(n and n > 5, "the SVG renders in Chromium", "%s frames" % n)
        wd.screenshot(os.path.join(shots, "flamegraph-svg.png"))


def check_windows(ctl, pid, out_path, tmp, shots):
    text = wait_for(lambda: open(out_path).read() if "done" in open(out_path).read() else "", timeout=60)
    spans = {m.group(1): (float(m.group(2)), float(m.group(3)))
             for m in re.finditer(r"^(alpha|beta) ([\d.]+) ([\d.]+)$", text, re.M)}
    if not check(len(spans) == 2, "the shifting workload reported its phases", text.strip()):
        return
    whole = stable_collapsed(ctl, pid)
    total = sum(whole.values())
    windows = {}
    for phase in ("alpha", "beta"):
        a, b = spans[phase]
        frm, until = int(a) + 2, int(b) - 1  # whole seconds inside the phase
        stacks = parse_collapsed(ctl.run("cct", str(pid), "--format", "collapsed",
                                         "--from", str(frm), "--until", str(until)))
        n = sum(stacks.values())
        method = "ShiftingWorkload.phase" + phase.capitalize()
        share = share_containing(stacks, method)
        windows[phase] = (frm, until)
        check(0 < n < total, "the %s window has fewer samples than the whole profile" % phase,
              "%d of %d" % (n, total))
        check(share > 90, "the %s window's hot method is %s" % (phase, method), "%.1f%% of its samples" % share)
    base = "%d@%d..%d" % (pid, *windows["alpha"])
    target = "%d@%d..%d" % (pid, *windows["beta"])
    table = ctl.run("diff", "--base", base, "--target", target, "--format", "text")
    rows = re.findall(r"^\s*([+-][\d.]+)pp\s+([\d.]+)%\s+([\d.]+)%\s+(\S+)$", table, re.M)
    by_name = {r[3]: float(r[0]) for r in rows}
    check(by_name.get("ShiftingWorkload.phaseBeta", 0) > 80 and by_name.get("ShiftingWorkload.phaseAlpha", 0) < -80,
          "the diff of the two phases shows the swap",
          "phaseBeta %+.1f, phaseAlpha %+.1f points" % (by_name.get("ShiftingWorkload.phaseBeta", 0),
                                                       by_name.get("ShiftingWorkload.phaseAlpha", 0)))
    page = os.path.join(tmp, "diff.html")
    ctl.run("diff", "--base", base, "--target", target, "--format", "html", "-o", page)
    with WebDriver(extra_args=NO_NETWORK) as wd:
        wd.get("file://" + page)
        wait_for(lambda: wd.find_all(".frame"))
        first = wd.execute("const r = document.querySelector('#changes tbody tr, #changes tr:nth-child(2)');"
                           "return r ? r.textContent : ''")
        check("phaseBeta" in first or "phaseAlpha" in first, "the diff page's table leads with a swapped phase",
              first.strip()[:120])
        wd.screenshot(os.path.join(shots, "flamegraph-diff.png"))


def check_live(ctl_path, sock, pid, tmp, shots):
    port = 18000 + os.getpid() % 2000
    serve = subprocess.Popen([ctl_path, "--socket", sock, "serve", "--listen", "127.0.0.1:%d" % port],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        line = serve.stdout.readline()
        m = re.search(r"(http://127\.0\.0\.1:\d+)/\?token=([0-9a-f]+)", line)
        if not check(m is not None, "jsamplectl serve prints its URL", line.strip()):
            return
        base, token = m.group(1), m.group(2)
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

        def status(url, headers=None):
            try:
                return opener.open(urllib.request.Request(url, headers=headers or {}), timeout=10).status
            except urllib.error.HTTPError as e:
                return e.code
        check(status(base + "/api/list") == 403, "without the token: refused", "403")
        check(status(base + "/api/list?token=" + token, {"Host": "evil.example:%d" % port}) == 403,
              "another Host name (DNS rebinding): refused", "403")
        pb = opener.open(urllib.request.Request(base + "/download/%d.pb.gz" % pid,
                                                headers={"Cookie": "jsampled_token=" + token}), timeout=30).read()
        check(pb[:2] == b"\x1f\x8b", "pprof download through the live view", "%d bytes" % len(pb))
        with WebDriver() as wd:
            wd.get(base + "/?token=" + token)
            row = "tr[data-pid='%d'] .samples" % pid

            def samples():
                t = wd.text_of(row)
                return int(t.replace(",", "")) if t else 0
            first = wait_for(samples, timeout=15)
            second = wait_for(lambda: samples() > first and samples(), timeout=15)
            check(first > 0 and second > first, "the process list's numbers grow between refreshes",
                  "%d then %d samples" % (first, second or 0))
            wd.screenshot(os.path.join(shots, "live-list.png"))
            wd.get(base + "/p/%d" % pid)

            def total():
                t = wd.text_of("#total")
                digits = re.sub(r"[^\d]", "", t) if t else ""
                return int(digits) if digits else 0
            t1 = wait_for(total, timeout=15)
            t2 = wait_for(lambda: total() > t1 and total(), timeout=20)
            upd = wd.text_of("#updated") or ""
            check(t1 > 0 and t2 > t1, "the live flame graph grows between refreshes",
                  "%d then %d samples (%s)" % (t1, t2 or 0, upd))
            wd.screenshot(os.path.join(shots, "live-flamegraph.png"))
            # One thread pool (a worker's name selects its pool), through
            # the live updates; a selector of no thread stays empty.
            wd.get(base + "/p/%d?thread=worker-1" % pid)
            w1 = wait_for(total, timeout=15)
            w2 = wait_for(lambda: total() > w1 and total(), timeout=20)
            check(w1 > 0 and w2 > w1 and wd.execute("return document.getElementById('thread').value;") == "worker-1",
                  "a thread pool's live flame graph grows (?thread=worker-1, shown in its box)",
                  "%d then %d samples" % (w1, w2 or 0))
            wd.get(base + "/p/%d?thread=nobody%%2A" % pid)
            u1 = wait_for(lambda: wd.text_of("#updated"), timeout=15)
            u2 = wait_for(lambda: (wd.text_of("#updated") or "") not in ("", u1) and wd.text_of("#updated"),
                          timeout=20)
            check(bool(u2) and total() == 0, "a selector of no thread stays empty through the live updates",
                  "%d samples, %s then %s" % (total(), u1, u2))
    finally:
        serve.terminate()
        serve.wait(timeout=10)


def main():
    ap = argparse.ArgumentParser()
    for a in ("--ctl", "--socket", "--phased", "--shifting", "--shifting-out", "--live", "--screenshots"):
        ap.add_argument(a, required=True)
    a = ap.parse_args()
    os.makedirs(a.screenshots, exist_ok=True)
    ctl = Ctl(a.ctl, a.socket)
    with tempfile.TemporaryDirectory(prefix="check-outputs-") as tmp:
        stacks = check_pprof(ctl, int(a.phased), tmp)
        check_page(ctl, int(a.phased), stacks, tmp, a.screenshots)
        check_windows(ctl, int(a.shifting), a.shifting_out, tmp, a.screenshots)
        check_live(a.ctl, a.socket, int(a.live), tmp, a.screenshots)
    if failures:
        print("FAILED: " + "; ".join(failures))
        return 1
    print("all output checks passed; screenshots in " + a.screenshots)
    return 0


if __name__ == "__main__":
    sys.exit(main())
