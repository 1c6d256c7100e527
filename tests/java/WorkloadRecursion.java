// SPDX-License-Identifier: GPL-2.0-only
/**
 * Deep stacks: a recursion 3000 frames deep (far beyond a 16 KiB stack
 * fragment: every sample of it is incomplete unless the copy grows), one
 * 200 deep, and a flat loop. The recursion does a little arithmetic per
 * level and its real work at the bottom, so most samples are at the
 * deepest frames.
 */
public class WorkloadRecursion {
    static volatile long sink;

    static long descend(int depth, long acc) {
        if (depth == 0) {
            for (int i = 0; i < 2000; i++) acc = acc * 31 + i;
            return acc;
        }
        return descend(depth - 1, acc + depth) ^ depth;
    }

    /* The deep recursion's depth: args[3] if given (tests/bench/check_completion.py
       wants stacks that a whole 64 KiB copy still holds). */
    static int deep = 3000;

    static void phaseDeep() { for (int i = 0; i < 80; i++) sink += descend(deep, i); }

    static void phaseMedium() { for (int i = 0; i < 200; i++) sink += descend(200, i); }

    static void phaseShallow() {
        long acc = 0;
        for (int i = 0; i < 300_000; i++) acc = acc * 31 + i;
        sink += acc;
    }

    public static void main(String[] args) throws Exception {
        WorkloadSupport w = WorkloadSupport.start(args, 1, "phaseDeep", "phaseMedium", "phaseShallow");
        if (args.length > 3) deep = Integer.parseInt(args[3]);
        /* Big thread stacks: the recursion must never overflow. */
        w.runThreads("recursion", 256L << 20, id -> {
            while (w.running()) {
                WorkloadSupport.measure("phaseDeep", WorkloadRecursion::phaseDeep);
                WorkloadSupport.measure("phaseMedium", WorkloadRecursion::phaseMedium);
                WorkloadSupport.measure("phaseShallow", WorkloadRecursion::phaseShallow);
            }
        });
        w.finish();
    }
}
