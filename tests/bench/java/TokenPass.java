// SPDX-License-Identifier: GPL-2.0-only
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * A switch-heavy program: PAIRS pairs of threads hand a token back and
 * forth with LockSupport.park/unpark, so that each hand-off is a thread
 * waking another and going to sleep: two context switches. Every 100 ms it
 * prints "p EPOCH_MS HANDOFFS" (hand-offs so far, all pairs) until SECONDS
 * have passed.
 *
 * Usage: TokenPass SECONDS [PAIRS]
 */
public final class TokenPass {
    static final AtomicLong handoffs = new AtomicLong();
    static volatile boolean stop;

    static final class Side implements Runnable {
        volatile boolean mine;
        Side other;
        Thread thread;

        public void run() {
            long n = 0;
            while (!stop) {
                while (!mine && !stop)
                    LockSupport.park(this);
                mine = false;
                other.mine = true;
                LockSupport.unpark(other.thread);
                if (++n % 64 == 0)
                    handoffs.addAndGet(64);
            }
        }
    }

    public static void main(String[] args) throws Exception {
        double seconds = Double.parseDouble(args[0]);
        int pairs = args.length > 1 ? Integer.parseInt(args[1]) : 2;
        for (int i = 0; i < pairs; i++) {
            Side a = new Side(), b = new Side();
            a.other = b;
            b.other = a;
            a.thread = new Thread(a, "ping-" + i);
            b.thread = new Thread(b, "pong-" + i);
            a.thread.setDaemon(true);
            b.thread.setDaemon(true);
            a.mine = true;
            a.thread.start();
            b.thread.start();
        }
        long end = System.nanoTime() + (long) (seconds * 1e9);
        while (System.nanoTime() < end) {
            Thread.sleep(100);
            System.out.println("p " + System.currentTimeMillis() + " " + handoffs.get());
        }
        stop = true;
        System.out.flush();
        System.exit(0);
    }
}
