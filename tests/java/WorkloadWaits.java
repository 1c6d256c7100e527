// SPDX-License-Identifier: GPL-2.0-only
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Threads that wait for known shares of their time on known stacks, and
 * threads that burn CPU, each measuring its own truth: the ground truth of
 * off-CPU and wall-clock profiles.
 *
 * Each site is a method named site* that a thread calls in a loop; the
 * thread adds the wall time of every call to its site's total:
 *  - siteSleep: Thread.sleep
 *  - siteWait: Object.wait with a timeout, never notified
 *  - siteMonitor: entering a synchronized block that holdMonitor holds
 *    (then holding it briefly)
 *  - siteLock: ReentrantLock.lock while holdLock holds it (the same)
 *  - siteSocket: a blocking socket read from a peer that answers after a
 *    fixed delay (the peer's own wait, sitePeer, is a site too)
 *  - siteTake: BlockingQueue.take, a producer (siteProduce) putting an
 *    item every few milliseconds
 *  - holdMonitor, holdLock: the holders sleep while they hold the lock
 *  - siteBurn: arithmetic, on CPU
 * At the end it prints "site NAME NS THREAD_CPU_NS" per site: the wall time
 * in the site's calls and the CPU time of the thread that made them, then
 * "run NS" (how long the sites ran).
 *
 * Usage: WorkloadWaits SECONDS
 */
public class WorkloadWaits {
    static volatile boolean stop;
    static volatile long sink;
    static final Object MONITOR = new Object();
    static final Object WAITED = new Object();
    static final ReentrantLock LOCK = new ReentrantLock();
    static final BlockingQueue<Integer> QUEUE = new ArrayBlockingQueue<>(4);
    static final int PEER_DELAY_MS = 12;

    static final String[] SITES = {"siteSleep", "siteWait", "siteMonitor", "holdMonitor", "siteLock", "holdLock",
        "siteSocket", "sitePeer", "siteTake", "siteProduce", "siteBurn"};
    static final long[] wallNs = new long[SITES.length];
    static final long[] cpuNs = new long[SITES.length];

    static int index(String site) {
        for (int i = 0; i < SITES.length; i++)
            if (SITES[i].equals(site))
                return i;
        throw new IllegalArgumentException(site);
    }

    static void siteSleep() throws InterruptedException {
        Thread.sleep(20);
    }

    static void siteWait() throws InterruptedException {
        synchronized (WAITED) {
            WAITED.wait(30);
        }
    }

    /** Waits for the monitor, then holds it a little (so the loop never spins through free calls). */
    static void siteMonitor() throws InterruptedException {
        synchronized (MONITOR) {
            Thread.sleep(2);
        }
    }

    /** Holds the monitor for a while, then lets the contender in for a while. */
    static void holdMonitor() throws InterruptedException {
        synchronized (MONITOR) {
            Thread.sleep(15);
        }
        Thread.sleep(5);
    }

    static void siteLock() throws InterruptedException {
        LOCK.lock();
        try {
            Thread.sleep(2);
        } finally {
            LOCK.unlock();
        }
    }

    static void holdLock() throws InterruptedException {
        LOCK.lock();
        try {
            Thread.sleep(15);
        } finally {
            LOCK.unlock();
        }
        Thread.sleep(5);
    }

    static int siteSocket(InputStream in, OutputStream out) throws IOException {
        out.write(1);
        out.flush();
        return in.read();
    }

    static void sitePeer() throws InterruptedException {
        Thread.sleep(PEER_DELAY_MS);
    }

    static void siteTake() throws InterruptedException {
        sink += QUEUE.take();
    }

    static void siteProduce() throws InterruptedException {
        Thread.sleep(8);
        QUEUE.put(1);
    }

    static void siteBurn() {
        long x = sink;
        for (int i = 0; i < 200000; i++)
            x = x * 6364136223846793005L + 1442695040888963407L;
        sink = x;
    }

    interface Site {
        void call() throws Exception;
    }

    /** Calls the site until stop, timing every call; the thread's own CPU time too. */
    static Thread loop(String name, Site s) {
        int i = index(name);
        Thread t = new Thread(() -> {
            java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
            long cpu0 = mx.getCurrentThreadCpuTime(), wall = 0;
            try {
                while (!stop) {
                    long t0 = System.nanoTime();
                    s.call();
                    wall += System.nanoTime() - t0;
                }
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
            synchronized (wallNs) {
                wallNs[i] += wall;
                cpuNs[i] += mx.getCurrentThreadCpuTime() - cpu0;
            }
        }, name);
        t.setDaemon(true);
        return t;
    }

    public static void main(String[] args) throws Exception {
        double seconds = Double.parseDouble(args[0]);
        ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        Socket client = new Socket(InetAddress.getLoopbackAddress(), server.getLocalPort());
        Socket peer = server.accept();
        InputStream cin = client.getInputStream(), pin = peer.getInputStream();
        OutputStream cout = client.getOutputStream(), pout = peer.getOutputStream();

        Thread[] threads = {
            loop("siteSleep", WorkloadWaits::siteSleep),
            loop("siteWait", WorkloadWaits::siteWait),
            loop("holdMonitor", WorkloadWaits::holdMonitor),
            loop("siteMonitor", WorkloadWaits::siteMonitor),
            loop("holdLock", WorkloadWaits::holdLock),
            loop("siteLock", WorkloadWaits::siteLock),
            loop("siteSocket", () -> siteSocket(cin, cout)),
            /* The peer: reads the request (its wait is the client's write), then answers after its delay. */
            loop("sitePeer", () -> {
                if (pin.read() < 0)
                    throw new IOException("peer closed");
                sitePeer();
                pout.write(2);
                pout.flush();
            }),
            loop("siteTake", WorkloadWaits::siteTake),
            loop("siteProduce", WorkloadWaits::siteProduce),
            loop("siteBurn", WorkloadWaits::siteBurn),
        };
        long t0 = System.nanoTime();
        for (Thread t : threads)
            t.start();
        Thread.sleep((long) (seconds * 1000));
        stop = true;
        long ran = System.nanoTime() - t0;
        /* The blocked ones come free: the holders and the producer stop, the socket answers once more. */
        for (Thread t : threads)
            t.join(2000);
        synchronized (wallNs) {
            for (int i = 0; i < SITES.length; i++)
                System.out.printf("site %s %d %d%n", SITES[i], wallNs[i], cpuNs[i]);
        }
        System.out.printf("run %d%n", ran);
        System.out.flush();
        System.exit(0);
    }
}
