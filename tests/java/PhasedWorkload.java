// SPDX-License-Identifier: GPL-2.0-only
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * A workload whose correct CPU profile is known because it measures itself:
 * one thread runs four phases of different kinds and weights in rounds, and
 * accounts each phase's thread CPU time (ThreadMXBean) around every call,
 * less what the accounting itself takes (an empty call measured each round).
 *
 * Usage: java PhasedWorkload SECONDS [GO_FILE|- [THREADS]]
 * With GO_FILE, waits until that file exists before doing any work (so a
 * test can start measuring first), and after reporting waits until it is
 * removed before exiting (so the test can read the process's CPU time).
 * Every phase call is accounted. With THREADS > 1, that many threads run the
 * phases and their times are summed. The report is one line per phase,
 * "phase NAME CPU_NS", and "total CPU_NS".
 * With -Dphased.timeline=FILE, each thread also notes when every phase call
 * began and ended (System.nanoTime: CLOCK_MONOTONIC, the samples' clock)
 * and its Linux thread id, and FILE gets lines "tl TID NS PHASE" (PHASE -1:
 * the call ended): the truth for each sample (check_sample_truth.py).
 */
public class PhasedWorkload {
    static volatile long sink;

    /** Dense floating point: a small matrix product. */
    static void phaseMatrix(int reps) {
        int n = 48;
        double[] a = new double[n * n], b = new double[n * n], c = new double[n * n];
        for (int i = 0; i < n * n; i++) { a[i] = i % 7; b[i] = i % 5; }
        for (int r = 0; r < reps; r++) {
            for (int i = 0; i < n; i++)
                for (int j = 0; j < n; j++) {
                    double s = 0;
                    for (int k = 0; k < n; k++) s += a[i * n + k] * b[k * n + j];
                    c[i * n + j] = s;
                }
        }
        sink += (long) c[n + 1];
    }

    /** Integer hashing and a small map, with calls that get inlined. */
    static void phaseHash(int reps) {
        Map<Integer, Integer> m = new HashMap<>();
        long h = 0;
        for (int r = 0; r < reps; r++) {
            for (int i = 0; i < 2000; i++) {
                h = mix(h + i);
                if ((i & 63) == 0) m.merge((int) (h & 1023), 1, Integer::sum);
            }
        }
        sink += h + m.size();
    }

    static long mix(long x) {
        x ^= x >>> 33;
        x *= 0xff51afd7ed558ccdL;
        x ^= x >>> 33;
        return x;
    }

    /** Sorting: most time inside java.util.Arrays. */
    static void phaseSort(int reps) {
        int[] data = new int[4096];
        long seed = 42;
        for (int r = 0; r < reps; r++) {
            for (int i = 0; i < data.length; i++) {
                seed = seed * 6364136223846793005L + 1442695040888963407L;
                data[i] = (int) (seed >>> 33);
            }
            Arrays.sort(data);
        }
        sink += data[17];
    }

    /** Recursion: a few hundred frames deep, interpreted at first. */
    static void phaseRecurse(int reps) {
        long s = 0;
        for (int r = 0; r < reps; r++) s += fib(18);
        sink += s;
    }

    static long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

    static final String[] NAMES = {"phaseMatrix", "phaseHash", "phaseSort", "phaseRecurse"};
    // Work per round, chosen so the shares differ (roughly 15:25:20:40 in time).
    static final int[] REPS = {3, 70, 3, 125};

    static final String TIMELINE = System.getProperty("phased.timeline");
    static final java.util.concurrent.ConcurrentLinkedQueue<String> TIMELINES =
            new java.util.concurrent.ConcurrentLinkedQueue<>();

    /** Runs rounds of all phases until the deadline, adding each phase's CPU time. */
    static void work(long end, long[] cpu) {
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        int max = TIMELINE == null ? 0 : 1 << 20, n = 0;
        long[] at = new long[max];
        int[] phase = new int[max];
        // The measurement's own CPU time (the clock reads and the dispatch
        // around a call, in no phase method: no profiler can name a phase
        // for it), measured once a round around an empty call and taken off
        // every phase call's time. It was 0.3-1.3 % of all samples, in the
        // same amount per call whatever the phase, which tilted the
        // measured shares towards the small phases (JDK 25: phaseRecurse
        // profiled 0.2-0.5 pp above them).
        long empty = 0;
        while (System.nanoTime() < end) {
            for (int p = 0; p < NAMES.length; p++) {
                long t0 = mx.getCurrentThreadCpuTime();
                if (n + 2 <= max) { at[n] = System.nanoTime(); phase[n++] = p; }
                runPhase(p, REPS[p]);
                if (n + 1 <= max) { at[n] = System.nanoTime(); phase[n++] = -1; }
                cpu[p] += mx.getCurrentThreadCpuTime() - t0;
            }
            long e0 = mx.getCurrentThreadCpuTime();
            if (n + 2 <= max) { at[n] = System.nanoTime(); phase[n++] = -1; }
            runPhase(-1, 0);
            if (n + 1 <= max) { at[n] = System.nanoTime(); phase[n++] = -1; }
            empty += mx.getCurrentThreadCpuTime() - e0;
        }
        for (int p = 0; p < NAMES.length; p++)
            cpu[p] = Math.max(0, cpu[p] - empty); // each phase was called once a round
        if (TIMELINE != null) {
            String tid;
            try {
                tid = java.nio.file.Files.readSymbolicLink(java.nio.file.Paths.get("/proc/thread-self")).getFileName().toString();
            } catch (java.io.IOException e) {
                throw new IllegalStateException("no /proc/thread-self", e);
            }
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < n; i++) sb.append("tl ").append(tid).append(' ').append(at[i]).append(' ').append(phase[i]).append('\n');
            TIMELINES.add(sb.toString());
        }
    }

    public static void main(String[] args) throws Exception {
        if (Boolean.getBoolean("phased.startup")) {
            // How long the JVM took from its start (the VM's own clock, a
            // few ms after the exec) to main: what a busy machine stretches.
            long start = java.lang.management.ManagementFactory.getRuntimeMXBean().getStartTime();
            System.out.println("main_after_exec_ms " + (System.currentTimeMillis() - start));
        }
        double seconds = Double.parseDouble(args[0]);
        String goFile = args.length > 1 && !args[1].equals("-") ? args[1] : null;
        int threads = args.length > 2 ? Integer.parseInt(args[2]) : 1;
        long[][] cpu = new long[threads][NAMES.length];

        if (goFile != null) {
            long give_up = System.nanoTime() + 60_000_000_000L;
            while (!new java.io.File(goFile).exists()) {
                if (System.nanoTime() > give_up) throw new IllegalStateException("no " + goFile);
                Thread.sleep(10);
            }
        }
        long end = System.nanoTime() + (long) (seconds * 1e9);
        Thread[] workers = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            final long[] mine = cpu[t];
            workers[t] = new Thread(() -> work(end, mine), "worker-" + t);
            workers[t].start();
        }
        for (Thread w : workers) w.join();
        long total = 0;
        for (int p = 0; p < NAMES.length; p++) {
            long sum = 0;
            for (int t = 0; t < threads; t++) sum += cpu[t][p];
            System.out.println("phase " + NAMES[p] + " " + sum);
            total += sum;
        }
        System.out.println("total " + total);
        if (TIMELINE != null) {
            try (java.io.PrintWriter w = new java.io.PrintWriter(TIMELINE)) {
                for (String t : TIMELINES) w.print(t);
            }
        }
        System.out.flush();
        if (goFile != null) {
            long give_up = System.nanoTime() + 60_000_000_000L;
            while (new java.io.File(goFile).exists() && System.nanoTime() < give_up) Thread.sleep(10);
        }
    }

    static void runPhase(int p, int reps) {
        switch (p) {
            case 0: phaseMatrix(reps); break;
            case 1: phaseHash(reps); break;
            case 2: phaseSort(reps); break;
            case 3: phaseRecurse(reps); break;
            default: break; // the empty call that measures the measurement
        }
    }
}
