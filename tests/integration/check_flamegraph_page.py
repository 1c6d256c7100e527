#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Checks the flame-graph page (userspace/common/web/flamegraph.html) in
headless Chromium through WebDriver (webdriver.py next to this file).

  check_flamegraph_page.py [--screenshot DIR]

Builds pages from example-data.json with make_page.py, opens them with no
network, and checks drawing, zoom, search, tooltip, diff, live mode, keys
and console errors; prints what each check measured; exits 1 on failure."""
import argparse
import copy
import http.server
import json
import os
import random
import re
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
WEB = os.path.join(HERE, "..", "..", "userspace", "common", "web")
sys.path.insert(0, HERE)
sys.path.insert(0, WEB)
import make_page  # noqa: E402
import webdriver  # noqa: E402
from webdriver import BACKSPACE, CONTROL, ESCAPE, NULL, WebDriver  # noqa: E402

HOT = "PhasedWorkload.phaseHot"
METHOD_KINDS = {"interpreted", "compiled", "inlined"}
NO_NETWORK = ["--host-resolver-rules=MAP * ~NOTFOUND"]

failures = []


def check(ok, what, measured):
    print("%s %s: %s" % ("ok  " if ok else "FAIL", what, measured), flush=True)
    if not ok:
        failures.append(what)
    return ok


def wait_for(fn, timeout=5.0, step=0.05):
    """fn()'s first truthy value within timeout, else its last value."""
    deadline = time.time() + timeout
    while True:
        value = fn()
        if value or time.time() > deadline:
            return value
        time.sleep(step)


# ---------------------------------------------------------------- the data, in Python

def kids(n):
    return n[4] if len(n) > 4 and n[4] else []


def walk(n, parents=()):
    """(node, names of its ancestors) for every node."""
    yield n, parents
    for c in kids(n):
        yield from walk(c, parents + (n,))


def find_path(data, names):
    n = data["root"]
    for name in names[1:]:
        n = next(c for c in kids(n) if data["names"][c[0]] == name)
    return n


def matched_total(data, n, pred):
    """Samples of the topmost matching frames under n, as the page counts them."""
    if pred(data["names"][n[0]]):
        return n[2]
    return sum(matched_total(data, c, pred) for c in kids(n))


def make_diff(data):
    """Diff data: the example as target, a perturbed copy as base. phaseHot
    grew (base half), [GC] shrank (base doubled), one path is base-only."""
    d = copy.deepcopy(data)
    rnd = random.Random(7)
    names = d["names"]
    names.append("PhasedWorkload.oldPhase")
    run_phases = find_path(d, ["[root]", "java.lang.Thread.run", "PhasedWorkload.main",
                               "PhasedWorkload.runPhases"])
    run_phases[4].append([len(names) - 1, d["kinds"].index("compiled"), 0, 0, [], 900, 900])

    def base(n, factor):
        if len(n) > 5:  # the base-only path, already set
            return n[5]
        name = names[n[0]]
        factor = 0.5 if name == HOT else 2.0 if name == "[GC]" else factor
        children = kids(n)
        left_out = n[2] - n[3] - sum(c[2] for c in children)
        base_self = int(round(n[3] * factor * rnd.uniform(0.85, 1.15)))
        base_total = base_self + sum(base(c, factor) for c in children) + left_out
        n[4:] = [children, base_total, base_self]
        return base_total

    base_total = base(d["root"], 1.0)
    d["diff"] = {"base_title": "pid 4242 (java): yesterday", "base_total": base_total,
                 "target_total": d["root"][2]}
    return d


def changes(d):
    """(name, change in points) by |change|, as the page's #changes table."""
    sums = {}

    def visit(n, on_stack):
        name = d["names"][n[0]]
        if name not in on_stack and n is not d["root"]:
            s = sums.setdefault(name, [0, 0])
            s[0] += n[2]
            s[1] += n[5]
        for c in kids(n):
            visit(c, on_stack | {name})

    visit(d["root"], frozenset())
    rows = [(name, 100 * t / d["diff"]["target_total"] - 100 * b / d["diff"]["base_total"])
            for name, (t, b) in sums.items()]
    return sorted(rows, key=lambda r: (-abs(r[1]), r[0]))


