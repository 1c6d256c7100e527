#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""A local stand-in for a Pyroscope server (none is packaged for Debian):
it checks every request against the documented ingest API
(https://grafana.com/docs/pyroscope/latest/configure-server/about-server-api/)
and decodes each profile with `go tool pprof -raw`.

  POST /ingest?name=APP{k=v,...}&from=S&until=S&format=pprof&spyName=..&sampleRate=HZ
  body: multipart/form-data with the pprof in the part named "profile"

Accepted requests are appended to --log as JSON lines (name, labels, from,
until, samples, ...); a request that breaks the contract is answered 400 and
logged with "error". --fail-first N answers the first N requests 503 (the
exporter must retry them). --token/--user/--password/--tenant: the
credentials and tenant every request must carry.
"""
import argparse
import base64
import email.parser
import email.policy
import http.server
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import urllib.parse

NAME = re.compile(r"^([A-Za-z0-9._\-/:]+)\{([^{}]*)\}$")
LABEL = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=([A-Za-z0-9._\-/:+]+)$")
PARAMS = {"name", "from", "until", "format", "spyName", "sampleRate"}


def pprof_samples(data, tmp):
    """Sample count of a (gzipped) pprof, as go tool pprof reads it."""
    return pprof_read(data, tmp)[0]


def sample_threads(raw):
    """Samples per value of their thread label in go tool pprof -raw's
    listing (a label line follows its sample's line); "" for samples
    without one."""
    threads, last = {}, None
    for line in raw.splitlines():
        sm = re.match(r"^\s+(\d+)\s+\d+:\s+[\d ]+$", line)
        if sm:
            if last is not None:
                threads[""] = threads.get("", 0) + last
            last = int(sm.group(1))
            continue
        lm = re.search(r"\bthread:\[([^\]]*)\]", line)
        if lm and last is not None:
            threads[lm.group(1)] = threads.get(lm.group(1), 0) + last
            last = None
        elif not line.startswith(" ") and last is not None:
            threads[""] = threads.get("", 0) + last
            last = None
    if last is not None:
        threads[""] = threads.get("", 0) + last
    return threads


def pprof_read(data, tmp):
    """(sample count, the profile type, samples per thread label) of a
    (gzipped) pprof, as go tool pprof reads it: cpu, offcpu or wall
    (samples/count TYPE/nanoseconds),
    alloc (alloc_in_new_tlab_objects/count alloc_in_new_tlab_bytes/bytes,
    period space/bytes) or lock (contentions/count delay/nanoseconds,
    period mutex/count): Pyroscope's names of Java's types."""
    fd, path = tempfile.mkstemp(suffix=".pb.gz", dir=tmp)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    env = dict(os.environ, HOME=tmp, GOCACHE=os.path.join(tmp, "gocache"))
    raw = subprocess.run(["go", "tool", "pprof", "-raw", path], capture_output=True, text=True, env=env,
                         timeout=120)
    os.unlink(path)
    if raw.returncode != 0:
        raise ValueError("go tool pprof -raw: " + raw.stderr.strip()[:200])
    lines = re.findall(r"^\s+(\d+)\s+(\d+):\s+[\d ]+$", raw.stdout, re.M)
    if not lines:
        raise ValueError("no samples in the profile")
    kind = re.search(r"^samples/count (\w+)/nanoseconds", raw.stdout, re.M)
    if kind:
        return sum(int(a) for a, _ in lines), kind.group(1), sample_threads(raw.stdout)
    # Java's allocation and lock profiles, as Pyroscope names them
    # (memory:alloc_in_new_tlab_bytes:bytes:space:bytes,
    # mutex:delay:nanoseconds:mutex:count)
    for name, types, period in (("alloc", "alloc_in_new_tlab_objects/count alloc_in_new_tlab_bytes/bytes", "space bytes"),
                                ("lock", "contentions/count delay/nanoseconds", "mutex count")):
        if re.search(r"^" + types + r"(\[dflt\])?$", raw.stdout, re.M):
            if not re.search(r"^PeriodType: " + period + "$", raw.stdout, re.M):
                raise ValueError("a %s profile whose period type is not %s" % (name, period))
            return sum(int(a) for a, _ in lines), name, sample_threads(raw.stdout)
    raise ValueError("sample types of no profile type (samples/count TYPE/nanoseconds, alloc_*, contentions delay)")


class Receiver(http.server.BaseHTTPRequestHandler):
    server_version = "pyroscope-contract/1"

    def log_message(self, fmt, *args):
        pass

    def record(self, entry):
        with self.server.lock:
            with open(self.server.args.log, "a") as f:
                f.write(json.dumps(entry) + "\n")

    def refuse(self, code, why):
        self.record({"error": why, "path": self.path})
        self.send_response(code)
        self.end_headers()
        self.wfile.write(why.encode() + b"\n")

    def check_auth(self):
        a = self.server.args
        got = self.headers.get("Authorization", "")
        if a.token and got != "Bearer " + a.token:
            return "Authorization is not the bearer token"
        if a.user:
            want = "Basic " + base64.b64encode(("%s:%s" % (a.user, a.password)).encode()).decode()
            if got != want:
                return "Authorization is not the basic credentials"
        if a.tenant and self.headers.get("X-Scope-OrgID") != a.tenant:
            return "X-Scope-OrgID is not the tenant"
        return None

    def do_GET(self):
        self.refuse(405, "only POST /ingest")

    def do_POST(self):
        a = self.server.args
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        url = urllib.parse.urlsplit(self.path)
        if url.path != "/ingest":
            return self.refuse(404, "path %s is not /ingest" % url.path)
        with self.server.lock:
            self.server.requests += 1
            n = self.server.requests
        if n <= a.fail_first:
            self.record({"refused_503": n})
            self.send_response(503)
            self.end_headers()
            return
        why = self.check_auth()
        if why:
            return self.refuse(401, why)
        q = urllib.parse.parse_qs(url.query, keep_blank_values=True, strict_parsing=True)
        if set(q) != PARAMS or any(len(v) != 1 for v in q.values()):
            return self.refuse(400, "query parameters %s, want exactly %s" % (sorted(q), sorted(PARAMS)))
        q = {k: v[0] for k, v in q.items()}
        m = NAME.match(q["name"])
        if not m:
            return self.refuse(400, "name %r is not APP{labels}" % q["name"])
        labels = {}
        for part in m.group(2).split(","):
            lm = LABEL.match(part)
            if not lm or lm.group(1) in labels:
                return self.refuse(400, "label %r malformed or repeated" % part)
            labels[lm.group(1)] = lm.group(2)
        if "host" not in labels or "pid" not in labels:
            return self.refuse(400, "labels lack host or pid: %s" % labels)
        try:
            frm, until, rate = int(q["from"]), int(q["until"]), int(q["sampleRate"])
        except ValueError:
            return self.refuse(400, "from, until, sampleRate must be integers")
        if not (10**9 < frm < until < 10**10):
            return self.refuse(400, "from/until %d..%d are not seconds since the epoch, from < until" % (frm, until))
        if q["format"] != "pprof" or q["spyName"] != "jsampled" or rate <= 0:
            return self.refuse(400, "format=%s spyName=%s sampleRate=%s" % (q["format"], q["spyName"], rate))
        ctype = self.headers.get("Content-Type", "")
        if not ctype.startswith("multipart/form-data") or "boundary=" not in ctype:
            return self.refuse(400, "Content-Type %r is not multipart/form-data" % ctype)
        msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            b"Content-Type: " + ctype.encode() + b"\r\n\r\n" + body)
        parts = {p.get_param("name", header="content-disposition"): p for p in msg.iter_parts()}
        if "profile" not in parts:
            return self.refuse(400, "no multipart part named profile (parts: %s)" % sorted(parts))
        data = parts["profile"].get_payload(decode=True)
        try:
            samples, kind, threads = pprof_read(data, a.tmp)
        except Exception as e:  # a profile that does not decode breaks the contract
            return self.refuse(400, "profile: %s" % e)
        # The profile type: the name's suffix (APP.wall), the same as the
        # pprof's sample type; none for CPU.
        suffix = m.group(1).rsplit(".", 1)[1] if "." in m.group(1) else ""
        if (suffix if suffix in ("wall", "offcpu", "alloc", "lock") else "cpu") != kind:
            return self.refuse(400, "name %s with a %s profile" % (m.group(1), kind))
        self.record({"app": m.group(1), "labels": labels, "from": frm, "until": until, "sampleRate": rate,
                     "samples": samples, "type": kind, "threads": threads, "bytes": len(data)})
        self.send_response(200)
        self.end_headers()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--tmp", required=True)
    p.add_argument("--fail-first", type=int, default=0)
    p.add_argument("--token")
    p.add_argument("--user")
    p.add_argument("--password")
    p.add_argument("--tenant")
    a = p.parse_args()
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", a.port), Receiver)
    srv.args, srv.lock, srv.requests = a, threading.Lock(), 0
    print("listening on 127.0.0.1:%d" % a.port, flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
