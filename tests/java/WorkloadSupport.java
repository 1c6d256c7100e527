// SPDX-License-Identifier: GPL-2.0-only
import java.io.File;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What every benchmark workload shares: the command line
 * (SECONDS [GO_FILE|- [THREADS]]), the go-file handshake with the test that
 * runs it (wait for the file before working, wait for its removal before
 * exiting, so the test can measure the process meanwhile), and the report
 * of each phase's thread CPU time ("phase NAME CPU_NS" lines, "total CPU_NS").
 * A phase is a static method named phase*, and all its work happens inside
 * it, so a profiler's share for that method can be compared with the
 * measured share.
 */
final class WorkloadSupport {
    private static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
    private static final Map<String, AtomicLong> CPU = new LinkedHashMap<>();

    final double seconds;
    final String goFile;
    final int threads;
    final long deadline;

    private WorkloadSupport(String[] args, int defaultThreads) throws InterruptedException {
        seconds = Double.parseDouble(args[0]);
        goFile = args.length > 1 && !args[1].equals("-") ? args[1] : null;
        threads = args.length > 2 ? Integer.parseInt(args[2]) : defaultThreads;
        if (goFile != null) {
            long giveUp = System.nanoTime() + 60_000_000_000L;
            while (!new File(goFile).exists()) {
                if (System.nanoTime() > giveUp) throw new IllegalStateException("no " + goFile);
                Thread.sleep(10);
            }
        }
        deadline = System.nanoTime() + (long) (seconds * 1e9);
    }

    /** Parses the command line and waits for the go file. */
    static WorkloadSupport start(String[] args, int defaultThreads, String... phases) throws InterruptedException {
        synchronized (CPU) {
            for (String p : phases) CPU.put(p, new AtomicLong());
        }
        return new WorkloadSupport(args, defaultThreads);
    }

    boolean running() {
        return System.nanoTime() < deadline;
    }

    /** Runs one call of a phase on the current thread and accounts its CPU time. */
    static void measure(String phase, Runnable body) {
        long t0 = MX.getCurrentThreadCpuTime();
        body.run();
        CPU.get(phase).addAndGet(MX.getCurrentThreadCpuTime() - t0);
    }

    /** Runs body on the given number of threads until they return. */
    void runThreads(String name, long stackBytes, java.util.function.IntConsumer body) throws InterruptedException {
        Thread[] workers = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            final int id = t;
            workers[t] = new Thread(null, () -> body.accept(id), name + "-" + t, stackBytes);
            workers[t].start();
        }
        for (Thread w : workers) w.join();
    }

    /** Prints the report, then waits for the go file's removal. */
    void finish() throws InterruptedException {
        long total = 0;
        synchronized (CPU) {
            for (Map.Entry<String, AtomicLong> e : CPU.entrySet()) {
                System.out.println("phase " + e.getKey() + " " + e.getValue().get());
                total += e.getValue().get();
            }
        }
        System.out.println("total " + total);
        System.out.flush();
        if (goFile != null) {
            long giveUp = System.nanoTime() + 60_000_000_000L;
            while (new File(goFile).exists() && System.nanoTime() < giveUp) Thread.sleep(10);
        }
    }
}
