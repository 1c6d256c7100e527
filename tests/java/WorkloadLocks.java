// SPDX-License-Identifier: GPL-2.0-only
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * Threads that contend for known locks on known stacks, each measuring its
 * own truth: the ground truth of lock-contention profiles.
 *
 * Each site is a method named site* that its threads call in a loop; a
 * call takes its lock, holds it for about a millisecond (sleeping) and lets
 * it go, and the thread adds the time it waited to take it to the site's
 * total:
 *  - siteMonitor: a synchronized block, 3 threads
 *  - siteLock: a ReentrantLock, 2 threads
 *  - siteWrite: a ReentrantReadWriteLock's write lock, 2 threads, holding
 *    it half as long
 * At the end it prints "site NAME WAIT_NS ACQUISITIONS" per site, then
 * "run NS".
 *
 * Usage: WorkloadLocks SECONDS
 */
public class WorkloadLocks {
    static volatile boolean stop;
    static final Object MONITOR = new Object();
    static final ReentrantLock LOCK = new ReentrantLock();
    static final ReentrantReadWriteLock RW = new ReentrantReadWriteLock();
    static final String[] SITES = {"siteMonitor", "siteLock", "siteWrite"};
    static final int[] THREADS = {3, 2, 2};
    static final long[] waitNs = new long[SITES.length];
    static final long[] taken = new long[SITES.length];

    static void hold(int micros) {
        try {
            Thread.sleep(0, micros * 1000);
        } catch (InterruptedException e) {
            stop = true;
        }
    }

    static long siteMonitor() {
        long t0 = System.nanoTime(), waited;
        synchronized (MONITOR) {
            waited = System.nanoTime() - t0;
            hold(999);
        }
        return waited;
    }

    static long siteLock() {
        long t0 = System.nanoTime(), waited;
        LOCK.lock();
        try {
            waited = System.nanoTime() - t0;
            hold(999);
        } finally {
            LOCK.unlock();
        }
        return waited;
    }

    static long siteWrite() {
        long t0 = System.nanoTime(), waited;
        RW.writeLock().lock();
        try {
            waited = System.nanoTime() - t0;
            hold(500);
        } finally {
            RW.writeLock().unlock();
        }
        return waited;
    }

    public static void main(String[] args) throws Exception {
        long seconds = Long.parseLong(args[0]);
        int n = 0;
        for (int t : THREADS)
            n += t;
        Thread[] threads = new Thread[n];
        long start = System.nanoTime();
        int k = 0;

        for (int s = 0; s < SITES.length; s++) {
            for (int i = 0; i < THREADS[s]; i++, k++) {
                final int site = s;
                threads[k] = new Thread(() -> {
                    long w = 0, c = 0;
                    while (!stop) {
                        w += site == 0 ? siteMonitor() : site == 1 ? siteLock() : siteWrite();
                        c++;
                    }
                    synchronized (waitNs) {
                        waitNs[site] += w;
                        taken[site] += c;
                    }
                }, SITES[s] + "-" + i);
                threads[k].start();
            }
        }
        Thread.sleep(seconds * 1000);
        stop = true;
        for (Thread t : threads)
            t.join();
        long run = System.nanoTime() - start;
        for (int s = 0; s < SITES.length; s++)
            System.out.println("site " + SITES[s] + " " + waitNs[s] + " " + taken[s]);
        System.out.println("run " + run);
    }
}
