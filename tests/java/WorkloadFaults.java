// SPDX-License-Identifier: GPL-2.0-only
import java.io.RandomAccessFile;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;

/**
 * A thread that waits in page faults, measuring its own truth: siteFault
 * maps FILE, reads one byte of every page (each page not in the page
 * cache is a fault that waits for the disk), and unmaps it again, in a
 * loop; between two passes it sleeps, untimed, so that a helper of the
 * test can drop the file from the page cache (pages still mapped cannot
 * be dropped). siteBurn burns CPU beside it.
 *
 * At the end it prints "site NAME NS THREAD_CPU_NS" per site: the wall
 * time in the site's calls and the CPU time the thread spent in them,
 * then "run NS" and "passes N".
 *
 * Usage: WorkloadFaults SECONDS FILE
 */
public class WorkloadFaults {
    static volatile boolean stop;
    static volatile long sink;
    static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
    static long faultWall, faultCpu, burnWall, burnCpu, passes;

    /* sun.misc.Unsafe.invokeCleaner, by reflection (javac warns of the type). */
    static Object unsafe;
    static Method invokeCleaner;

    static void findCleaner() throws Exception {
        Class<?> c = Class.forName("sun.misc.Unsafe");
        Field f = c.getDeclaredField("theUnsafe");
        f.setAccessible(true);
        unsafe = f.get(null);
        invokeCleaner = c.getMethod("invokeCleaner", ByteBuffer.class);
    }

    static long siteFault(FileChannel ch, long size) throws Exception {
        MappedByteBuffer m = ch.map(FileChannel.MapMode.READ_ONLY, 0, size);
        long s = 0;
        for (int at = 0; at < size; at += 4096)
            s += m.get(at);
        invokeCleaner.invoke(unsafe, m); // unmapped now, not at some later GC
        return s;
    }

    static long siteBurn() {
        long x = sink;
        for (int i = 0; i < 2_000_000; i++)
            x = x * 6364136223846793005L + 1442695040888963407L;
        return x;
    }

    public static void main(String[] args) throws Exception {
        long seconds = Long.parseLong(args[0]);
        findCleaner();
        Thread fault = new Thread(() -> {
            try (RandomAccessFile f = new RandomAccessFile(args[1], "r")) {
                FileChannel ch = f.getChannel();
                long size = ch.size();
                while (!stop) {
                    long w0 = System.nanoTime(), c0 = MX.getCurrentThreadCpuTime();
                    sink += siteFault(ch, size);
                    faultCpu += MX.getCurrentThreadCpuTime() - c0;
                    faultWall += System.nanoTime() - w0;
                    passes++;
                    Thread.sleep(40);
                }
            } catch (Exception e) {
                e.printStackTrace();
                System.exit(1);
            }
        }, "siteFault");
        Thread burn = new Thread(() -> {
            while (!stop) {
                long w0 = System.nanoTime(), c0 = MX.getCurrentThreadCpuTime();
                sink += siteBurn();
                burnCpu += MX.getCurrentThreadCpuTime() - c0;
                burnWall += System.nanoTime() - w0;
                try {
                    Thread.sleep(5);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "siteBurn");
        long t0 = System.nanoTime();
        fault.start();
        burn.start();
        Thread.sleep(seconds * 1000);
        stop = true;
        fault.join();
        burn.join();
        System.out.println("site siteFault " + faultWall + " " + faultCpu);
        System.out.println("site siteBurn " + burnWall + " " + burnCpu);
        System.out.println("run " + (System.nanoTime() - t0));
        System.out.println("passes " + passes);
    }
}
