// SPDX-License-Identifier: GPL-2.0-only
// The overhead benchmark's workload: N threads doing a fixed unit of numeric
// work (the five SciMark-like kernels, each on the thread's own data, so the
// threads do not share cache lines) as fast as they can. Every 50 ms it prints
// "ops <CLOCK_MONOTONIC us> <units done so far>"; the controller turns
// profilers on and off around it and compares the throughput of the windows.
//
//   java Throughput <seconds> <threads> [jfr-control-file]
//
// With a control file, JFR is switched in-process: when the file exists, a
// recording with the .jfc named in it starts; when it is removed, the
// recording stops. (jcmd would start a second JVM on these 2 CPUs for every
// switch, and its cost would land in the measurement.)
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLongArray;
import jdk.jfr.Configuration;
import jdk.jfr.Recording;

public class Throughput {
    static final int PAD = 16; // longs per counter: one cache line each, and then some
    static AtomicLongArray done;

    // One thread's data and kernels; nothing is shared between threads.
    static final class Kernels {
        final double[] fftData = new double[1024];
        final double[][] grid = new double[64][64];
        final double[][] luA = new double[40][40];
        final int sn = 600;
        final int[] rowPtr = new int[sn + 1], cols = new int[sn * 5];
        final double[] vals = new double[sn * 5], vx = new double[sn], vy = new double[sn];
        long seed = 42;
        double sink;

        Kernels() {
            Random r = new Random(1);
            for (int i = 0; i < sn; i++) {
                rowPtr[i + 1] = rowPtr[i] + 5;
                for (int k = 0; k < 5; k++) { cols[i * 5 + k] = r.nextInt(sn); vals[i * 5 + k] = r.nextDouble(); }
                vx[i] = r.nextDouble();
            }
        }

        void fft() {
            int n = fftData.length / 2;
            for (int i = 0; i < fftData.length; i++) fftData[i] = Math.sin(i * 0.01);
            for (int len = 2; len <= n; len <<= 1) {
                double ang = 2 * Math.PI / len;
                for (int i = 0; i < n; i += len)
                    for (int j = 0; j < len / 2; j++) {
                        double c = Math.cos(ang * j), s = Math.sin(ang * j);
                        int a = 2 * (i + j), b = 2 * (i + j + len / 2);
                        double re = fftData[b] * c - fftData[b + 1] * s, im = fftData[b] * s + fftData[b + 1] * c;
                        fftData[b] = fftData[a] - re; fftData[b + 1] = fftData[a + 1] - im;
                        fftData[a] += re; fftData[a + 1] += im;
                    }
            }
        }

        void sor() {
            for (int r = 0; r < 4; r++)
                for (int i = 1; i < 63; i++)
                    for (int j = 1; j < 63; j++)
                        grid[i][j] = 0.3125 * (grid[i - 1][j] + grid[i + 1][j] + grid[i][j - 1] + grid[i][j + 1]) - 0.25 * grid[i][j] + 1e-9;
        }

        void montecarlo() {
            long in = 0;
            for (int i = 0; i < 8000; i++) {
                seed = seed * 6364136223846793005L + 1442695040888963407L;
                double x = (seed >>> 11) * 0x1.0p-53;
                seed = seed * 6364136223846793005L + 1442695040888963407L;
                double y = (seed >>> 11) * 0x1.0p-53;
                if (x * x + y * y <= 1) in++;
            }
            sink += in;
        }

        void sparse() {
            for (int r = 0; r < 8; r++)
                for (int i = 0; i < sn; i++) {
                    double s = 0;
                    for (int k = rowPtr[i]; k < rowPtr[i + 1]; k++) s += vals[k] * vx[cols[k]];
                    vy[i] = s;
                }
        }

        void lu() {
            for (int i = 0; i < 40; i++) for (int j = 0; j < 40; j++) luA[i][j] = (i == j ? 40 : 0) + ((i * 31 + j * 17) % 7);
            for (int k = 0; k < 40; k++)
                for (int i = k + 1; i < 40; i++) {
                    double f = luA[i][k] / luA[k][k];
                    for (int j = k; j < 40; j++) luA[i][j] -= f * luA[k][j];
                }
        }

        void unit() { fft(); sor(); montecarlo(); sparse(); lu(); }
    }

    // Polls the control file; starts and stops one JFR recording.
    static void jfrControl(Path ctl) {
        Recording rec = null;
        while (true) {
            try {
                boolean want = Files.exists(ctl);
                if (want && rec == null) {
                    rec = new Recording(Configuration.create(Path.of(Files.readString(ctl).trim())));
                    rec.setToDisk(true);
                    rec.start();
                } else if (!want && rec != null) {
                    rec.stop();
                    rec.close();
                    rec = null;
                }
                Thread.sleep(10);
            } catch (InterruptedException e) {
                return;
            } catch (Exception e) {
                System.out.println("jfr-error " + e);
                return;
            }
        }
    }

    public static void main(String[] args) throws Exception {
        double seconds = Double.parseDouble(args[0]);
        int threads = Integer.parseInt(args[1]);
        long end = System.nanoTime() + (long) (seconds * 1e9);
        done = new AtomicLongArray(threads * PAD);
        if (args.length > 2) {
            Path ctl = Path.of(args[2]);
            Thread t = new Thread(() -> jfrControl(ctl), "jfr-control");
            t.setDaemon(true);
            t.start();
        }
        Thread[] ts = new Thread[threads];
        for (int i = 0; i < threads; i++) {
            final int slot = i * PAD;
            ts[i] = new Thread(() -> {
                Kernels k = new Kernels();
                while (System.nanoTime() < end) {
                    k.unit();
                    done.lazySet(slot, done.get(slot) + 1);
                }
            }, "worker-" + i);
            ts[i].start();
        }
        while (System.nanoTime() < end) {
            long sum = 0;
            for (int i = 0; i < threads; i++) sum += done.get(i * PAD);
            System.out.println("ops " + System.nanoTime() / 1000L + " " + sum);
            Thread.sleep(50);
        }
        for (Thread t : ts) t.join();
    }
}
