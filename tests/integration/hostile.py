#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Hostile local programs for tests/integration/test_hostile.sh: fake agents
that lie to jsampled, fake JVMs that answer the attach protocol with lies,
connection floods. Each mode prints what it did; the shell test checks what
jsampled did about it.

  hostile.py agent SOCKET MODE [ARGS]   a process posing as a JVM with an agent:
      huge-ids              METHOD_REF/CLASS ids near the top of their ranges
      flood                 METHOD records with big line tables until cut off
      threads-of PID MARK   THREAD records naming every thread of another process
      exec-setuid           gets sampled, forks a helper that keeps the socket,
                            then execs su (setuid root) and waits for a password
      exit-keep             gets sampled, forks a helper that keeps the socket
                            and answers, then exits (its pid can be reused)
      escapes               names full of terminal escapes and bytes not UTF-8
      offset24 BUSY_S       a layout whose anchor offset is 24, its own thread
                            registered, then busy for BUSY_S seconds
      reconnect-as UID      says HELLO, leaves, becomes UID, says HELLO again
      withhold BUSY_S       never reports a complete state (every batch "more"),
                            busy in "code" it never describes
  hostile.py fake-jvm MODE [ARG]        maps libjvm.so and catches SIGQUIT:
      silent                never opens an attach listener
      answer                opens /tmp/.java_pid<pid> at once and claims success
      garbage               opens it and answers a megabyte of noise
      symlink TARGET        on SIGQUIT, makes /tmp/.java_pid<pid> a link to TARGET
  hostile.py flood SOCKET N SECONDS     holds N idle connections
