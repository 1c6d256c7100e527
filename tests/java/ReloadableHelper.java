// SPDX-License-Identifier: GPL-2.0-only
/**
 * Loaded again and again by WorkloadClassLoading through fresh class
 * loaders: every load is a new class (loading, linking, interpreting, and
 * unloading once its loader is gone).
 */
public class ReloadableHelper implements java.util.function.IntUnaryOperator {
    private final int salt = 17;

    @Override
    public int applyAsInt(int x) {
        int acc = x;
        for (int i = 0; i < 200; i++) acc = acc * 31 + salt + i;
        return acc;
    }
}