def big_tree(nodes=100000, seed=3):
    """A synthetic profile of `nodes` nodes, grown breadth first so that
    most of its frames are wide enough to draw."""
    rnd = random.Random(seed)
    names = ["[root]"] + ["pkg%d.Class%d.method%d" % (i % 37, i % 211, i) for i in range(5000)]
    root = [0, 0, 10_000_000, 0, []]
    queue, count = [root], 1
    for n in queue:  # the queue grows while we walk it
        if count >= nodes:
            break
        # Split until frames are a few px wide, then grow chains (deep stacks).
        fan = rnd.randint(2, 3) if n[2] * 1400 / root[2] > 3 else 1
        weights = [rnd.random() + 0.1 for _ in range(fan)][:nodes - count]
        budget = n[2] * 0.97  # the rest stays as the node's self
        for w in weights:
            total = int(budget * w / sum(weights))
            if total < 1:
                continue
            child = [rnd.randrange(1, len(names)), rnd.randrange(1, 8), total, 0, []]
            n[4].append(child)
            queue.append(child)
            count += 1
        n[4].sort(key=lambda c: -c[2])
    for n in queue:
        n[3] = n[2] - sum(c[2] for c in n[4])
    return {"title": "big", "subtitle": "%d nodes" % count, "unit": "samples", "names": names,
            "kinds": ["root", "interpreted", "compiled", "inlined", "native", "kernel", "jvm", "pseudo"],
            "root": root, "diff": None, "live": None}, count


# ---------------------------------------------------------------- page helpers

FRAMES_JS = """
const w = document.getElementById('chart').clientWidth;
return {width: w, frames: [...document.querySelectorAll('#chart .frame')].map(e => {
  const r = e.getBoundingClientRect();
  return {name: e.dataset.name, path: e.dataset.path, kind: e.dataset.kind, w: r.width,
          top: e.offsetTop, cls: e.className, bg: getComputedStyle(e).backgroundColor};
})};"""


def frames(wd):
    return wd.execute(FRAMES_JS)


def frame_el(wd, path):
    return wd.find('.frame[data-path="%s"]' % path)


def match_text(wd):
    return wd.text_of("#match")


def parse_match(text):
    m = re.match(r"Matched: ([\d.]+)% \(([\d,]+) of ([\d,]+) ", text)
    return (float(m.group(1)), int(m.group(2).replace(",", "")), int(m.group(3).replace(",", ""))) if m else None


def zoom_root(wd):
    """The drawn frame that is the zoom root: the lowest one not dimmed."""
    return wd.execute("""const f = [...document.querySelectorAll('#chart .frame:not(.dim)')];
        f.sort((a, b) => a.dataset.path.split('/').length - b.dataset.path.split('/').length);
        return f.length ? f[0].dataset.name : null;""")


def severe_console(wd):
    return [e for e in wd.console_log() if e.get("level") == "SEVERE"]


def check_console(wd, page):
    errs = severe_console(wd)
    check(not errs, "no severe console messages (%s)" % page,
          "%d%s" % (len(errs), "".join("\n      " + e.get("message", "") for e in errs)))


def wait_frames(wd):
    return wait_for(lambda: wd.execute("return document.querySelectorAll('#chart .frame').length"), 10)


def set_search(wd, text):
    box = wd.find("#search")
    wd.send_keys(box, CONTROL + "a" + NULL + BACKSPACE + text)


# ---------------------------------------------------------------- the checks

def check_template(template):
    refs = re.findall(r"""(?:src|href)\s*=\s*["']?\s*((?:https?:)?//[^"'\s>]*)""", template, re.I)
    urls = re.findall(r"https?://\S+", template)
    check(not refs and not urls, "template: no http(s) URLs in src/href or anywhere",
          "src/href URLs %s, other URLs %s" % (refs, urls))
    check(template.count(make_page.MARKER) == 1, "template: marker once",
          "%d occurrence(s)" % template.count(make_page.MARKER))


def check_no_network(wd, url):
    res = wd.execute("return performance.getEntriesByType('resource').map(e => e.name)")
    nav = wd.execute("return performance.getEntriesByType('navigation').map(e => e.name)")
    check(res == [] and nav == [url], "loaded nothing but the page itself",
          "resources %s, navigation %s" % (res, nav))


def check_network_is_cut(wd):
    """The browser really has no network, so a page needing one would fail."""
    outcome = wd.execute_async("""const done = arguments[arguments.length - 1];
        fetch('https://example.com/', {mode: 'no-cors'}).then(() => done('fetched'), e => done('failed: ' + e));""")
    check(outcome.startswith("failed"), "network access fails in this browser", outcome)
    wd.console_log()  # that failure's console message is ours, not the page's


