// SPDX-License-Identifier: GPL-2.0-only
/**
 * Numeric kernels in the spirit of SciMark 2.0 (written from scratch): FFT,
 * successive over-relaxation, Monte Carlo, sparse matrix-vector product and
 * LU factorization, one call of each per round, sized to take about equal
 * CPU time. Hot loops compiled by C2 with few calls and few safepoint polls:
 * the case where a safepoint-biased profiler put over 40% on one of five
 * equal kernels (ICPE'14, section 3.4).
 */
public class WorkloadNumeric {
    static volatile double sink;

    static void phaseFft(int n) {
        double[] re = new double[n], im = new double[n];
        for (int i = 0; i < n; i++) re[i] = Math.sin(i * 0.1);
        for (int bits = Integer.numberOfTrailingZeros(n), i = 0; i < n; i++) {
            int j = Integer.reverse(i) >>> (32 - bits);
            if (j > i) { double t = re[i]; re[i] = re[j]; re[j] = t; }
        }
        for (int len = 2; len <= n; len <<= 1) {
            double ang = -2 * Math.PI / len, wr = Math.cos(ang), wi = Math.sin(ang);
            for (int i = 0; i < n; i += len) {
                double cr = 1, ci = 0;
                for (int k = 0; k < len / 2; k++) {
                    int a = i + k, b = a + len / 2;
                    double tr = re[b] * cr - im[b] * ci, ti = re[b] * ci + im[b] * cr;
                    re[b] = re[a] - tr; im[b] = im[a] - ti;
                    re[a] += tr; im[a] += ti;
                    double ncr = cr * wr - ci * wi;
                    ci = cr * wi + ci * wr; cr = ncr;
                }
            }
        }
        sink += re[1] + im[1];
    }

    static void phaseSor(int n, int iterations) {
        double[][] g = new double[n][n];
        for (int i = 0; i < n; i++) g[i][0] = 1;
        double omega = 1.25;
        for (int it = 0; it < iterations; it++)
            for (int i = 1; i < n - 1; i++) {
                double[] up = g[i - 1], row = g[i], down = g[i + 1];
                for (int j = 1; j < n - 1; j++)
                    row[j] = omega * 0.25 * (up[j] + down[j] + row[j - 1] + row[j + 1]) + (1 - omega) * row[j];
            }
        sink += g[n / 2][n / 2];
    }

    static void phaseMonteCarlo(int samples) {
        long seed = 12345;
        int inside = 0;
        for (int i = 0; i < samples; i++) {
            seed = seed * 6364136223846793005L + 1442695040888963407L;
            double x = (seed >>> 11) * 0x1.0p-53;
            seed = seed * 6364136223846793005L + 1442695040888963407L;
            double y = (seed >>> 11) * 0x1.0p-53;
            if (x * x + y * y <= 1) inside++;
        }
        sink += 4.0 * inside / samples;
    }

    static double[] val;
    static int[] col, rowStart;

    static void phaseSparse(int n, int perRow, int reps) {
        if (val == null || rowStart.length != n + 1) {
            val = new double[n * perRow]; col = new int[n * perRow]; rowStart = new int[n + 1];
            for (int r = 0, k = 0; r < n; r++) {
                rowStart[r] = k;
                for (int c = 0; c < perRow; c++, k++) { col[k] = (r * 17 + c * 131) % n; val[k] = 1.0 / (c + 1); }
                rowStart[r + 1] = k;
            }
        }
        double[] x = new double[n], y = new double[n];
        java.util.Arrays.fill(x, 1.0);
        for (int rep = 0; rep < reps; rep++)
            for (int r = 0; r < n; r++) {
                double s = 0;
                for (int k = rowStart[r]; k < rowStart[r + 1]; k++) s += val[k] * x[col[k]];
                y[r] = s;
            }
        sink += y[7];
    }

    static void phaseLu(int n) {
        double[][] a = new double[n][n];
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) a[i][j] = ((i * 31 + j * 17) % 97) / 97.0 + (i == j ? n : 0);
        for (int k = 0; k < n; k++) {
            int p = k;
            for (int i = k + 1; i < n; i++) if (Math.abs(a[i][k]) > Math.abs(a[p][k])) p = i;
            double[] t = a[p]; a[p] = a[k]; a[k] = t;
            double[] rowK = a[k];
            for (int i = k + 1; i < n; i++) {
                double[] rowI = a[i];
                double f = rowI[k] / rowK[k];
                rowI[k] = f;
                for (int j = k + 1; j < n; j++) rowI[j] -= f * rowK[j];
            }
        }
        sink += a[n - 1][n - 1];
    }

    public static void main(String[] args) throws Exception {
        WorkloadSupport w = WorkloadSupport.start(args, 1, "phaseFft", "phaseSor", "phaseMonteCarlo",
                "phaseSparse", "phaseLu");
        w.runThreads("numeric", 0, id -> {
            while (w.running()) {
                WorkloadSupport.measure("phaseFft", () -> phaseFft(1 << 15));
                WorkloadSupport.measure("phaseSor", () -> phaseSor(100, 44));
                WorkloadSupport.measure("phaseMonteCarlo", () -> phaseMonteCarlo(530_000));
                WorkloadSupport.measure("phaseSparse", () -> phaseSparse(20000, 8, 5));
                WorkloadSupport.measure("phaseLu", () -> phaseLu(230));
            }
        });
        w.finish();
    }
}
