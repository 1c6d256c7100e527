// SPDX-License-Identifier: GPL-2.0-only
import java.util.concurrent.atomic.AtomicLong;

/**
 * Virtual threads that alternate CPU work with sleeps (JDK 21+): VTHREADS
 * of them, each in a loop of vtHot (about a millisecond of arithmetic) and
 * vtSleep (Thread.sleep: the virtual thread unmounts, its carrier takes
 * another). Each times its own vtHot calls; at the end it prints
 * "hot NS" (wall time in vtHot, all virtual threads), "sleep NS" (in
 * vtSleep) and "run NS".
 *
 * Usage: WorkloadVirtualWaits SECONDS VTHREADS
 */
public final class WorkloadVirtualWaits {
    static volatile boolean stop;
    static volatile long sink;
    static final AtomicLong hot = new AtomicLong(), slept = new AtomicLong();

    static void vtHot() {
        long x = sink;
        for (int i = 0; i < 400000; i++)
            x = x * 6364136223846793005L + 1442695040888963407L;
        sink = x;
    }

    static void vtSleep() throws InterruptedException {
        Thread.sleep(2);
    }

    public static void main(String[] args) throws Exception {
        double seconds = Double.parseDouble(args[0]);
        int n = Integer.parseInt(args[1]);
        Thread[] vts = new Thread[n];
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            vts[i] = Thread.ofVirtual().name("vt-" + i).start(() -> {
                long h = 0, s = 0;
                try {
                    while (!stop) {
                        long a = System.nanoTime();
                        vtHot();
                        long b = System.nanoTime();
                        vtSleep();
                        h += b - a;
                        s += System.nanoTime() - b;
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                hot.addAndGet(h);
                slept.addAndGet(s);
            });
        }
        Thread.sleep((long) (seconds * 1000));
        stop = true;
        for (Thread t : vts)
            t.join();
        System.out.printf("hot %d%nsleep %d%nrun %d%n", hot.get(), slept.get(), System.nanoTime() - t0);
        System.out.flush();
        System.exit(0);
    }
}