def check_main_page(wd, data, url, shots):
    wd.get(url)
    n = wait_frames(wd)
    check_no_network(wd, url)
    info = frames(wd)
    fs, width = info["frames"], info["width"]
    check(n > 50, "frames drawn", "%d frames, chart %d px wide" % (n, width))
    check(min(f["w"] for f in fs) >= 0.5, "no frame narrower than 0.5 px",
          "narrowest %.2f px" % min(f["w"] for f in fs))
    total = data["root"][2]
    shown = wd.text_of("#total")
    check(shown == "{:,}".format(total), "#total shows the root total", "%r (data %d)" % (shown, total))
    title = wd.execute("return [document.querySelector('h1').textContent, document.title]")
    check(title == [data["title"]] * 2, "title in h1 and document.title", title)

    paths = {f["path"] for f in fs}
    leaves = [f for f in fs if f["path"] != "0" and f["kind"] in METHOD_KINDS
              and not any(p.startswith(f["path"] + "/") for p in paths)]
    widest = max(leaves, key=lambda f: f["w"])
    hot = max((f for f in fs if f["name"] == HOT), key=lambda f: f["w"], default=None)
    runner_up = max((f["w"] for f in leaves if f is not widest), default=0)
    check(hot is not None and widest is hot, "%s is the widest leaf-level method frame" % HOT,
          "%s at %s: %.1f px; next widest leaf %.1f px (%d leaves)"
          % (widest["name"], widest["path"], widest["w"], runner_up, len(leaves)))
    if hot is None:
        return
    root = next(f for f in fs if f["path"] == "0")
    check(abs(root["w"] - width) < 1 and root["top"] == max(f["top"] for f in fs),
          "root full width at the bottom (flame view)", "root %.1f px, top %d" % (root["w"], root["top"]))

    # Tooltip, with real pointer events.
    el = frame_el(wd, hot["path"])
    wd.move_to(el)
    tip = wait_for(lambda: wd.execute("""const t = document.getElementById('tooltip');
        return t.hidden || getComputedStyle(t).display == 'none' ? null :
               {text: t.innerText, rect: t.getBoundingClientRect().toJSON()};"""), 3)
    r = wd.rect(el)
    cx, cy = r["x"] + r["width"] / 2, r["y"] + r["height"] / 2
    dist = tip and min(abs(tip["rect"]["x"] - cx), abs(tip["rect"]["right"] - cx)) + \
        min(abs(tip["rect"]["y"] - cy), abs(tip["rect"]["bottom"] - cy))
    check(bool(tip) and HOT in tip["text"] and "%" in tip["text"] and "Self" in tip["text"]
          and dist < 60, "#tooltip on hover, near the pointer",
          "%r, %.0f px from the pointer" % (tip["text"].replace("\n", " | "), dist) if tip else "not shown")

    # Zoom on click, ancestors dimmed; reset.
    wd.click(el)
    zoomed = wait_for(lambda: wd.execute("return document.querySelector('.frame[data-path=\"%s\"]')"
                                         ".getBoundingClientRect().width" % hot["path"]) > width - 2
                      and frames(wd), 3)
    zw = next(f["w"] for f in zoomed["frames"] if f["path"] == hot["path"]) if zoomed else 0
    dims = [f["name"] for f in zoomed["frames"] if "dim" in f["cls"]] if zoomed else []
    depth = hot["path"].count("/")
    check(zoomed and zw >= 0.99 * width and len(dims) == depth,
          "click zooms: %s fills the width, ancestors dimmed" % HOT,
          "%.1f of %d px, %d dimmed ancestors (depth %d), zoom root %s"
          % (zw, width, len(dims), depth, zoom_root(wd)))
    wd.click(wd.find("#reset"))
    after = frames(wd)
    root = next(f for f in after["frames"] if f["path"] == "0")
    check(len(after["frames"]) == n and "dim" not in root["cls"] and abs(root["w"] - width) < 1,
          "reset restores the root", "%d frames (before zoom %d), root %.1f px, zoom root %s"
          % (len(after["frames"]), n, root["w"], zoom_root(wd)))

    # Search: substring, share as Python computes it.
    set_search(wd, "phaseHot")
    text = wait_for(lambda: match_text(wd), 3)
    want = matched_total(data, data["root"], lambda s: "phasehot" in s.lower())
    got = parse_match(text)
    hits = len(wd.find_all("#chart .frame.match"))
    check(got and abs(got[0] - 100 * want / total) <= 0.01 and got[1] == want and hits >= 1,
          "search 'phaseHot' highlights and reports the share",
          "%r; %d highlighted frames; Python: %.2f%% (%d of %d)" % (text, hits, 100 * want / total, want, total))
    colour = wd.execute("return getComputedStyle(document.querySelector('.frame.match')).backgroundColor")
    check(colour.startswith("rgb") and _rgb(colour)[1] < min(_rgb(colour)[0], _rgb(colour)[2]) - 60,
          "matches are magenta", colour)
    if shots:
        wd.screenshot(os.path.join(shots, "flamegraph.png"))
        print("     saved %s" % os.path.join(shots, "flamegraph.png"))

    # The search stays when zooming, and counts within the zoom root.
    names = ["[root]", "java.lang.Thread.run", "PhasedWorkload.main", "PhasedWorkload.runPhases"]
    node = find_path(data, names)
    path = next(f["path"] for f in fs if f["name"] == names[-1])
    wd.click(frame_el(wd, path))
    text = wait_for(lambda: (lambda t: t if "of {:,}".format(node[2]) in t else None)(match_text(wd)), 3)
    want = matched_total(data, node, lambda s: "phasehot" in s.lower())
    got = parse_match(text or "")
    check(got and abs(got[0] - 100 * want / node[2]) <= 0.01 and got[1] == want,
          "search kept when zooming, share within the zoom root",
          "%r; Python %.2f%%" % (text, 100 * want / node[2]))

    # Escape resets the zoom (and keeps the search).
    wd.execute("document.activeElement.blur()")
    wd.press_keys(ESCAPE)
    zr = wait_for(lambda: zoom_root(wd) == "[root]", 3)
    check(zr and "of {:,}".format(total) in match_text(wd), "Escape resets the zoom",
          "zoom root %s, %r" % (zoom_root(wd), match_text(wd)))

    # Regex search.
    pattern = r"^PhasedWorkload\.phase(Hot|A)$"
    set_search(wd, "/%s/" % pattern)
    want = matched_total(data, data["root"], lambda s: re.search(pattern, s) is not None)
    text = wait_for(lambda: (lambda t: t if parse_match(t) and parse_match(t)[1] == want else None)(match_text(wd)), 3)
    check(bool(text), "regex search /%s/" % pattern, "%r; Python %d samples" % (match_text(wd), want))

    # Clearing the search.
    set_search(wd, "")
    left = (match_text(wd), len(wd.find_all("#chart .frame.match")))
    check(left == ("", 0), "clearing the search removes highlights and text", "%r, %d highlighted" % left)

    # Ctrl-F focuses the search box.
    wd.execute("document.activeElement.blur()")
    wd.press_keys(CONTROL, "f")
    focused = wd.execute("return document.activeElement.id")
    check(focused == "search", "Ctrl-F focuses the search", "active element #%s" % focused)

    # Icicle view: root at the top.
    wd.click(wd.find("#view"))
    top = wd.execute("return document.querySelector('.frame[data-path=\"0\"]').offsetTop")
    wd.click(wd.find("#view"))
    check(top == 0, "icicle view puts the root at the top", "root top %d px" % top)
    check_console(wd, "example page")


