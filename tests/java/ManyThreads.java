// SPDX-License-Identifier: GPL-2.0-only
// A JVM with many threads, for jsampled's memory bound: each thread wakes
// up, does a little work through a few call paths of its own, and sleeps.
//   java ManyThreads <threads> <seconds>
public class ManyThreads {
    static volatile long sink;

    static long leaf(long x, int n) {
        for (int i = 0; i < n; i++) x = x * 6364136223846793005L + 1442695040888963407L;
        return x;
    }
    static long a(long x, int n) { return leaf(x, n) ^ 1; }
    static long b(long x, int n) { return a(x, n) + leaf(x, n / 2); }
    static long c(long x, int n) { return (x & 1) == 0 ? a(x, n) : b(x, n); }
    static long d(long x, int n, int depth) { return depth == 0 ? c(x, n) : d(x + depth, n, depth - 1); }

    public static void main(String[] args) throws Exception {
        int threads = Integer.parseInt(args[0]);
        long end = System.nanoTime() + (long) (Double.parseDouble(args[1]) * 1e9);
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            final int id = t;
            ts[t] = new Thread(() -> {
                long x = id;
                try {
                    while (System.nanoTime() < end) {
                        x = d(x, 5000, id % 17);
                        sink = x;
                        Thread.sleep(300 + id % 400); // mostly idle, as server threads are
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "worker-" + t);
            ts[t].setDaemon(true);
            ts[t].start();
        }
        for (Thread t : ts) t.join();
    }
}
