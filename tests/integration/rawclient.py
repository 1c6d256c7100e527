#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Talks raw bytes to jsampled's sockets, for tests of bad input.

  rawclient.py query SOCKET REQUEST
      REQUEST is a Python bytes literal, or long:N for N bytes of 'x';
      sends the bytes, prints the answer
  rawclient.py agent SOCKET MODE
      connects like an agent and misbehaves; MODE is one of
      garbage | bad-magic | huge-frame | lying-batch | silent
      prints what jsampled answered (or 'closed') and exits 0 when jsampled
      closed the connection."""
import ast
import mmap
import os
import socket
import struct
import sys
import tempfile
import time

MAGIC = 0x4741534A
HELLO, FETCH, BATCH, ERROR = 1, 2, 3, 4


def frame(kind, payload):
    return struct.pack("<IHH", len(payload) + 4, kind, 0) + payload


def hello(magic=MAGIC):
    name, ver = b"FakeVM", b"0"
    return frame(HELLO, struct.pack("<IIIBQ", magic, 1, 1, 0, 0)
                 + struct.pack("<H", len(name)) + name + struct.pack("<H", len(ver)) + ver)


def read_until_closed(s, timeout=10.0):
    s.settimeout(timeout)
    got = b""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            return got, False
        except ConnectionResetError:
            return got, True
        if not chunk:
            return got, True
        got += chunk
    return got, False


_jvm_mapping = []


def pose_as_jvm():
    """Maps a file named libjvm.so, as jsampled requires of an agent's
    process (a cheap check any local program can pass, as this does)."""
    d = tempfile.mkdtemp(prefix="fakejvm.")
    p = os.path.join(d, "libjvm.so")
    with open(p, "wb") as f:
        f.write(b"\0" * 4096)
    f = open(p, "rb")
    _jvm_mapping.append((f, mmap.mmap(f.fileno(), 4096, prot=mmap.PROT_READ)))
    # Mapped, it may go: a deleted library still counts (an upgraded
    # package's), and nothing is left behind however this process ends.
    os.unlink(p)
    os.rmdir(d)


def main():
    mode, path = sys.argv[1], sys.argv[2]
    if mode == "agent":
        pose_as_jvm()
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    if mode == "query":
        req = sys.argv[3]
        s.sendall(b"x" * int(req[5:]) if req.startswith("long:") else ast.literal_eval(req))
        got, _ = read_until_closed(s)
        sys.stdout.write(got.decode("utf-8", "replace"))
        return 0
    what = sys.argv[3]
    if what == "garbage":
        s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    elif what == "bad-magic":
        s.sendall(hello(0x12345678))
    elif what == "huge-frame":
        s.sendall(struct.pack("<IHH", 0x7FFFFFFF, BATCH, 0) + b"x" * 100)
    elif what == "lying-batch":
        s.sendall(hello())
        s.recv(64)  # the FETCH
        # A batch claiming a record far longer than itself.
        body = struct.pack("<QQQBI", 0, 5, 0, 0, 1) + struct.pack("<HI", 2, 1 << 30) + b"abc"
        s.sendall(frame(BATCH, body))
    elif what == "silent":
        pass  # connect and say nothing: jsampled drops it after its HELLO timeout
    got, closed = read_until_closed(s, 20.0)
    print("answer:", got[:80], "closed" if closed else "still open")
    return 0 if closed else 1


if __name__ == "__main__":
    sys.exit(main())
