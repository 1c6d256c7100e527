#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Writes the seed corpora of the fuzz targets (tests/fuzz/corpus/<target>/):
well-formed inputs of each kind, so the fuzzers start from inputs that get
deep. Run from the repository root; the seeds are committed."""
import gzip
import os
import struct
import zlib

ROOT = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(ROOT, "corpus")


def put(target, name, data):
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def s(b):
    if isinstance(b, str):
        b = b.encode()
    return struct.pack("<H", len(b)) + b


def frame(kind, payload):
    return struct.pack("<IHH", len(payload) + 4, kind, 0) + payload


HELLO, FETCH, BATCH, ERROR, BYE = 1, 2, 3, 4, 5
REC = {"layout": 1, "load": 2, "unload": 3, "class": 4, "method": 5, "thread": 6, "ref": 7, "events": 9}


def hello():
    return frame(HELLO, struct.pack("<IIIBQ", 0x4741534A, 1, 1, 0, 0) + s("FuzzVM") + s("17"))


def layout():
    facts = [("interp.method_offset", -3), ("interp.bcp_offset", -8), ("interp.sender_sp_offset", -1),
             ("interp.locals_offset", -7), ("entry.call_wrapper_offset", -6), ("JavaCallWrapper::_anchor", 32),
             ("JavaFrameAnchor::_last_Java_sp", 0), ("JavaFrameAnchor::_last_Java_fp", 16),
             ("JavaFrameAnchor::_last_Java_pc", 8), ("JavaThread::_anchor", 728), ("JavaThread::_thread_state", 916),
             ("_thread_in_Java", 8), ("_thread_in_Java_trans", 9), ("tls.libjvm_modid", 3),
             ("tls.thr_current_offset", 16), ("StubRoutines::_call_stub_return_address", 0x10000080),
             ("sizeof(ConstMethod)", 56), ("CodeCache::_low_bound", 0x10000000),
             ("CodeCache::_high_bound", 0x20000000), ("java.version.major", 17)]
    return struct.pack("<H", len(facts)) + b"".join(s(n) + struct.pack("<q", v) for n, v in facts)


def code_load(cid, kind, start, size, method, frame_words=4):
    b = struct.pack("<QBBHQIQQiiiiiiiI", cid, kind, 0, 0, start, size, 10, 0, frame_words, 8, 0, size - 16, 8, -1, 4,
                    method) + s("")
    pcs = [(0x10, [(method, 3)]), (0x20, [(method + 1, 7), (method, 5)])]
    b += struct.pack("<I", len(pcs))
    for off, chain in pcs:
        b += struct.pack("<IB", off, len(chain)) + b"".join(struct.pack("<Ii", m, bci) for m, bci in chain)
    b += struct.pack("<I", 2) + struct.pack("<IIB", 0, 4, 0) + struct.pack("<IIB", 4, 6, 1)
    return b


def klass(cid, sig, src):
    return struct.pack("<I", cid) + s(sig) + s(src)


def method(mid, cid, mptr, name):
    b = struct.pack("<IIQQII", mid, cid, mptr, mptr + 0x1000, 40, 0) + s(name) + s("()V")
    b += struct.pack("<I", 2) + struct.pack("<II", 0, 10) + struct.pack("<II", 5, 11)
    b += struct.pack("<i", 2) + struct.pack("<HH", 3, 7)
    return b


def ref(mid, cid, mptr):
    return struct.pack("<IIQQI", mid, cid, mptr, mptr + 0x1000, 40)


def thread(tid, alive):
    return struct.pack("<IBQQQQ", tid, alive, 0x7f0000001000, 0x7ffe00000000, 1 << 20, 5) + s("main")


def events(evs):
    """An EVENTS record: (kind, value, class id, [method ids leaf first])."""
    b = struct.pack("<QQQQQI", 524288, 1000000, 0, 0, 0, len(evs))
    for kind, value, cid, ids in evs:
        b += struct.pack("<BBHIQQI", kind, 0, len(ids), 1234, 5000000000, value, cid)
        for i, mid in enumerate(ids):
            b += struct.pack("<Ii", mid, i)
    return b


def batch(records, more=0):
    b = struct.pack("<QQQBI", 0, len(records), 100, more, len(records))
    for kind, body in records:
        b += struct.pack("<HI", kind, len(body)) + body
    return b


records = [(REC["layout"], layout()), (REC["class"], klass(1, "Lapp/Main;", "Main.java")),
           (REC["method"], method(1, 1, 0x7000, "run")), (REC["method"], method(2, 1, 0x7100, "work")),
           (REC["ref"], ref(3, 1, 0x7200)), (REC["load"], code_load(1, 1, 0x10001000, 0x100, 1)),
           (REC["load"], code_load(2, 8, 0x10000000, 0x100, 0, 0)), (REC["unload"], struct.pack("<QQ", 2, 50)),
           (REC["thread"], thread(1234, 1)), (REC["thread"], thread(1234, 0)),
           (REC["events"], events([(1, 4096, 1, [2, 1]), (2, 50000, 1, [1]), (3, 900, 0, [2, 2, 1])]))]

# agent link: whole conversations
put("agent_link", "hello", hello())
put("agent_link", "hello_batch", hello() + frame(BATCH, batch(records)))
put("agent_link", "hello_batch_more_bye", hello() + frame(BATCH, batch(records[:3], 1)) + frame(BATCH, batch(records[3:])) +
    frame(BYE, b""))
put("agent_link", "hello_error", hello() + frame(ERROR, s("stopping")))
# records: first byte = kind, then the payload; also whole batches
for i, (kind, body) in enumerate(records):
    put("records", "rec%02d" % i, bytes([kind]) + body)
put("records", "batch", batch(records))
# queries
for i, q in enumerate(["list", "cct 4242", "cct 4242 collapsed", "cct 4242 json", "stats", "stats json",
                       "stats 4242 json", "sampling off", "cct 4242 tree"]):
    put("query", "q%d" % i, (q + "\n").encode())
# attach replies
for i, r in enumerate([b"0\n0\n", b"0\nreturn code: 0\n", b"0\nreturn code: 100\n", b"101\nnope\n", b"-1\n"]):
    put("attach_reply", "r%d" % i, r)
# procfs text
put("procfs", "status", b"Name:\tjava\nUid:\t1000\t1000\t1000\t1000\nGid:\t100\t100\t100\t100\n"
    b"NSpid:\t4242\t7\nSigCgt:\t0000000000004000\n")
put("procfs", "stat", b"4242 (java (x) y) S 1 4242 4242 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 30 0 123456 0 0\n")
put("procfs", "maps", b"7f00-7f10 r-xp 00000000 08:01 123 /usr/lib/jvm/lib/server/libjvm.so (deleted)\n")
put("procfs", "cgroup", b"0::/system.slice/app.service\n")
put("procfs", "environ", b"PATH=/bin\0JAVA_TOOL_OPTIONS=-Xmx1g -Djsampled.disable=true\0")


# state file (version 2): one process with a small tree
def state():
    stats = [7, 5, 0, 0, 0, 0]
    blk = struct.pack("<IIQBQ", 4000000, 1000, 12345, 2, 40) + s("java") + s("FuzzVM 17")
    blk += struct.pack("<I", len(stats)) + b"".join(struct.pack("<Q", v) for v in stats) + struct.pack("<Q", 0)
    blk += struct.pack("<I", 2) + struct.pack("<II", 1, 7) + s("app.Main") + s("main")
    blk += struct.pack("<II", 2, 7) + s("app.Main") + s("work")
    nodes = [(0, 1, 0, 0), (1, 2, 1, 5), (0, 3, 4, 2)]
    blk += struct.pack("<I", len(nodes) + 1) + b"".join(struct.pack("<IIBQ", *n) for n in nodes)
    blk += struct.pack("<Q", 0)
    body = b"JSMPSTAT" + struct.pack("<IQ", 2, 1700000000) + s("0" * 36) + struct.pack("<I", 1)
    body += struct.pack("<I", len(blk)) + blk
    return body


# state file (version 3): node positions (bci) and time slices too
def state3():
    stats = [7, 5, 0, 0, 0, 0]
    blk = struct.pack("<IIQBQ", 4000000, 1000, 12345, 2, 40) + s("java") + s("FuzzVM 17")
    blk += struct.pack("<I", len(stats)) + b"".join(struct.pack("<Q", v) for v in stats) + struct.pack("<Q", 0)
    blk += struct.pack("<I", 2) + struct.pack("<II", 1, 7) + s("app.Main") + s("main")
    blk += struct.pack("<II", 2, 7) + s("app.Main") + s("work")
    nodes = [(0, 1, 0, 5, 0), (1, 2, 1, 12, 5), (0, 3, 4, -1, 2)]
    blk += struct.pack("<I", len(nodes) + 1) + b"".join(struct.pack("<IIBiQ", *n) for n in nodes)
    blk += struct.pack("<Q", 0)
    slices = [(1700002800, 3600, 4, [(2, 4)]), (1700006400, 60, 2, [(2, 1), (3, 1)]), (1700006460, 10, 1, [(3, 1)])]
    blk += struct.pack("<I", len(slices))
    for start, span, samples, counts in slices:
        blk += struct.pack("<qIQI", start, span, samples, len(counts))
        blk += b"".join(struct.pack("<IQ", node, n) for node, n in counts)
    body = b"JSMPSTAT" + struct.pack("<IQ", 3, 1700000000) + s("0" * 36) + struct.pack("<I", 1)
    body += struct.pack("<I", len(blk)) + blk
    return body


for name, st in (("one_process", state()), ("v3_slices", state3())):
    put("state_file", name + "_crc_added", b"\x01" + st)
    # "J" is even: used as it is, checksum included.
    put("state_file", name + "_crc_given", st + struct.pack("<I", zlib.crc32(st)))


# native_helper: a real library of the system as the crafted file, with a
# sample whose pc lies in it (3 bytes of file length, a byte, the file,
# then registers and stack)
for lib in ("/lib/x86_64-linux-gnu/libdl.so.2", "/usr/lib/x86_64-linux-gnu/libdl.so.2"):
    if os.path.exists(lib):
        elf = open(lib, "rb").read()
        regs = struct.pack("<17Q", 0x1050, 0x7ffd00000100, 0x7ffd00000200, 0, 0x1100, *([0] * 12))
        stack = struct.pack("<64Q", *[0x401000 + 16 * i for i in range(64)])
        put("native_helper", "libdl", struct.pack("<I", len(elf))[:3] + b"\0" + elf + regs + stack)
        put("native_helper", "libdl_truncated", struct.pack("<I", len(elf))[:3] + b"\0" + elf[:4096] + regs)
        break

# perf_map: what JITs write
put("perf_map", "node", b"7f0000001000 40 LazyCompile:*foo /app/x.js:1\n7f0000001040 20 Builtin:ArgumentsAdaptor\n"
    b"bad line\n7f0000001030 30 overlapping later\n")

# java_launcher: a sparse file, headers far apart (S, then u32 offset, u8 length, bytes)
ehdr = struct.pack("<16sHHIQQQIHHHHHH", b"\x7fELF\x02\x01\x01" + b"\0" * 9, 2, 62, 1, 0, 0x10000000, 0, 0, 64,
                   56, 2, 64, 0, 0)
phdr = struct.pack("<IIQQQQQQ", 2, 4, 0x20000000, 0, 0, 32, 32, 8)  # PT_DYNAMIC far away
put("java_launcher", "sparse", b"S" + struct.pack("<IB", 0, len(ehdr)) + ehdr + struct.pack("<IB", 0x10000000, len(phdr)) +
    phdr + struct.pack("<IB", 0x20000000, 32) + struct.pack("<QQQQ", 1, 1, 5, 0x1000))


# pprof_read: a profile.proto by hand (string table, a sample type, a sample), plain and gzipped
def field(num, wire, payload):
    if wire == 0:
        out = bytearray([num << 3])
        v = payload
        while True:
            out.append((v & 0x7f) | (0x80 if v > 0x7f else 0))
            v >>= 7
            if not v:
                break
        return bytes(out)
    return bytes([num << 3 | 2, len(payload)]) + payload


prof = (field(1, 2, field(1, 0, 1) + field(2, 0, 2)) + field(2, 2, field(1, 2, bytes([1])) + field(2, 2, bytes([7]))) +
        b"".join(field(6, 2, x) for x in (b"", b"samples", b"count")))
put("pprof_read", "plain", prof)
put("pprof_read", "gzip", gzip.compress(prof, mtime=0))

# serve_router: url, since, from, until, base, target
for i, q in enumerate([b"/p/123\0\0\0\0\0", b"/download/42.svg\0-5m\0\0\0\0", b"/api/diff\0\0\0\0 1@-10m..-5m\0 2",
                       b"/api/page/7\0\0-1h\0-30m\0\0", b"/\0\0\0\0\0"]):
    put("serve_router", "q%d" % i, q)

# process_identity: cmdline, 0xff, cgroup
put("process_identity", "unit", b"java\0-Djsampled.service=x\0-cp\0a.jar\0com.example.Main\xff0::/system.slice/a.service\n")
put("process_identity", "pod", b"java\0-jar\0/app/b-1.jar\xff0::/kubepods.slice/kubepods-pod1f2e3d4c_5b6a_7980_a1b2_c3d4e5f60718"
    b".slice/cri-containerd-" + b"ab" * 32 + b".scope\n")


# decoder: samples of a recorded run
def samples(path, limit):
    with gzip.open(path, "rb") as f:
        data = f.read()
    off, out = 8, []
    while off + 17 <= len(data) and len(out) < limit:
        typ, pid, t, ln = struct.unpack_from("<BIQI", data, off)
        off += 17
        if typ == 3:
            out.append(data[off:off + ln])
        off += ln
    return out


rec = os.path.join(ROOT, "..", "corpus", "collections-jdk17.jsrec")
for i, smp in enumerate(samples(rec, 60)):
    put("decoder", "sample%02d" % i, smp)
print("seeds written to", OUT)