"""
import ctypes
import mmap
import os
import signal
import socket
import struct
import sys
import tempfile
import threading
import time

MAGIC = 0x4741534A
HELLO, FETCH, BATCH, ERROR, BYE = 1, 2, 3, 4, 5
R_LAYOUT, R_LOAD, R_UNLOAD, R_CLASS, R_METHOD, R_THREAD, R_REF = 1, 2, 3, 4, 5, 6, 7
CODE_LOW, CODE_HIGH = 0x10000000, 0x20000000
_keep = []


def pose_as_jvm():
    """Maps a file named libjvm.so: all jsampled asks of an agent's process
    (any local program can do the same, as this one does)."""
    d = tempfile.mkdtemp(prefix="fakejvm.")
    p = os.path.join(d, "libjvm.so")
    with open(p, "wb") as f:
        f.write(b"\0" * 4096)
    f = open(p, "rb")
    _keep.append((f, mmap.mmap(f.fileno(), 4096, prot=mmap.PROT_READ)))
    # Mapped, it may go: a deleted library still counts (an upgraded
    # package's), and nothing is left behind however this process ends.
    os.unlink(p)
    os.rmdir(d)


def s(b):
    if isinstance(b, str):
        b = b.encode("utf-8", "surrogateescape")
    return struct.pack("<H", len(b)) + b


def frame(kind, payload):
    return struct.pack("<IHH", len(payload) + 4, kind, 0) + payload


def hello(vm="FakeVM", ver="17"):
    return frame(HELLO, struct.pack("<IIIBQ", MAGIC, 1, os.getpid(), 0, 0) + s(vm) + s(ver))


def layout(anchor_sp=0, anchor_fp=16, anchor_pc=8):
    facts = [("interp.method_offset", -3), ("interp.bcp_offset", -8), ("interp.sender_sp_offset", -1),
             ("interp.locals_offset", -7), ("entry.call_wrapper_offset", -6), ("JavaCallWrapper::_anchor", 32),
             ("JavaFrameAnchor::_last_Java_sp", anchor_sp), ("JavaFrameAnchor::_last_Java_fp", anchor_fp),
             ("JavaFrameAnchor::_last_Java_pc", anchor_pc), ("JavaThread::_anchor", 64),
             ("JavaThread::_thread_state", 8), ("_thread_in_Java", 8), ("_thread_in_Java_trans", 9),
             ("StubRoutines::_call_stub_return_address", CODE_LOW + 0x80), ("sizeof(ConstMethod)", 56),
             ("CodeCache::_low_bound", CODE_LOW), ("CodeCache::_high_bound", CODE_HIGH),
             ("java.version.major", 17)]
    return struct.pack("<H", len(facts)) + b"".join(s(n) + struct.pack("<q", v) for n, v in facts)


def klass(cid, sig):
    return struct.pack("<I", cid) + s(sig) + s("Fake.java")


def method(mid, cid, mptr, name, nlines=1):
    b = struct.pack("<IIQQII", mid, cid, mptr, mptr + 0x1000, 40, 0) + s(name) + s("()V")
    b += struct.pack("<I", nlines) + b"".join(struct.pack("<II", i % 65536, i) for i in range(nlines))
    return b + struct.pack("<i", -1)


def ref(mid, cid, mptr):
    return struct.pack("<IIQQI", mid, cid, mptr, mptr + 0x1000, 40)


def thread(tid, alive, java_thread, base, size, name="main"):
    return struct.pack("<IBQQQQ", tid, alive, java_thread, base, size, 0) + s(name)


def batch(records, more=0, cut=None):
    cut = time.clock_gettime_ns(time.CLOCK_MONOTONIC) if cut is None else cut
    b = struct.pack("<QQQBI", 0, len(records) + 1, cut, more, len(records))
    for kind, body in records:
        b += struct.pack("<HI", kind, len(body)) + body
    return b


def recv_frame(sock):
    hdr = b""
    while len(hdr) < 8:
        c = sock.recv(8 - len(hdr))
        if not c:
            return None, None
        hdr += c
    n, kind, _ = struct.unpack("<IHH", hdr)
    body = b""
    while len(body) < n - 4:
        c = sock.recv(n - 4 - len(body))
        if not c:
            return None, None
        body += c
    return kind, body


def connect(path):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(path)
    return sock


def serve(sock, first, more=0, seconds=None):
    """Answers FETCHes: first the records, then empty batches. Returns why
    the connection ended."""
    end = time.time() + seconds if seconds else None
    sent_first = False
    sock.settimeout(0.5)
    while end is None or time.time() < end:
        try:
            kind, body = recv_frame(sock)
        except socket.timeout:
            continue
        except OSError as e:
            return "error %s" % e
        if kind is None:
            return "closed by jsampled"
        if kind == ERROR:
            return "refused: %r" % body[2:]
        if kind == FETCH:
            try:
                sock.sendall(frame(BATCH, batch([] if sent_first else first, more)))
            except OSError as e:
                return "error %s" % e
            sent_first = True
    return "still connected"


def own_stack():
    """The [stack] mapping of this (main) thread: low, high."""
    with open("/proc/self/maps") as f:
        for line in f:
            if line.rstrip().endswith("[stack]"):
                lo, hi = line.split()[0].split("-")
                return int(lo, 16), int(hi, 16)
    raise SystemExit("no [stack] mapping")


def busy(seconds):
    end = time.time() + seconds
    x = 0
    while time.time() < end:
        for i in range(10000):
            x += i
    return x


def agent(path, mode, args):
    pose_as_jvm()
    sock = connect(path)
    if mode == "huge-ids":
        sock.sendall(hello())
        recs = [(R_CLASS, klass((1 << 22) - 1, "LBig;")), (R_REF, ref((1 << 24) - 100, (1 << 22) - 1, 0x7000)),
                (R_METHOD, method((1 << 24) - 99, (1 << 22) - 1, 0x7100, "big"))]
        print(serve(sock, recs, seconds=float(args[0]) if args else 8), flush=True)
    elif mode == "flood":
        sock.sendall(hello())
        kind, body = recv_frame(sock)
        mid, sent = 1, 0
        sock.settimeout(5)
        try:
            while True:
                recs = []
                size = 0
                while size < (3 << 20):
                    body = method(mid, 1, 0x100000 + 16 * mid, "m%d" % mid, nlines=4000)
                    recs.append((R_METHOD, body))
                    size += len(body)
                    mid += 1
                sock.sendall(frame(BATCH, batch(recs, more=1)))
                sent += size
                if sent > (2 << 30):
                    print("not cut off after %d MiB" % (sent >> 20), flush=True)
                    return 1
                kind, body = recv_frame(sock)  # the next FETCH
                if kind is None or kind == ERROR:
                    break
        except OSError:
            pass
        print("cut off after %d MiB of agent data" % (sent >> 20), flush=True)
    elif mode == "threads-of":
        victim, mark = int(args[0]), int(args[1], 0)
        tids = [int(t) for t in os.listdir("/proc/%d/task" % victim)]
        recs = [(R_LAYOUT, layout())] + [(R_THREAD, thread(t, 1, 0x1000, mark, 1 << 20)) for t in tids]
        sock.sendall(hello())
        print("claimed %d threads of pid %d" % (len(tids), victim), flush=True)
        print(serve(sock, recs, seconds=float(args[2]) if len(args) > 2 else 6), flush=True)
    elif mode in ("exec-setuid", "exit-keep"):
        sock.sendall(hello())
        lo, hi = own_stack()
        recs = [(R_LAYOUT, layout()), (R_THREAD, thread(os.getpid(), 1, 0, hi, hi - lo))]
        kind, body = recv_frame(sock)
        sock.sendall(frame(BATCH, batch(recs)))
        time.sleep(1)  # sampled by now
        rd, wr = os.pipe()
        helper = os.fork()
        if helper == 0:  # keeps the connection, answers, and the pipe's write end
            os.close(rd)
            until = time.time() + (float(args[0]) if args else 20)
            why = serve(sock, [], seconds=until - time.time())
            print("helper: " + why, flush=True)
            time.sleep(max(0, until - time.time()))  # su waits for a password till then
            os._exit(0)
        print("helper %d keeps the connection; %d %s" % (helper, os.getpid(),
              "execs su" if mode == "exec-setuid" else "exits"), flush=True)
        sock.close()
        if mode == "exit-keep":
            os._exit(0)
        os.close(wr)
        os.dup2(rd, 0)
        os.execv("/usr/bin/su", ["su", "root", "-c", "true"])
    elif mode == "escapes":
        esc = "\x1b]0;owned\x07\x1b[2J\x9b31m\udcff"
        sock.sendall(hello(vm="Fake" + esc, ver="1\n2" + esc))
        lo, hi = own_stack()
        recs = [(R_LAYOUT, layout()), (R_CLASS, klass(1, "Lx" + esc + ";")),
                (R_METHOD, method(1, 1, 0x7000, "m" + esc)),
                (R_THREAD, thread(os.getpid(), 1, 0, hi, hi - lo, name="t" + esc))]
        print(serve(sock, recs, seconds=float(args[0]) if args else 5), flush=True)
    elif mode == "offset24":
        buf = ctypes.create_string_buffer(256)
        for i in range(0, 256, 8):  # a JavaThread of known words: 0x4141..41, 0x4242..42, ...
            struct.pack_into("<Q", buf, i, int.from_bytes(bytes([0x41 + i // 8]) * 8, "little"))
        lo, hi = own_stack()
        recs = [(R_LAYOUT, layout(anchor_sp=24, anchor_fp=0, anchor_pc=8)),
                (R_THREAD, thread(os.getpid(), 1, ctypes.addressof(buf), hi, hi - lo))]
        sock.sendall(hello())
        kind, body = recv_frame(sock)
        sock.sendall(frame(BATCH, batch(recs)))
        time.sleep(0.5)
        busy(float(args[0]))
        print("busy done", flush=True)
    elif mode == "reconnect-as":
        sock.sendall(hello())
        kind, body = recv_frame(sock)
        sock.sendall(frame(BATCH, batch([(R_LAYOUT, layout())])))
        time.sleep(1)
        sock.close()
        uid = int(args[0])
        os.setgid(uid if len(args) < 2 else int(args[1]))
        os.setuid(uid)
        time.sleep(1)
        sock = connect(path)
        sock.sendall(hello())
        print("reconnected as uid %d: %s" % (uid, serve(sock, [], seconds=4)), flush=True)
    elif mode == "withhold":
        sock.sendall(hello())
        lo, hi = own_stack()
        recs = [(R_LAYOUT, layout()), (R_THREAD, thread(os.getpid(), 1, 0, hi, hi - lo))]
        kind, body = recv_frame(sock)
        sock.sendall(frame(BATCH, batch(recs, more=1)))
        # Answers every FETCH with "more", in a thread, while the main
        # thread burns CPU.
        threading.Thread(target=serve, args=(sock, [], 1, float(args[0])), daemon=True).start()
        busy(float(args[0]))
        print("withheld for %s s" % args[0], flush=True)
    else:
        raise SystemExit("unknown agent mode " + mode)
    return 0


def listener(path, reply):
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(4)

    def run():
        while True:
            c, _ = srv.accept()
            try:
                c.settimeout(5)
                c.recv(4096)
                c.sendall(reply)
            except OSError:
                pass
            c.close()
    threading.Thread(target=run, daemon=True).start()


def fake_jvm(mode, args):
    pose_as_jvm()
    pid = os.getpid()
    path = "/tmp/.java_pid%d" % pid

    busy = []

    def on_quit(signum, frm):
        # A second SIGQUIT may come while the first is handled (jsampled
        # sends it again when no listener shows up): once at a time.
        if busy:
            return
        busy.append(1)
        try:
            if mode == "symlink":
                os.symlink(args[0], path)
            elif mode == "answer" and not os.path.exists(path):
                listener(path, b"0\n0\n")
            elif mode == "garbage" and not os.path.exists(path):
                listener(path, os.urandom(1 << 20))
        except OSError:
            pass
        finally:
            busy.clear()
    signal.signal(signal.SIGQUIT, on_quit)
    print("fake JVM %d (%s)" % (pid, mode), flush=True)
    while True:
        time.sleep(1)


def flood(path, n, seconds):
    import resource
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    socks = []
    refused = 0
    for _ in range(n):
        try:
            socks.append(connect(path))
        except OSError:
            refused += 1
    time.sleep(0.5)
    closed = 0
    for s_ in socks:
        s_.setblocking(False)
        try:
            if s_.recv(1) == b"":
                closed += 1
        except BlockingIOError:
            pass
        except OSError:
            closed += 1
    print("opened %d, refused %d, closed by jsampled %d" % (len(socks), refused, closed), flush=True)
    time.sleep(seconds)
    return 0


def main():
    if sys.argv[1] == "agent":
        return agent(sys.argv[2], sys.argv[3], sys.argv[4:])
    if sys.argv[1] == "fake-jvm":
        return fake_jvm(sys.argv[2], sys.argv[3:])
    if sys.argv[1] == "flood":
        return flood(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]))
    raise SystemExit(__doc__)


if __name__ == "__main__":
    sys.exit(main())
