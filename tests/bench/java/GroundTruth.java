// SPDX-License-Identifier: GPL-2.0-only
// Workloads whose correct CPU profile is known because they measure it
// themselves: each named phase is a method of this class whose thread CPU
// time (ThreadMXBean) is added up around coarse slices of work. At the end
// each prints "phase <name> <cpu ns>"; while running, "ops <monotonic ms>
// <work units so far>" every 100 ms, for throughput.
//
//   java GroundTruth <workload> <seconds> [threads] [extra]
//
// Workloads: scimark (five equal-time numeric kernels, the case where a
// safepoint sampler put >40% on one), md5 (random strings, MD5, hex), jni
// (zlib inflate in native code + a Java post-processing step), recursion
// (work 2000 frames deep; the phases differ only in the bottom frame),
// threads (more threads than cores, unequal loads), lambdas (streams, method handles, hidden classes). `extra` = a phase name
// that gets twice the CPU time of the others: the causal check.
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.security.MessageDigest;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.LongUnaryOperator;
import java.util.stream.LongStream;
import java.util.zip.Deflater;
import java.util.zip.Inflater;

public class GroundTruth {
    static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
    static final AtomicLong OPS = new AtomicLong();
    static volatile long sink;
    static String extra = "";
    static String[] phases;
    static AtomicLongArray cpu;

    interface Work { void run(int scale) throws Throwable; }

    // Runs phase p's work for at least sliceNs of thread CPU time; the
    // `extra` phase (the causal check) gets twice as much.
    static void slice(int p, Work w, long sliceNs) throws Throwable {
        if (phases[p].equals(extra)) sliceNs *= 2;
        long t0 = MX.getCurrentThreadCpuTime();
        long t;
        do {
            w.run(1);
            OPS.incrementAndGet();
            t = MX.getCurrentThreadCpuTime();
        } while (t - t0 < sliceNs);
        cpu.addAndGet(p, t - t0);
    }

