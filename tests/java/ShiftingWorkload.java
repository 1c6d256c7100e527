// SPDX-License-Identifier: GPL-2.0-only
/**
 * A workload whose hot method changes over time, for time-window and diff
 * tests: one thread runs phaseAlpha for SECONDS, then phaseBeta for SECONDS,
 * and prints when each ran, in seconds since the epoch:
 *   "alpha START END" and "beta START END", then "done".
 *
 * Usage: java ShiftingWorkload SECONDS [GO_FILE]
 * With GO_FILE, waits for that file before starting, and after "done" waits
 * until it is removed before exiting (so a test can query the live profile).
 */
public class ShiftingWorkload {
    static volatile long sink;

    /** Integer mixing in a loop. */
    static long phaseAlpha(long until) {
        long h = 1;
        while (System.nanoTime() < until)
            for (int i = 0; i < 10000; i++) h = (h ^ (h >>> 31)) * 0x9e3779b97f4a7c15L + i;
        return h;
    }

    /** Floating point in a loop. */
    static double phaseBeta(long until) {
        double x = 0.5;
        while (System.nanoTime() < until)
            for (int i = 0; i < 10000; i++) x = x * 3.999 * (1 - x) + 1e-12 * i;
        return x;
    }

    static double now() {
        return System.currentTimeMillis() / 1000.0;
    }

    public static void main(String[] args) throws Exception {
        long ns = (long) (Double.parseDouble(args[0]) * 1e9);
        String goFile = args.length > 1 ? args[1] : null;

        if (goFile != null) {
            long giveUp = System.nanoTime() + 60_000_000_000L;
            while (!new java.io.File(goFile).exists()) {
                if (System.nanoTime() > giveUp) throw new IllegalStateException("no " + goFile);
                Thread.sleep(10);
            }
        }
        double a0 = now();
        sink += phaseAlpha(System.nanoTime() + ns);
        double a1 = now();
        sink += (long) phaseBeta(System.nanoTime() + ns);
        double b1 = now();
        System.out.printf("alpha %.3f %.3f%nbeta %.3f %.3f%ndone%n", a0, a1, a1, b1);
        System.out.flush();
        if (goFile != null) {
            long giveUp = System.nanoTime() + 120_000_000_000L;
            while (new java.io.File(goFile).exists() && System.nanoTime() < giveUp) Thread.sleep(10);
        }
    }
}
