#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Writes a saved-profiles file (state file format version 1, as older
jsampleds wrote and this one still reads) holding one exited process with a
CCT of N nodes: a profile far larger than a test can sample in its time.
  big_profile.py FILE N"""
import struct, zlib, sys
def s(b):
    b = b.encode() if isinstance(b, str) else b
    return struct.pack("<H", len(b)) + b
n_nodes = int(sys.argv[2])
pid = 4000000
stats = [n_nodes, n_nodes, 0, 0, 0, 0]
blk = struct.pack("<IIQBQ", pid, 0, 1, 2, 1) + s("java") + s("BigVM 17")
blk += struct.pack("<I", len(stats)) + b"".join(struct.pack("<Q", v) for v in stats) + struct.pack("<Q", 0)
nm = 2000
blk += struct.pack("<I", nm) + b"".join(struct.pack("<II", i, 1) + s("com.example.Big") + s("method%d" % i) for i in range(1, nm + 1))
nodes = []
fan = 1000
for i in range(1, n_nodes):
    parent = 0 if i <= fan else (i - 1) // fan
    nodes.append(struct.pack("<IIBQ", parent, (i % nm) + 1, 1, 1))
blk += struct.pack("<I", n_nodes) + b"".join(nodes) + struct.pack("<Q", 0)
body = b"JSMPSTAT" + struct.pack("<IQ", 1, 1700000000) + struct.pack("<I", 1) + struct.pack("<I", len(blk)) + blk
open(sys.argv[1], "wb").write(body + struct.pack("<I", zlib.crc32(body)))
