#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Embeds a file in C: embed.py SYMBOL IN OUT.c writes `const char SYMBOL[]`
holding IN's bytes (NUL-terminated) and `const unsigned long SYMBOL_len`.
The web page is kept as a readable .html in the repository and compiled
into the programs that serve it."""
import sys

sym, src, dst = sys.argv[1:4]
data = open(src, "rb").read()
if b"\0" in data:
    sys.exit(f"embed.py: {src} contains a NUL byte")
lines = []
for i in range(0, len(data), 80):
    chunk = data[i:i + 80]
    lines.append('"' + "".join(
        c if 0x20 <= b < 0x7f and c not in '"\\?' else f"\\{b:03o}"
        for b, c in ((b, chr(b)) for b in chunk)) + '"')
with open(dst, "w") as f:
    f.write(f"/* Generated from {src} by embed.py: do not edit. */\n")
    f.write(f"const char {sym}[] =\n" + "\n".join(lines or ['""']) + ";\n")
    f.write(f"const unsigned long {sym}_len = {len(data)};\n")
