#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Checks the collapsed CCTs of WorkloadSyscalls for kernel frames.

  check_kernel_stacks.py on  MIXED JAVA JAVA_EXPLICIT
  check_kernel_stacks.py off MIXED JAVA JAVA_EXPLICIT

MIXED is `jsamplectl cct PID --format collapsed --view mixed`, JAVA the same
without --view (the default view), JAVA_EXPLICIT with --view java, all three
taken of the same frozen profile (the JVM stopped, the counts settled).
Collapsed lines are `root;...;leaf COUNT`; a kernel frame is one whose name
ends in `_[k]`.

on (jsampled --kernel-stacks on, the default):
  - the mixed view has samples, and some of them kernel frames;
  - in every line the kernel frames are contiguous at the leaf end: no
    non-kernel frame comes after a kernel frame;
  - samples under WorkloadSyscalls.writeLoop exist, and at least 10 % of
    them have a kernel frame whose name contains "write" (the loop is a
    pwrite64 syscall after another);
  - samples under WorkloadSyscalls.statLoop exist, and some have a kernel
    frame whose name contains "stat";
  - the java view (default and --view java, identical) has no kernel frame,
    has the same total as the mixed view, and each Java stack's count is the
    mixed view's count for that stack with the kernel frames removed (the
    samples of a line made only of kernel frames, if any, may go anywhere in
    the java view, but no more of them).
off (--kernel-stacks off):
  - samples, writeLoop among them, and no kernel frame in any view;
  - the three views are identical but for the mixed view's native frames.
