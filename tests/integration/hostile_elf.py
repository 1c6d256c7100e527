#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Crafted ELF files for tests/integration/test_hostile.sh: working programs
and libraries whose headers aim at whoever parses them.

  hostile_elf.py dynamic-bomb SRC OUT     SRC (a program) with 8 SHT_DYNAMIC
      section headers ahead of its own, each naming the same 16 MiB hole of
      a sparse file: it still runs
  hostile_elf.py compressed-bomb SRC OUT MIB   SRC (a library) with a
      .debug_frame section that expands (SHF_COMPRESSED, zlib) to MIB MiB
  hostile_elf.py huge-symtab SRC OUT N    SRC with a .symtab of N symbols
  hostile_elf.py escape-names SRC OUT NAME   SRC with NAME in .symtab
      overwritten by terminal escapes, a newline and a ';' (same length)
"""
import struct
import sys
import zlib

EHDR = struct.Struct("<16sHHIQQQIHHHHHH")
SHDR = struct.Struct("<IIQQQQIIQQ")
SHT_SYMTAB, SHT_STRTAB, SHT_DYNAMIC, SHF_COMPRESSED = 2, 3, 6, 0x800


def load(path):
    data = bytearray(open(path, "rb").read())
    eh = list(EHDR.unpack_from(data, 0))
    shoff, shnum, shstrndx = eh[6], eh[12], eh[13]
    shdrs = [list(SHDR.unpack_from(data, shoff + i * SHDR.size)) for i in range(shnum)]
    return data, eh, shdrs, shstrndx


def section_name(data, shdrs, shstrndx, sh):
    base = shdrs[shstrndx][4] + sh[0]
    return bytes(data[base:data.index(b"\0", base)]).decode("latin-1")


def save(path, data, eh, shdrs, table_at=None):
    """Writes data with a new section header table at its end (or at
    table_at, past the end: a sparse hole between)."""
    at = table_at if table_at is not None else (len(data) + 7) & ~7
    data.extend(b"\0" * (at - len(data)))
    eh[6], eh[12] = at, len(shdrs)
    EHDR.pack_into(data, 0, *eh)
    for sh in shdrs:
        data.extend(SHDR.pack(*sh))
    with open(path, "wb") as f:
        f.write(data)
    import os
    os.chmod(path, 0o755)


def dynamic_bomb(src, out):
    data, eh, shdrs, shstrndx = load(src)
    hole = (len(data) + 4095) & ~4095
    fake = [[0, SHT_DYNAMIC, 0, 0, hole, 16 << 20, 0, 0, 8, 16] for _ in range(8)]
    for sh in shdrs[1:]:
        if sh[6]:
            sh[6] += 8  # sh_link, past the fakes
    eh[13] = shstrndx + 8
    save(out, data, eh, [shdrs[0]] + fake + shdrs[1:], table_at=hole + (16 << 20))


def add_section(data, eh, shdrs, shstrndx, name, typ, flags, payload, link=0, entsize=0):
    """Appends payload as a new section NAME (with a grown copy of the
    section name table at the end too)."""
    old = shdrs[shstrndx]
    names = bytes(data[old[4]:old[4] + old[5]]) + name.encode() + b"\0"
    name_off = old[5]
    at = (len(data) + 7) & ~7
    data.extend(b"\0" * (at - len(data)) + names)
    old[4], old[5] = at, len(names)
    at = (len(data) + 7) & ~7
    data.extend(b"\0" * (at - len(data)) + payload)
    shdrs.append([name_off, typ, flags, 0, at, len(payload), link, 0, 1, entsize])


def compressed_bomb(src, out, mib):
    data, eh, shdrs, shstrndx = load(src)
    size = mib << 20
    body = zlib.compress(b"\0" * size, 9)
    chdr = struct.pack("<IIQQ", 1, 0, size, 1)  # ELFCOMPRESS_ZLIB, ch_size, ch_addralign
    add_section(data, eh, shdrs, shstrndx, ".debug_frame", 1, SHF_COMPRESSED, chdr + body)
    save(out, data, eh, shdrs)
    print(f"{out}: .debug_frame of {len(chdr + body)} bytes expands to {mib} MiB")


def huge_symtab(src, out, n):
    data, eh, shdrs, shstrndx = load(src)
    sym = [sh for sh in shdrs if sh[1] == SHT_SYMTAB]
    if not sym:
        raise SystemExit(f"{src} has no .symtab")
    one = struct.pack("<IBBHQQ", 1, 0x12, 0, 1, 0x1000, 16)  # a global function
    at = (len(data) + 7) & ~7
    data.extend(b"\0" * (at - len(data)) + one * n)
    sym[0][4], sym[0][5] = at, n * len(one)
    save(out, data, eh, shdrs)
    print(f"{out}: .symtab of {n} symbols")


def escape_names(src, out, name):
    data, eh, shdrs, shstrndx = load(src)
    strtabs = [sh for sh in shdrs if sh[1] == SHT_STRTAB and section_name(data, shdrs, shstrndx, sh) == ".strtab"]
    target = name.encode() + b"\0"
    evil = (b"\x1b]0;pwned\x07\x1b[31mred\nfake;frame 99\x9b" + b"x" * 64)[:len(target) - 1] + b"\0"
    for sh in strtabs:
        start, end = sh[4], sh[4] + sh[5]
        at = data.find(target, start, end)
        if at >= 0:
            data[at:at + len(target)] = evil
            break
    else:
        raise SystemExit(f"{name} not in {src}'s .strtab")
    save(out, data, eh, shdrs)
    print(f"{out}: {name} renamed {evil[:-1]!r} in .symtab")


def main():
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "dynamic-bomb":
        return dynamic_bomb(sys.argv[2], sys.argv[3])
    if cmd == "compressed-bomb":
        return compressed_bomb(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    if cmd == "huge-symtab":
        return huge_symtab(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    if cmd == "escape-names":
        return escape_names(sys.argv[2], sys.argv[3], sys.argv[4])
    raise SystemExit(__doc__)


if __name__ == "__main__":
    sys.exit(main())
