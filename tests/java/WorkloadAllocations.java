// SPDX-License-Identifier: GPL-2.0-only
import java.lang.management.ManagementFactory;

/**
 * Threads that allocate known shares of the bytes on known stacks, each
 * measuring its own truth: the ground truth of allocation profiles.
 *
 * Each site is a method named site* that one thread calls in a loop; the
 * thread paces itself so that the sites allocate about 50, 30 and 20 % of
 * the bytes, and counts the objects it made:
 *  - siteArrays: byte arrays of 64 KiB (larger than most TLABs' slack)
 *  - siteInts: int arrays of 1 to 2,000 elements
 *  - siteObjects: small objects made in an inlined helper (makePoint)
 * Every object escapes into a ring of references, so none is scalar
 * replaced. At the end it prints "site NAME BYTES OBJECTS" per site, the
 * bytes from the JVM's own count of what the thread allocated
 * (com.sun.management.ThreadMXBean), then "run NS".
 *
 * Usage: WorkloadAllocations SECONDS [MB_PER_S]
 */
public class WorkloadAllocations {
    static volatile boolean stop;
    static final Object[] RING = new Object[4096];
    static final String[] SITES = {"siteArrays", "siteInts", "siteObjects"};
    static final double[] SHARES = {0.5, 0.3, 0.2};
    static final long[] bytes = new long[SITES.length];
    static final long[] objects = new long[SITES.length];

    static final class Point {
        final long x, y;
        Point(long x, long y) { this.x = x; this.y = y; }
    }

    static int slot;

    static void keep(Object o) {
        RING[(slot++ & 0x7fffffff) % RING.length] = o;
    }

    static void siteArrays() {
        keep(new byte[64 * 1024]);
    }

    static void siteInts(int i) {
        keep(new int[1 + (i * 7919) % 2000]);
    }

    static Point makePoint(long i) {
        return new Point(i, i + 1);
    }

    static void siteObjects(long i) {
        keep(makePoint(i));
    }

    static long allocated(com.sun.management.ThreadMXBean mx) {
        return mx.getThreadAllocatedBytes(Thread.currentThread().getId());
    }

    public static void main(String[] args) throws Exception {
        long seconds = Long.parseLong(args[0]);
        double rate = (args.length > 1 ? Double.parseDouble(args[1]) : 200) * 1e6; /* bytes per second in all */
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        Thread[] threads = new Thread[SITES.length];
        long start = System.nanoTime();

        for (int s = 0; s < SITES.length; s++) {
            final int site = s;
            threads[s] = new Thread(() -> {
                long base = allocated(mx), made = 0, i = 0;
                while (!stop) {
                    /* ahead of this site's share of the rate: wait */
                    double due = SHARES[site] * rate * (System.nanoTime() - start) / 1e9;
                    if (allocated(mx) - base > due) {
                        try {
                            Thread.sleep(1);
                        } catch (InterruptedException e) {
                            return;
                        }
                        continue;
                    }
                    for (int k = 0; k < 64; k++, i++, made++) {
                        if (site == 0)
                            siteArrays();
                        else if (site == 1)
                            siteInts((int) i);
                        else
                            siteObjects(i);
                    }
                }
                bytes[site] = allocated(mx) - base;
                objects[site] = made;
            }, SITES[s]);
            threads[s].start();
        }
        Thread.sleep(seconds * 1000);
        stop = true;
        for (Thread t : threads)
            t.join();
        long run = System.nanoTime() - start;
        for (int s = 0; s < SITES.length; s++)
            System.out.println("site " + SITES[s] + " " + bytes[s] + " " + objects[s]);
        System.out.println("run " + run);
    }
}