Prints its figures; the last line is `all kernel stack checks passed` or it
exits 1.
"""
import sys
from collections import Counter

KERNEL = "_[k]"
WRITE_LOOP = "WorkloadSyscalls.writeLoop"
STAT_LOOP = "WorkloadSyscalls.statLoop"
MIN_WRITE_SHARE = 10.0  # % of writeLoop samples with a write-path kernel frame

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)
    return ok


def parse(path):
    """[(frames tuple, count)] of a collapsed file, in file order."""
    lines = []
    with open(path) as f:
        for no, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line:
                continue
            stack, _, n = line.rpartition(" ")
            if not stack or not n.isdigit():
                raise SystemExit("FAIL %s:%d is not a collapsed line: %r" % (path, no, line[:200]))
            lines.append((tuple(stack.split(";")), int(n)))
    return lines


def is_kernel(frame):
    return frame.endswith(KERNEL)


def total(lines):
    return sum(n for _, n in lines)


def counter(lines):
    c = Counter()
    for s, n in lines:
        c[s] += n
    return c


def pct(part, whole):
    return 100.0 * part / whole if whole else 0.0


# Native (C/C++) frames, in the mixed view too with --native-stacks on (the
# default): no kind suffix; "[vdso]" and "[unknown]" are native pcs, other
# bracketed names the pseudo frames both views have.
NATIVE_BRACKETED = {"[vdso]", "[unknown]", "[native: too many names]"}


def is_native(frame):
    if frame.startswith("[") and frame.endswith("]"):
        return frame in NATIVE_BRACKETED
    return not (len(frame) > 4 and frame[-4:-2] == "_[" and frame.endswith("]"))


def user_frames(stack):
    """The frames the java view shows: without kernel and native ones."""
    return [f for f in stack if not is_kernel(f) and not is_native(f)]


def kernel_frames(stack):
    return [f for f in stack if is_kernel(f)]


def under(stack, method):
    return any(method in f for f in user_frames(stack))


def short(stack, keep=6):
    s = ";".join(stack)
    if len(stack) > keep:
        s = "...;" + ";".join(stack[-keep:])
    return s


def check_java_views(java, java_explicit):
    check(counter(java) == counter(java_explicit),
          "the default view and --view java are the same (%d and %d stacks, %d and %d samples)"
          % (len(counter(java)), len(counter(java_explicit)), total(java), total(java_explicit)))
    kernel_lines = [(s, n) for s, n in java + java_explicit if kernel_frames(s)]
    check(not kernel_lines, "no kernel frame in the java view (%d lines have one%s)"
          % (len(kernel_lines), (", e.g. " + short(kernel_lines[0][0])) if kernel_lines else ""))


def check_on(mixed, java, java_explicit):
    all_samples = total(mixed)
    if not check(all_samples > 0, "the mixed view has samples (%d in %d lines)" % (all_samples, len(mixed))):
        return

    with_kernel = [(s, n) for s, n in mixed if kernel_frames(s)]
    k_samples = total(with_kernel)
    check(k_samples > 0, "kernel frames in the mixed view: %d samples (%.1f %%) in %d lines"
          % (k_samples, pct(k_samples, all_samples), len(with_kernel)))

    # Kernel frames contiguous at the leaf end: never a non-kernel frame after one.
    bad = []
    for s, n in mixed:
        seen_kernel = False
        for f in s:
            if is_kernel(f):
                seen_kernel = True
            elif seen_kernel:
                bad.append((s, n))
                break
    check(not bad, "every line's kernel frames are above (after) all its other frames: %d lines "
          "(%d samples) have a non-kernel frame after a kernel frame%s"
          % (len(bad), total(bad), (", e.g. " + short(bad[0][0], 10)) if bad else ""))
    only_kernel = [(s, n) for s, n in mixed if not user_frames(s)]
    print("     lines made only of kernel frames: %d (%d samples)" % (len(only_kernel), total(only_kernel)))

    # writeLoop: syscall-bound, its samples mostly in the kernel's write path.
    wl = [(s, n) for s, n in mixed if under(s, WRITE_LOOP)]
    wl_samples = total(wl)
    wl_kernel = total((s, n) for s, n in wl if kernel_frames(s))
    wl_write = total((s, n) for s, n in wl if any("write" in f.lower() for f in kernel_frames(s)))
    if check(wl_samples > 0, "%s in the mixed view: %d samples (%.1f %%)"
             % (WRITE_LOOP, wl_samples, pct(wl_samples, all_samples))):
        print("     of them with kernel frames: %d (%.1f %%)" % (wl_kernel, pct(wl_kernel, wl_samples)))
        check(pct(wl_write, wl_samples) >= MIN_WRITE_SHARE,
              "%s samples with a kernel frame containing 'write': %d (%.1f %%, at least %.0f %% wanted)"
              % (WRITE_LOOP, wl_write, pct(wl_write, wl_samples), MIN_WRITE_SHARE))
        kchains = Counter()
        kleaves = Counter()
        for s, n in wl:
            k = kernel_frames(s)
            if k:
                kchains[";".join(k)] += n
                kleaves[k[-1]] += n
        for chain, n in kchains.most_common(3):
            print("     writeLoop kernel chain %5d: %s" % (n, chain))
        print("     writeLoop kernel leaves: " +
              ", ".join("%s %d" % (f, n) for f, n in kleaves.most_common(6)))
        example = max(((s, n) for s, n in wl if kernel_frames(s)), key=lambda x: x[1], default=None)
        if example:
            print("     most frequent writeLoop line (%d): %s" % (example[1], short(example[0], 14)))

    # statLoop: path walks and stat calls.
    sl = [(s, n) for s, n in mixed if under(s, STAT_LOOP)]
    sl_samples = total(sl)
    sl_kernel = total((s, n) for s, n in sl if kernel_frames(s))
    sl_stat = total((s, n) for s, n in sl if any("stat" in f.lower() for f in kernel_frames(s)))
    if check(sl_samples > 0, "%s in the mixed view: %d samples (%.1f %%)"
             % (STAT_LOOP, sl_samples, pct(sl_samples, all_samples))):
        print("     of them with kernel frames: %d (%.1f %%)" % (sl_kernel, pct(sl_kernel, sl_samples)))
        check(sl_stat > 0, "%s samples with a kernel frame containing 'stat': %d (%.1f %%)"
              % (STAT_LOOP, sl_stat, pct(sl_stat, sl_samples)))

    # The java view: the same samples, kernel frames hidden.
    check_java_views(java, java_explicit)
    j_total = total(java)
    check(j_total == all_samples, "the java view's total equals the mixed view's: %d and %d"
          % (j_total, all_samples))
    stripped = Counter()
    for s, n in mixed:
        u = tuple(user_frames(s))
        if u:
            stripped[u] += n
    jc = counter(java)
    short_of = [(s, n, jc.get(s, 0)) for s, n in stripped.items() if jc.get(s, 0) < n]
    check(not short_of, "each Java stack of the mixed view (kernel and native frames removed) has at least its "
          "samples in the java view: %d of %d stacks fall short%s"
          % (len(short_of), len(stripped),
             (", e.g. %s: %d mixed, %d java" % (short(short_of[0][0]), short_of[0][1], short_of[0][2]))
             if short_of else ""))
    extra = sum(jc[s] - stripped.get(s, 0) for s in jc if jc[s] > stripped.get(s, 0))
    check(extra == total(only_kernel),
          "the java view's samples beyond the mixed view's Java stacks (%d) are those of its "
          "kernel-only lines (%d)" % (extra, total(only_kernel)))
    jwl = total((s, n) for s, n in java if under(s, WRITE_LOOP))
    check(jwl == wl_samples, "%s has the same samples in both views: %d java, %d mixed"
          % (WRITE_LOOP, jwl, wl_samples))


def check_off(mixed, java, java_explicit):
    all_samples = total(mixed)
    if not check(all_samples > 0, "the mixed view has samples (%d in %d lines)" % (all_samples, len(mixed))):
        return
    wl_samples = total((s, n) for s, n in mixed if under(s, WRITE_LOOP))
    check(wl_samples > 0, "%s in the mixed view: %d samples (%.1f %%)"
          % (WRITE_LOOP, wl_samples, pct(wl_samples, all_samples)))
    kernel_lines = [(s, n) for s, n in mixed if kernel_frames(s)]
    check(not kernel_lines, "no kernel frame in the mixed view with --kernel-stacks off: %d lines "
          "(%d samples) have one%s" % (len(kernel_lines), total(kernel_lines),
                                       (", e.g. " + short(kernel_lines[0][0])) if kernel_lines else ""))
    check_java_views(java, java_explicit)
    stripped = Counter()
    for s, n in mixed:
        stripped[tuple(user_frames(s))] += n
    check(stripped == counter(java), "the mixed view without its native frames is the java view (%d and %d samples)"
          % (all_samples, total(java)))


def main():
    if len(sys.argv) != 5 or sys.argv[1] not in ("on", "off"):
        raise SystemExit("usage: check_kernel_stacks.py on|off MIXED JAVA JAVA_EXPLICIT")
    mode = sys.argv[1]
    mixed, java, java_explicit = (parse(p) for p in sys.argv[2:5])
    print("kernel stacks %s: mixed %d samples, java %d samples" % (mode, total(mixed), total(java)))
    (check_on if mode == "on" else check_off)(mixed, java, java_explicit)
    if failures:
        print("%d kernel stack checks failed" % len(failures))
        sys.exit(1)
    print("all kernel stack checks passed")


if __name__ == "__main__":
    main()
