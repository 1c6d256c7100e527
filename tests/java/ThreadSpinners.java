// SPDX-License-Identifier: GPL-2.0-only
import java.io.File;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;

/**
 * Spinning threads for the perf-event tests (test_sample_events.sh): each
 * spins in a method of its own (s0, s1, ...), so a profile tells the
 * threads apart, and prints the CPU time it spun, so the profile's samples
 * can be checked against it thread by thread.
 *
 * EARLY threads start at once and wait (they exist before the process is
 * profiled); once GO_FILE exists they spin for SECONDS, and LATE threads
 * are started then, by the main thread and by the first early thread (they
 * inherit the perf events of the threads that create them).
 *
 * usage: ThreadSpinners EARLY LATE SECONDS GO_FILE   (EARLY + LATE <= 8)
 * prints "ready" once the early threads exist, then "spun sK MS" per thread.
 */
public final class ThreadSpinners {
    static volatile long sink;
    static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();

    static long spin(long until) {
        long x = 1;
        while (System.nanoTime() < until) {
            for (int i = 0; i < 10000; i++) {
                x = x * 31 + i;
            }
        }
        return x;
    }

    static void s0(long until) { sink += spin(until); }
    static void s1(long until) { sink += spin(until); }
    static void s2(long until) { sink += spin(until); }
    static void s3(long until) { sink += spin(until); }
    static void s4(long until) { sink += spin(until); }
    static void s5(long until) { sink += spin(until); }
    static void s6(long until) { sink += spin(until); }
    static void s7(long until) { sink += spin(until); }

    static void spinAs(int k, long until) {
        long t0 = MX.getCurrentThreadCpuTime();
        switch (k) {
            case 0: s0(until); break;
            case 1: s1(until); break;
            case 2: s2(until); break;
            case 3: s3(until); break;
            case 4: s4(until); break;
            case 5: s5(until); break;
            case 6: s6(until); break;
            default: s7(until); break;
        }
        long ms = (MX.getCurrentThreadCpuTime() - t0) / 1_000_000;
        synchronized (ThreadSpinners.class) {
            System.out.println("spun s" + k + " " + ms);
            System.out.flush();
        }
    }

    public static void main(String[] args) throws Exception {
        int early = Integer.parseInt(args[0]), late = Integer.parseInt(args[1]);
        double seconds = Double.parseDouble(args[2]);
        File go = new File(args[3]);
        if (early < 1 || early + late > 8) {
            throw new IllegalArgumentException("1 <= EARLY and EARLY + LATE <= 8");
        }
        final long[] until = new long[1];
        final Object started = new Object();
        List<Thread> all = new ArrayList<>();
        for (int k = 0; k < early; k++) {
            final int id = k;
            Thread t = new Thread(() -> {
                synchronized (started) {
                    while (until[0] == 0) {
                        try {
                            started.wait();
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                }
                Thread child = null;
                if (id == 0 && late > 0) { // a late thread whose parent is not main
                    child = new Thread(() -> spinAs(early, until[0]), "late-" + early);
                    child.start();
                }
                spinAs(id, until[0]);
                if (child != null) {
                    try {
                        child.join();
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "early-" + k);
            t.start();
            all.add(t);
        }
        System.out.println("ready");
        System.out.flush();
        while (!go.exists()) {
            Thread.sleep(10);
        }
        synchronized (started) {
            until[0] = System.nanoTime() + (long) (seconds * 1e9);
            started.notifyAll();
        }
        for (int k = early + 1; k < early + late; k++) {
            final int id = k;
            Thread t = new Thread(() -> spinAs(id, until[0]), "late-" + k);
            t.start();
            all.add(t);
        }
        for (Thread t : all) {
            t.join();
        }
        System.out.println("done");
        System.out.flush();
    }
}
