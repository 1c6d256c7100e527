#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Checks of test_native_stacks.sh on collapsed profiles (leaf last).
Frame kinds by suffix: _[j] _[i] _[0] _[n] Java, _[k] kernel, [..] pseudo,
anything else a native (C/C++) function. Prints its figures; no count is
hard-coded beyond "at least one" and the shares stated below."""
import sys

JAVA = ("_[j]", "_[i]", "_[0]", "_[n]")
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


def kind(frame):
    if frame.endswith(JAVA):
        return "java"
    if frame.endswith("_[k]"):
        return "kernel"
    if frame.startswith("[") and frame.endswith("]"):
        return "pseudo"
    return "c"


def read(path):
    out = []
    for line in open(path):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        if stack:
            out.append((stack.split(";"), int(n)))
    return out


def order_ok(frames):
    """A pseudo or Java frame at the root, kernel frames only at the leaf
    end. C frames sit above a Java frame (native code it called, or the VM
    it called: a class initializer, a JNI upcall, in which case Java frames
    follow them again) or above a pseudo frame (JVM-internal threads)."""
    kinds = [kind(f) for f in frames]
    if not kinds or kinds[0] in ("c", "kernel"):
        return False
    if "kernel" in kinds and any(k != "kernel" for k in kinds[kinds.index("kernel"):]):
        return False
    return True


def replay_main(args):
    """--replay LIVE REPLAY HELD...: the replay of the run's recording finds
    the live mixed profile (>= 99 % of its samples on identical stacks, vDSO
    functions named from the recorded image: the first native samples of a
    process come before its first maps record).
    HELD samples were still waiting for agent data when the live profile was
    read (a stopped JVM's agent sends nothing more); the replay, which runs
    to the recording's end, has settled those too."""
    for live_path, replay_path, held in zip(args[0::3], args[1::3], args[2::3]):
        live, rep = {}, {}
        for d, p in ((live, live_path), (rep, replay_path)):
            for f, n in read(p):
                k = ";".join(f)
                d[k] = d.get(k, 0) + n
        tl, tr = sum(live.values()), sum(rep.values())
        same = sum(min(n, rep.get(k, 0)) for k, n in live.items())
        c_live = sum(n for k, n in live.items() if any(kind(x) == "c" for x in k.split(";")))
        c_rep = sum(n for k, n in rep.items() if any(kind(x) == "c" for x in k.split(";")))
        print(f"     {live_path}: live {tl} samples ({c_live} with native frames), replay {tr} ({c_rep}), "
              f"{same} on identical stacks")
        check(tl > 0 and tl <= tr <= tl + int(held),
              f"the replay has the live samples ({tr} / {tl}, {held} held at the query)")
        check(c_live > 0 and same >= 0.99 * tl, "the replay unwinds the same native frames (>= 99 % identical)")
    if failures:
        print(f"{len(failures)} native stack checks failed")
        return 1
    print("all native stack checks passed")
    return 0


def main():
    if sys.argv[1] == "--replay":
        return replay_main(sys.argv[2:])
    jni_mixed, jni_java, gc_mixed, gc_java, up_mixed, up_java = (read(p) for p in sys.argv[1:7])
    for name, mixed, java in (("JNI JVM", jni_mixed, jni_java), ("GC JVM", gc_mixed, gc_java),
                              ("upcall JVM", up_mixed, up_java)):
        tm, tj = sum(n for _, n in mixed), sum(n for _, n in java)
        with_c = sum(n for f, n in mixed if any(kind(x) == "c" for x in f))
        print(f"     {name}: {tm} samples, {with_c} ({100.0 * with_c / max(tm, 1):.1f} %) with native frames")
        check(tm > 0 and tm == tj, f"{name}: the java and mixed views have the same samples ({tj} / {tm})")
        check(with_c > 0, f"{name}: the mixed view has native frames")
        bad = [f for f, _ in mixed if not order_ok(f)]
        check(not bad, f"{name}: native frames above Java or pseudo frames, kernel frames above all ({len(bad)} lines out of order)")
        for f in bad[:3]:
            print("     out of order: " + ";".join(f[-12:]))
        check(not any(kind(x) in ("c", "kernel") for f, _ in java for x in f),
              f"{name}: the java view has no native or kernel frame")

    # zlib under the JNI method that called it.
    jni = [(f, n) for f, n in jni_mixed if any("Inflater.inflateBytes" in x and x.endswith("_[n]") for x in f)]
    total = sum(n for _, n in jni)
    zlib = 0
    for f, n in jni:
        at = max(i for i, x in enumerate(f) if "Inflater.inflateBytes" in x)
        if any(kind(x) == "c" and "inflate" in x for x in f[at + 1:]):
            zlib += n
    print(f"     Inflater.inflateBytes* samples: {total}; with a zlib inflate frame above: {zlib}")
    top = sorted(jni, key=lambda fn: -fn[1])[:3]
    for f, n in top:
        print(f"     {n}: ...{';'.join(f[-6:])}")
    check(total > 0 and zlib >= 0.1 * total,
          "libz's inflate frames appear under the Java native method that called them (>= 10 % of its samples)")

    # GC threads: libjvm's frames under [GC].
    gc = [(f, n) for f, n in gc_mixed if f and f[0] == "[GC]"]
    gc_total = sum(n for _, n in gc)
    jvm = sum(n for f, n in gc if any(kind(x) == "c" and ("::" in x or "thread_native_entry" in x) for x in f[1:]))
    print(f"     [GC] samples: {gc_total}; with libjvm frames: {jvm}")
    for f, n in sorted(gc, key=lambda fn: -fn[1])[:3]:
        print(f"     {n}: {';'.join(f[:8])}")
    check(gc_total > 0 and jvm > 0, "GC threads show libjvm frames under [GC]")

    # Native -> Java: libjvm's frames between forName0 and the loader's Java code.
    up = [(f, n) for f, n in up_mixed if any(x.endswith("spinInLoader_[j]") or "spinInLoader" in x for x in f)]
    up_total = sum(n for _, n in up)
    between = 0
    for f, n in up:
        at = [i for i, x in enumerate(f) if "forName0" in x and x.endswith("_[n]")]
        ld = [i for i, x in enumerate(f) if at and i > at[0] and kind(x) == "java"]
        if at and ld and ld[0] > at[0] + 1 and "loadClass" in f[ld[0]]:
            mid = f[at[0] + 1:ld[0]]
            if all(kind(x) == "c" for x in mid) and any("JavaCalls" in x for x in mid):
                between += n
    print(f"     spinInLoader samples: {up_total}; with libjvm frames (JavaCalls...) between forName0 and loadClass: {between}")
    for f, n in sorted(up, key=lambda fn: -fn[1])[:2]:
        print(f"     {n}: {';'.join(f[-16:])}")
    check(up_total > 0 and between >= 0.5 * up_total,
          "Java called from native code: the VM's frames sit between the native method and the upcall (>= 50 %)")

    if failures:
        print(f"{len(failures)} native stack checks failed")
        return 1
    print("all native stack checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
