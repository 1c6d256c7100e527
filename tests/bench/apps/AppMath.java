// SPDX-License-Identifier: GPL-2.0-only
import org.apache.commons.math3.complex.Complex;
import org.apache.commons.math3.fitting.PolynomialCurveFitter;
import org.apache.commons.math3.fitting.WeightedObservedPoints;
import org.apache.commons.math3.linear.Array2DRowRealMatrix;
import org.apache.commons.math3.linear.ArrayRealVector;
import org.apache.commons.math3.linear.EigenDecomposition;
import org.apache.commons.math3.linear.LUDecomposition;
import org.apache.commons.math3.linear.QRDecomposition;
import org.apache.commons.math3.linear.RealMatrix;
import org.apache.commons.math3.linear.SingularValueDecomposition;
import org.apache.commons.math3.ode.FirstOrderDifferentialEquations;
import org.apache.commons.math3.ode.nonstiff.DormandPrince853Integrator;
import org.apache.commons.math3.random.MersenneTwister;
import org.apache.commons.math3.stat.descriptive.DescriptiveStatistics;
import org.apache.commons.math3.transform.DftNormalization;
import org.apache.commons.math3.transform.FastFourierTransformer;
import org.apache.commons.math3.transform.TransformType;

/** Commons Math 3 (libcommons-math3-java): LU, QR, SVD and eigen
 * decompositions, an FFT, a polynomial least-squares fit, an adaptive ODE
 * integration (Lorenz system) and descriptive statistics. */
public final class AppMath {
    public static void main(String[] args) throws Exception {
        MersenneTwister rng = new MersenneTwister(11);
        AppLoop.run(args, "operations", () -> {
            long n = 0;
            double[][] a = new double[120][120];
            for (double[] row : a)
                for (int j = 0; j < row.length; j++) row[j] = rng.nextGaussian();
            RealMatrix m = new Array2DRowRealMatrix(a);
            new LUDecomposition(m).getSolver().solve(new ArrayRealVector(120, 1.0));
            new QRDecomposition(m).getSolver().solve(new ArrayRealVector(120, 2.0));
            new SingularValueDecomposition(m).getConditionNumber();
            new EigenDecomposition(m.multiply(m.transpose())).getRealEigenvalues();
            n += 4;
            Complex[] signal = new Complex[1 << 14];
            for (int i = 0; i < signal.length; i++) signal[i] = new Complex(Math.sin(i * 0.01) + rng.nextDouble(), 0);
            new FastFourierTransformer(DftNormalization.STANDARD).transform(signal, TransformType.FORWARD);
            n++;
            WeightedObservedPoints pts = new WeightedObservedPoints();
            for (int i = 0; i < 2000; i++) {
                double x = i / 100.0;
                pts.add(x, 3 - 2 * x + 0.5 * x * x - 0.01 * x * x * x + rng.nextGaussian());
            }
            PolynomialCurveFitter.create(3).fit(pts.toList());
            n++;
            FirstOrderDifferentialEquations lorenz = new FirstOrderDifferentialEquations() {
                public int getDimension() { return 3; }
                public void computeDerivatives(double t, double[] y, double[] d) {
                    d[0] = 10 * (y[1] - y[0]);
                    d[1] = y[0] * (28 - y[2]) - y[1];
                    d[2] = y[0] * y[1] - 8.0 / 3 * y[2];
                }
            };
            double[] y = {1, 1, 1};
            new DormandPrince853Integrator(1e-8, 1, 1e-10, 1e-10).integrate(lorenz, 0.0, y, 20.0, y);
            n++;
            DescriptiveStatistics st = new DescriptiveStatistics();
            for (int i = 0; i < 100000; i++) st.addValue(rng.nextGaussian());
            st.getPercentile(95);
            st.getKurtosis();
            n++;
            return n;
        });
    }
}
