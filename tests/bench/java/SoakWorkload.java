// SPDX-License-Identifier: GPL-2.0-only
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The soak benchmark's light but real workload (tests/bench/soak.py).
 *
 *   java SoakWorkload SECONDS THREADS BUSY_MS PERIOD_MS
 *
 * THREADS threads ("soak-worker-N"), each repeating: BUSY_MS of work by wall
 * clock on one of two call paths (text: building, parsing and hashing
 * records; numbers: a small matrix product and a series), alternating, then a
 * sleep to the end of its PERIOD_MS; so each thread uses about
 * BUSY_MS / PERIOD_MS of a CPU. The threads start at spread phases. Exits 0
 * after SECONDS (a fraction allowed); the long-lived JVMs of the soak are
 * given more than the run and are killed at its end.
 */
public class SoakWorkload {
    static volatile long sink;

    public static void main(String[] args) throws Exception {
        double seconds = Double.parseDouble(args[0]);
        int threads = Integer.parseInt(args[1]);
        long busyNs = (long) (Double.parseDouble(args[2]) * 1e6);
        long periodNs = (long) (Double.parseDouble(args[3]) * 1e6);
        long end = System.nanoTime() + (long) (seconds * 1e9);
        List<Thread> all = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            final int id = i;
            Thread t = new Thread(() -> worker(id, threads, end, busyNs, periodNs), "soak-worker-" + i);
            t.setDaemon(true);
            t.start();
            all.add(t);
        }
        for (Thread t : all)
            t.join();
        System.out.println("SoakWorkload done " + sink);
    }

    static void worker(int id, int threads, long end, long busyNs, long periodNs) {
        long next = System.nanoTime() + periodNs * id / Math.max(1, threads);
        Text text = new Text(id);
        Numbers numbers = new Numbers(id);
        long round = 0;
        try {
            while (true) {
                long now = System.nanoTime();
                if (now >= end)
                    return;
                if (next > now)
                    Thread.sleep((next - now) / 1000000, (int) ((next - now) % 1000000));
                long stop = System.nanoTime() + busyNs;
                if ((round++ & 1) == 0)
                    text.run(stop);
                else
                    numbers.run(stop);
                next += periodNs;
                long after = System.nanoTime();
                if (next < after) // late (a busy machine): no catching up in bursts
                    next = after;
            }
        } catch (InterruptedException e) {
            // exit
        }
    }

    /** Records as text: built, split, counted in a map, hashed. */
    static final class Text {
        private final Map<String, Integer> counts = new HashMap<>();
        private final MessageDigest md5;
        private long n;

        Text(int seed) {
            try {
                md5 = MessageDigest.getInstance("MD5");
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
            n = seed * 1000L;
        }

        void run(long stopNs) {
            while (System.nanoTime() < stopNs)
                sink += hash(parse(record(n++)));
        }

        private String record(long i) {
            StringBuilder sb = new StringBuilder(96);
            sb.append("id=").append(i).append(";user=u").append(i % 97).append(";path=/api/v")
                    .append(i % 3).append("/items/").append(i % 1009).append(";ms=").append(i % 250);
            return sb.toString();
        }

        private String parse(String rec) {
            String user = null;
            for (String kv : rec.split(";")) {
                int eq = kv.indexOf('=');
                if (kv.startsWith("user"))
                    user = kv.substring(eq + 1);
            }
            counts.merge(user, 1, Integer::sum);
            if (counts.size() > 4096)
                counts.clear();
            return rec;
        }

        private int hash(String rec) {
            byte[] d = md5.digest(rec.getBytes());
            return d[0] ^ d[7] ^ d[15];
        }
    }

    /** Numbers: a small matrix product, then a series. */
    static final class Numbers {
        private final double[][] a = new double[24][24], b = new double[24][24], c = new double[24][24];

        Numbers(int seed) {
            for (int i = 0; i < 24; i++)
                for (int j = 0; j < 24; j++) {
                    a[i][j] = (i * 31 + j * 17 + seed) % 11 / 10.0;
                    b[i][j] = (i * 7 + j * 13 + seed) % 13 / 12.0;
                }
        }

        void run(long stopNs) {
            while (System.nanoTime() < stopNs) {
                multiply();
                sink += (long) series(200);
            }
        }

        private void multiply() {
            for (int i = 0; i < 24; i++)
                for (int j = 0; j < 24; j++) {
                    double s = 0;
                    for (int k = 0; k < 24; k++)
                        s += a[i][k] * b[k][j];
                    c[i][j] = s;
                }
            double[][] t = new double[24][];
            System.arraycopy(c, 0, t, 0, 24);
            sink += (long) t[3][5];
        }

        private double series(int terms) {
            double s = 0;
            for (int k = 1; k <= terms; k++)
                s += Math.sqrt(k) / (k + 1.0);
            return s;
        }
    }
}