def _rgb(css):
    return [int(float(v)) for v in re.findall(r"[\d.]+", css)[:3]]


def check_diff_page(wd, diff, url, shots):
    wd.get(url)
    wait_frames(wd)
    check_no_network(wd, url)
    fs = frames(wd)["frames"]
    red = [f["name"] for f in fs if _rgb(f["bg"])[0] - _rgb(f["bg"])[2] > 60]
    blue = [f["name"] for f in fs if _rgb(f["bg"])[2] - _rgb(f["bg"])[0] > 60]
    check(HOT in red and "[GC]" in blue, "diff frames red (grew) and blue (shrank)",
          "%d red incl. %s, %d blue incl. [GC], of %d" % (len(red), HOT in red, len(blue), len(fs)))
    rows = wd.execute("""return [...document.querySelectorAll('#changes tbody tr')]
                         .map(tr => [...tr.cells].map(c => c.textContent));""")
    want = changes(diff)
    check(1 <= len(rows) <= 20 and rows[0][0] == want[0][0] and abs(float(rows[0][3]) - want[0][1]) <= 0.01,
          "#changes table lists the largest changes",
          "%d rows, first %s; Python first %s %+.2f" % (len(rows), rows[0] if rows else None, *want[0]))
    title = wd.text_of("h1")
    check("→" in title and diff["diff"]["base_title"] in title, "diff title base → target", title)
    hot = max((f for f in fs if f["name"] == HOT), key=lambda f: f["w"])
    wd.move_to(frame_el(wd, hot["path"]))
    tip = wait_for(lambda: wd.execute("const t = document.getElementById('tooltip'); return t.hidden ? '' : t.innerText"), 3)
    check("Base total" in tip and "points" in tip, "diff tooltip has base counts and the change",
          tip.replace("\n", " | "))
    if shots:
        wd.screenshot(os.path.join(shots, "flamegraph-diff.png"))
        print("     saved %s" % os.path.join(shots, "flamegraph-diff.png"))
    check_console(wd, "diff page")