    // ---- scimark: five kernels, equal CPU time each (unless extra) ----
    static double[] fftData = new double[2048];
    static void fft(int scale) {
        for (int r = 0; r < scale; r++) {
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
    }
    static double[][] grid = new double[100][100];
    static void sor(int scale) {
        for (int r = 0; r < 3 * scale; r++)
            for (int i = 1; i < 99; i++)
                for (int j = 1; j < 99; j++)
                    grid[i][j] = 0.3125 * (grid[i - 1][j] + grid[i + 1][j] + grid[i][j - 1] + grid[i][j + 1]) - 0.25 * grid[i][j] + 1e-9;
    }
    static long seed = 42;
    static void montecarlo(int scale) {
        long in = 0;
        for (int i = 0; i < 20000 * scale; i++) {
            seed = seed * 6364136223846793005L + 1442695040888963407L;
            double x = (seed >>> 11) * 0x1.0p-53;
            seed = seed * 6364136223846793005L + 1442695040888963407L;
            double y = (seed >>> 11) * 0x1.0p-53;
            if (x * x + y * y <= 1) in++;
        }
        sink += in;
    }
    static final int SN = 1000;
    static int[] rowPtr = new int[SN + 1], cols = new int[SN * 5];
    static double[] vals = new double[SN * 5], vx = new double[SN], vy = new double[SN];
    static {
        Random rnd = new Random(1);
        for (int i = 0; i < SN; i++) {
            rowPtr[i + 1] = rowPtr[i] + 5;
            for (int k = 0; k < 5; k++) { cols[i * 5 + k] = rnd.nextInt(SN); vals[i * 5 + k] = rnd.nextDouble(); }
            vx[i] = rnd.nextDouble();
        }
    }
    static void sparse(int scale) {
        for (int r = 0; r < 10 * scale; r++)
            for (int i = 0; i < SN; i++) {
                double s = 0;
                for (int k = rowPtr[i]; k < rowPtr[i + 1]; k++) s += vals[k] * vx[cols[k]];
                vy[i] = s;
            }
    }
    static double[][] luA = new double[60][60];
    static void lu(int scale) {
        for (int r = 0; r < scale; r++) {
            for (int i = 0; i < 60; i++) for (int j = 0; j < 60; j++) luA[i][j] = (i == j ? 60 : 0) + ((i * 31 + j * 17) % 7);
            for (int k = 0; k < 60; k++)
                for (int i = k + 1; i < 60; i++) {
                    double f = luA[i][k] / luA[k][k];
                    for (int j = k; j < 60; j++) luA[i][j] -= f * luA[k][j];
                }
        }
    }

    // ---- md5: random strings, digest, hex ----
    static Random rnd = new Random(7);
    static String[] strs = new String[200];
    static byte[][] digests = new byte[200][];
    static MessageDigest md;
    static void randomString(int scale) {
        for (int r = 0; r < scale; r++)
            for (int i = 0; i < strs.length; i++) {
                char[] c = new char[64];
                for (int k = 0; k < c.length; k++) c[k] = (char) ('a' + rnd.nextInt(26));
                strs[i] = new String(c);
            }
    }
    static void md5(int scale) throws Exception {
        for (int r = 0; r < scale; r++)
            for (int i = 0; i < strs.length; i++) digests[i] = md.digest(strs[i].getBytes());
    }
    static final char[] HEX = "0123456789abcdef".toCharArray();
    static void hex(int scale) {
        for (int r = 0; r < 20 * scale; r++)
            for (byte[] d : digests) {
                StringBuilder sb = new StringBuilder();
                for (byte b : d) sb.append(HEX[(b >> 4) & 15]).append(HEX[b & 15]);
                sink += sb.toString().hashCode();
            }
    }

    // ---- jni: zlib inflate (native) + Java post-processing ----
    static byte[] deflated, inflated = new byte[1 << 20];
    static int inflatedLen;
    static void inflate(int scale) throws Exception {
        for (int r = 0; r < scale; r++) {
            Inflater inf = new Inflater();
            inf.setInput(deflated);
            inflatedLen = inf.inflate(inflated);
            inf.end();
        }
    }
    static void postprocess(int scale) {
        long h = 0;
        for (int r = 0; r < scale; r++)
            for (int i = 0; i < inflatedLen; i += 8) h = h * 31 + inflated[i];
        sink += h;
    }

    // ---- recursion: the work happens DEPTH frames deep, in code both phases
    // share; only the bottom frame (recurseA or recurseB) tells them apart,
    // so a profiler must walk the whole stack to attribute a sample. DEPTH
    // stays under JFR's largest stackdepth (2048) so that JFR can, too.
    static final int DEPTH = 2000;
    static long deep(int depth, int scale) {
        if (depth == 0) return leaf(scale);
        return deep(depth - 1, scale) + 1;
    }
    static long leaf(int scale) { long x = 1; for (int i = 0; i < 30000 * scale; i++) x = x * 3 + i; return x; }
    static void recurseA(int scale) { sink += deep(DEPTH, scale); }
    static void recurseB(int scale) { sink += deep(DEPTH, scale); }

    // ---- threads: more threads than cores, each its own method and load ----
    static long spin(int n) { long x = 0; for (int i = 0; i < n; i++) x += i * (long) i ^ x; return x; }
    static void t0(int s) { sink += spin(100000 * s); }
    static void t1(int s) { sink += spin(100000 * s); }
    static void t2(int s) { sink += spin(100000 * s); }
    static void t3(int s) { sink += spin(100000 * s); }
    static void t4(int s) { sink += spin(100000 * s); }
    static void t5(int s) { sink += spin(100000 * s); }

    // ---- lambdas: streams, method handles, hidden classes ----
    static void streams(int scale) {
        for (int r = 0; r < scale; r++) {
            LongUnaryOperator f = x -> x * 7 + 3;
            sink += LongStream.range(0, 20000).map(f).filter(x -> (x & 3) != 0).map(x -> x ^ (x >> 3)).sum();
        }
    }
    static MethodHandle mh;
    static long mhTarget(long x) { return x * 13 + 1; }
    static void handles(int scale) throws Throwable {
        long x = 0;
        for (int i = 0; i < 20000 * scale; i++) x = (long) mh.invokeExact(x);
        sink += x;
    }
    static byte[] templateBytes;
    static void classload(int scale) throws Throwable {
        for (int r = 0; r < 5 * scale; r++) {
            Class<?> c = MethodHandles.lookup().defineHiddenClass(templateBytes, true).lookupClass();
            sink += c.hashCode();
        }
    }
    public static class Template { public static int v() { return 1; } }

    public static void main(String[] args) throws Throwable {
        String workload = args[0];
        double seconds = Double.parseDouble(args[1]);
        int threads = args.length > 2 ? Integer.parseInt(args[2]) : 1;
        extra = args.length > 3 ? args[3] : "";
        String[] names;
        Work[] works;
        long[] sliceMs = null; // CPU ms per slice of each phase (default 20 each)
        switch (workload) {
            case "scimark":
                names = new String[] {"fft", "sor", "montecarlo", "sparse", "lu"};
                works = new Work[] {GroundTruth::fft, GroundTruth::sor, GroundTruth::montecarlo, GroundTruth::sparse, GroundTruth::lu};
                break;
            case "md5":
                md = MessageDigest.getInstance("MD5");
                names = new String[] {"randomString", "md5", "hex"};
                works = new Work[] {GroundTruth::randomString, GroundTruth::md5, GroundTruth::hex};
                break;
            case "jni": {
                byte[] raw = new byte[1 << 20];
                Random r = new Random(3);
                for (int i = 0; i < raw.length; i++) raw[i] = (byte) (r.nextInt(16) + (i % 64 == 0 ? r.nextInt(200) : 0));
                Deflater d = new Deflater();
                d.setInput(raw);
                d.finish();
                byte[] buf = new byte[raw.length * 2];
                int n = d.deflate(buf);
                deflated = java.util.Arrays.copyOf(buf, n);
                names = new String[] {"inflate", "postprocess"};
                works = new Work[] {GroundTruth::inflate, GroundTruth::postprocess};
                sliceMs = new long[] {46, 4}; // ~92% in native zlib, as in the JFR case
                break;
            }
            case "recursion":
                names = new String[] {"recurseA", "recurseB"};
                works = new Work[] {GroundTruth::recurseA, GroundTruth::recurseB};
                sliceMs = new long[] {30, 10};
                break;
            case "threads":
                names = new String[] {"t0", "t1", "t2", "t3", "t4", "t5"};
                works = new Work[] {GroundTruth::t0, GroundTruth::t1, GroundTruth::t2, GroundTruth::t3, GroundTruth::t4, GroundTruth::t5};
                break;
            case "lambdas":
                mh = MethodHandles.lookup().findStatic(GroundTruth.class, "mhTarget", MethodType.methodType(long.class, long.class));
                try (var in = GroundTruth.class.getResourceAsStream("GroundTruth$Template.class")) {
                    templateBytes = in.readAllBytes();
                }
                names = new String[] {"streams", "handles", "classload"};
                works = new Work[] {GroundTruth::streams, GroundTruth::handles, GroundTruth::classload};
                break;
            default:
                throw new IllegalArgumentException("unknown workload " + workload);
        }
        phases = names;
        cpu = new AtomicLongArray(names.length);
        final long end = System.nanoTime() + (long) (seconds * 1e9);
        final String[] fnames = names;
        final long[] fslice = new long[names.length];
        for (int p = 0; p < names.length; p++) fslice[p] = (sliceMs != null ? sliceMs[p] : 20) * 1_000_000L;
        final Work[] fworks = works;
        Thread[] ts;
        if (workload.equals("threads")) {
            // Six threads on two cores: thread i runs only t_i, busy for
            // (i+1) ms of every 8 ms: unequal loads, some of them contending.
            ts = new Thread[names.length];
            for (int i = 0; i < ts.length; i++) {
                final int p = i;
                ts[i] = new Thread(() -> {
                    try {
                        while (System.nanoTime() < end) {
                            slice(p, fworks[p], (p + 1) * 1_000_000L);
                            Thread.sleep(8 - Math.min(7, p + 1) + 1);
                        }
                    } catch (Throwable e) { throw new RuntimeException(e); }
                }, "worker-" + i);
            }
        } else {
            ts = new Thread[threads];
            for (int i = 0; i < threads; i++) {
                ts[i] = new Thread(() -> {
                    try {
                        while (System.nanoTime() < end)
                            for (int p = 0; p < fnames.length; p++) slice(p, fworks[p], fslice[p]);
                    } catch (Throwable e) { throw new RuntimeException(e); }
                }, "worker-" + i);
            }
        }
        Thread reporter = new Thread(() -> {
            while (System.nanoTime() < end) {
                System.out.println("ops " + System.nanoTime() / 1_000_000L + " " + OPS.get());
                try { Thread.sleep(100); } catch (InterruptedException e) { return; }
            }
        }, "reporter");
        reporter.setDaemon(true);
        reporter.start();
        for (Thread t : ts) t.start();
        for (Thread t : ts) t.join();
        for (int p = 0; p < names.length; p++) System.out.println("phase " + names[p] + " " + cpu.get(p));
        System.out.flush();
    }
}