def check_no_data(wd, url):
    wd.get(url)
    text = wd.execute("return document.getElementById('nodata').hidden ? '' : document.getElementById('nodata').innerText")
    check("no data" in text.lower(), "the bare template says there is no data", repr(text))
    check_console(wd, "template")


def check_big(wd, tmp, template):
    data, count = big_tree()
    path = os.path.join(tmp, "big.html")
    with open(path, "w", encoding="utf-8") as f:
        f.write(make_page.make_page(template, data))
    t0 = time.time()
    wd.get("file://" + path)
    n = wait_frames(wd)
    load_s = time.time() - t0
    search_ms = wd.execute("""const t = performance.now(), box = document.getElementById('search');
        box.value = 'method1'; box.dispatchEvent(new Event('input'));
        return performance.now() - t;""")
    zoom_ms = wd.execute("""const t = performance.now();
        document.querySelectorAll('.frame')[1].click(); return performance.now() - t;""")
    check(load_s < 15 and search_ms < 3000 and zoom_ms < 3000, "a %d-node profile renders in time" % count,
          "loaded with %d frames in %.2f s, search redraw %.0f ms, zoom %.0f ms" % (n, load_s, search_ms, zoom_ms))
    check_console(wd, "big page")


def check_units(wd, tmp, template, data):
    """An allocation profile's page counts bytes, a lock one's nanoseconds,
    as the data's unit says (cct_page.c)."""
    for kind, unit in (("alloc", "bytes"), ("lock", "nanoseconds")):
        path = os.path.join(tmp, kind + ".html")
        with open(path, "w", encoding="utf-8") as f:
            f.write(make_page.make_page(template, dict(data, profile_type=kind, unit=unit)))
        wd.get("file://" + path)
        wait_frames(wd)
        got = wd.text_of("#unit")
        check(got == unit, "the %s page counts %s" % (kind, unit), "#unit %r" % got)
        check_console(wd, kind + " page")


class LiveHandler(http.server.BaseHTTPRequestHandler):
    """Serves the live page and, at /data.json, a profile growing per request;
    from the third request on without runPhases (the zoomed frame goes)."""
    page, data, requests = b"", None, 0
    template, page_data = "", None

    def do_GET(self):
        cls = type(self)
        if self.path.startswith("/data.json"):
            cls.requests += 1
            body = json.dumps(live_data(cls.data, cls.requests)).encode()
            ctype = "application/json"
        elif self.path == "/live.html":
            body, ctype = cls.page, "text/html; charset=utf-8"
        elif self.path.startswith("/live.html?type="):
            kind = self.path.split("=", 1)[1]
            body = make_page.make_page(cls.template, dict(cls.page_data, profile_type=kind)).encode()
            ctype = "text/html; charset=utf-8"
        else:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


RUN_PHASES = ["[root]", "java.lang.Thread.run", "PhasedWorkload.main", "PhasedWorkload.runPhases"]


def live_data(data, k):
    d = copy.deepcopy(data)
    chain = [d["root"]]
    for name in RUN_PHASES[1:] + [HOT]:
        chain.append(next(c for c in kids(chain[-1]) if d["names"][c[0]] == name))
    for n in chain:
        n[2] += 100 * min(k, 3)
    chain[-1][3] += 100 * min(k, 3)
    if k >= 3:  # runPhases goes away
        chain[-3][4].remove(chain[-2])
        for n in chain[:-2]:
            n[2] -= chain[-2][2]
    return d


def live_total(data, k):
    return live_data(data, k)["root"][2]


def check_live(template, data):
    page_data = dict(data, live={"url": "/data.json?format=page", "interval_s": 1})
    LiveHandler.page = make_page.make_page(template, page_data).encode()
    LiveHandler.template, LiveHandler.page_data = template, page_data
    LiveHandler.data = data
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), LiveHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = "http://127.0.0.1:%d/live.html" % server.server_address[1]
    try:
        with WebDriver() as wd:
            wd.get(url)
            wait_frames(wd)
            path = next(f["path"] for f in frames(wd)["frames"] if f["name"] == RUN_PHASES[-1])
            wd.click(frame_el(wd, path))
            set_search(wd, "phaseHot")
            first = "{:,}".format(live_total(data, 1))
            got = wait_for(lambda: wd.text_of("#total") == first, 4)
            updated = wd.text_of("#updated")
            state = (zoom_root(wd), match_text(wd), len(wd.find_all(".frame.match")))
            check(got and re.fullmatch(r"updated \d\d:\d\d:\d\d", updated) and state[0] == RUN_PHASES[-1]
                  and state[1].startswith("Matched:") and state[2] > 0,
                  "live mode redraws new data keeping zoom and search",
                  "#total %s (want %s), %r, zoom root %s, %r, %d highlighted"
                  % (wd.text_of("#total"), first, updated, *state))
            third = "{:,}".format(live_total(data, 3))
            got = wait_for(lambda: wd.text_of("#total") == third, 5)
            check(got and zoom_root(wd) == "[root]", "live mode falls back to the root when the zoomed frame goes",
                  "#total %s (want %s), zoom root %s, %d requests served"
                  % (wd.text_of("#total"), third, zoom_root(wd), LiveHandler.requests))
            check_console(wd, "live page")
            # The profile type: another one is the same page with type= set.
            shown = wd.execute("return !document.getElementById('ptype-box').hidden && "
                               "document.getElementById('ptype').value")
            wd.execute("const s = document.getElementById('ptype'); s.value = 'wall'; "
                       "s.dispatchEvent(new Event('change'));")
            got = wait_for(lambda: "type=wall" in wd.execute("return location.href") and
                           wd.execute("const s = document.getElementById('ptype'); return s && s.value") == "wall", 5)
            check(shown == "cpu" and got, "the live view's type selector opens the page of another profile type",
                  "shown as %r, then %s" % (shown, wd.execute("return location.href")))
    finally:
        server.shutdown()
        server.server_close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--screenshot", metavar="DIR", help="save flamegraph.png and flamegraph-diff.png there")
    args = ap.parse_args()
    if args.screenshot:
        os.makedirs(args.screenshot, exist_ok=True)
    with open(os.path.join(WEB, "flamegraph.html"), encoding="utf-8") as f:
        template = f.read()
    with open(os.path.join(WEB, "example-data.json"), encoding="utf-8") as f:
        data = json.load(f)
    check_template(template)
    diff = make_diff(data)
    with tempfile.TemporaryDirectory(prefix="flamegraph-check-") as tmp:
        pages = {}
        for name, obj in (("example", data), ("diff", diff)):
            pages[name] = os.path.join(tmp, name + ".html")
            with open(pages[name], "w", encoding="utf-8") as f:
                f.write(make_page.make_page(template, obj))
        pages["template"] = os.path.join(tmp, "template.html")
        with open(pages["template"], "w", encoding="utf-8") as f:
            f.write(template)
        try:
            with WebDriver(NO_NETWORK) as wd:
                check_main_page(wd, data, "file://" + pages["example"], args.screenshot)
                check_diff_page(wd, diff, "file://" + pages["diff"], args.screenshot)
                check_no_data(wd, "file://" + pages["template"])
                check_big(wd, tmp, template)
                check_units(wd, tmp, template, data)
                wd.get("about:blank")
                check_network_is_cut(wd)
            check_live(template, data)
        except webdriver.WebDriverError as e:
            check(False, "WebDriver", e)
    if failures:
        print("FAILED: %d check(s): %s" % (len(failures), "; ".join(failures)))
        return 1
    print("all flame-graph page checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
