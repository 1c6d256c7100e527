// SPDX-License-Identifier: GPL-2.0-only
/**
 * A correctness oracle for the decoder: a call tree in which every method
 * has exactly one caller, so any profiled stack can be checked for
 * impossible caller/callee pairs by name alone.
 *
 * Naming rule (the checker in tests/bench/bench_decode.py relies on it):
 * n0 is the root; the children of a method named N are N_0 .. N_3; the tree
 * is three levels deep below n0 (4 + 16 + 64 methods). For any two
 * consecutive frames caller;callee of this class whose names both start
 * with "n0", callee must equal caller + "_" + one digit. Nothing calls these
 * methods in any other way (no reflection, no other callers).
 *
 * Each method does some arithmetic of its own - a loop whose length varies
 * from method to method, so C2 inlines some and not others - before calling
 * its children; the leaves do the most. The method bodies follow one
 * pattern and were written out mechanically.
 */
public class WorkloadUniquePaths {
    static volatile long sink;

    static long spin(long acc, int n) {
        for (int i = 0; i < n; i++) acc = acc * 6364136223846793005L + i;
        return acc;
    }

    static long n0(long acc) {
        acc = spin(acc, 10);
        acc = n0_0(acc);
        acc = n0_1(acc);
        acc = n0_2(acc);
        acc = n0_3(acc);
        return acc;
    }

    static long n0_0(long acc) {
        acc = spin(acc, 250);
        acc = n0_0_0(acc);
        acc = n0_0_1(acc);
        acc = n0_0_2(acc);
        acc = n0_0_3(acc);
        return acc;
    }

    static long n0_0_0(long acc) {
        acc = spin(acc, 3);
        acc = n0_0_0_0(acc);
        acc = n0_0_0_1(acc);
        acc = n0_0_0_2(acc);
        acc = n0_0_0_3(acc);
        return acc;
    }

    static long n0_0_0_0(long acc) {
        acc = spin(acc, 548);
        return acc;
    }

    static long n0_0_0_1(long acc) {
        acc = spin(acc, 549);
        return acc;
    }

    static long n0_0_0_2(long acc) {
        acc = spin(acc, 550);
        return acc;
    }

    static long n0_0_0_3(long acc) {
        acc = spin(acc, 551);
        return acc;
    }

    static long n0_0_1(long acc) {
        acc = spin(acc, 40);
        acc = n0_0_1_0(acc);
        acc = n0_0_1_1(acc);
        acc = n0_0_1_2(acc);
        acc = n0_0_1_3(acc);
        return acc;
    }

    static long n0_0_1_0(long acc) {
        acc = spin(acc, 1709);
        return acc;
    }

    static long n0_0_1_1(long acc) {
        acc = spin(acc, 1710);
        return acc;
    }

    static long n0_0_1_2(long acc) {
        acc = spin(acc, 1711);
        return acc;
    }

    static long n0_0_1_3(long acc) {
        acc = spin(acc, 1712);
        return acc;
    }

    static long n0_0_2(long acc) {
        acc = spin(acc, 250);
        acc = n0_0_2_0(acc);
        acc = n0_0_2_1(acc);
        acc = n0_0_2_2(acc);
        acc = n0_0_2_3(acc);
        return acc;
    }

    static long n0_0_2_0(long acc) {
        acc = spin(acc, 1270);
        return acc;
    }

    static long n0_0_2_1(long acc) {
        acc = spin(acc, 1271);
        return acc;
    }

    static long n0_0_2_2(long acc) {
        acc = spin(acc, 1272);
        return acc;
    }

    static long n0_0_2_3(long acc) {
        acc = spin(acc, 1273);
        return acc;
    }

    static long n0_0_3(long acc) {
        acc = n0_0_3_0(acc);
        acc = n0_0_3_1(acc);
        acc = n0_0_3_2(acc);
        acc = n0_0_3_3(acc);
        return acc;
    }

    static long n0_0_3_0(long acc) {
        acc = spin(acc, 831);
        return acc;
    }

    static long n0_0_3_1(long acc) {
        acc = spin(acc, 832);
        return acc;
    }

    static long n0_0_3_2(long acc) {
        acc = spin(acc, 833);
        return acc;
    }

    static long n0_0_3_3(long acc) {
        acc = spin(acc, 834);
        return acc;
    }

    static long n0_1(long acc) {
        acc = n0_1_0(acc);
        acc = n0_1_1(acc);
        acc = n0_1_2(acc);
        acc = n0_1_3(acc);
        return acc;
    }

    static long n0_1_0(long acc) {
        acc = spin(acc, 40);
        acc = n0_1_0_0(acc);
        acc = n0_1_0_1(acc);
        acc = n0_1_0_2(acc);
        acc = n0_1_0_3(acc);
        return acc;
    }

    static long n0_1_0_0(long acc) {
        acc = spin(acc, 1987);
        return acc;
    }

    static long n0_1_0_1(long acc) {
        acc = spin(acc, 1988);
        return acc;
    }

    static long n0_1_0_2(long acc) {
        acc = spin(acc, 1989);
        return acc;
    }

    static long n0_1_0_3(long acc) {
        acc = spin(acc, 1990);
        return acc;
    }

    static long n0_1_1(long acc) {
        acc = spin(acc, 250);
        acc = n0_1_1_0(acc);
        acc = n0_1_1_1(acc);
        acc = n0_1_1_2(acc);
        acc = n0_1_1_3(acc);
        return acc;
    }

    static long n0_1_1_0(long acc) {
        acc = spin(acc, 1548);
        return acc;
    }

    static long n0_1_1_1(long acc) {
        acc = spin(acc, 1549);
        return acc;
    }

    static long n0_1_1_2(long acc) {
        acc = spin(acc, 1550);
        return acc;
    }

    static long n0_1_1_3(long acc) {
        acc = spin(acc, 1551);
        return acc;
    }

    static long n0_1_2(long acc) {
        acc = n0_1_2_0(acc);
        acc = n0_1_2_1(acc);
        acc = n0_1_2_2(acc);
        acc = n0_1_2_3(acc);
        return acc;
    }

    static long n0_1_2_0(long acc) {
        acc = spin(acc, 1109);
        return acc;
    }

    static long n0_1_2_1(long acc) {
        acc = spin(acc, 1110);
        return acc;
    }

    static long n0_1_2_2(long acc) {
        acc = spin(acc, 1111);
        return acc;
    }

    static long n0_1_2_3(long acc) {
        acc = spin(acc, 1112);
        return acc;
    }

    static long n0_1_3(long acc) {
        acc = spin(acc, 3);
        acc = n0_1_3_0(acc);
        acc = n0_1_3_1(acc);
        acc = n0_1_3_2(acc);
        acc = n0_1_3_3(acc);
        return acc;
    }

    static long n0_1_3_0(long acc) {
        acc = spin(acc, 670);
        return acc;
    }

    static long n0_1_3_1(long acc) {
        acc = spin(acc, 671);
        return acc;
    }

    static long n0_1_3_2(long acc) {
        acc = spin(acc, 672);
        return acc;
    }

    static long n0_1_3_3(long acc) {
        acc = spin(acc, 673);
        return acc;
    }

    static long n0_2(long acc) {
        acc = spin(acc, 3);
        acc = n0_2_0(acc);
        acc = n0_2_1(acc);
        acc = n0_2_2(acc);
        acc = n0_2_3(acc);
        return acc;
    }

    static long n0_2_0(long acc) {
        acc = spin(acc, 250);
        acc = n0_2_0_0(acc);
        acc = n0_2_0_1(acc);
        acc = n0_2_0_2(acc);
        acc = n0_2_0_3(acc);
        return acc;
    }

    static long n0_2_0_0(long acc) {
        acc = spin(acc, 1823);
        return acc;
    }

    static long n0_2_0_1(long acc) {
        acc = spin(acc, 1824);
        return acc;
    }

    static long n0_2_0_2(long acc) {
        acc = spin(acc, 1825);
        return acc;
    }

    static long n0_2_0_3(long acc) {
        acc = spin(acc, 1826);
        return acc;
    }

    static long n0_2_1(long acc) {
        acc = n0_2_1_0(acc);
        acc = n0_2_1_1(acc);
        acc = n0_2_1_2(acc);
        acc = n0_2_1_3(acc);
        return acc;
    }

    static long n0_2_1_0(long acc) {
        acc = spin(acc, 1384);
        return acc;
    }

    static long n0_2_1_1(long acc) {
        acc = spin(acc, 1385);
        return acc;
    }

    static long n0_2_1_2(long acc) {
        acc = spin(acc, 1386);
        return acc;
    }

    static long n0_2_1_3(long acc) {
        acc = spin(acc, 1387);
        return acc;
    }

    static long n0_2_2(long acc) {
        acc = spin(acc, 3);
        acc = n0_2_2_0(acc);
        acc = n0_2_2_1(acc);
        acc = n0_2_2_2(acc);
        acc = n0_2_2_3(acc);
        return acc;
    }

    static long n0_2_2_0(long acc) {
        acc = spin(acc, 945);
        return acc;
    }

    static long n0_2_2_1(long acc) {
        acc = spin(acc, 946);
        return acc;
    }

    static long n0_2_2_2(long acc) {
        acc = spin(acc, 947);
        return acc;
    }

    static long n0_2_2_3(long acc) {
        acc = spin(acc, 948);
        return acc;
    }

    static long n0_2_3(long acc) {
        acc = spin(acc, 40);
        acc = n0_2_3_0(acc);
        acc = n0_2_3_1(acc);
        acc = n0_2_3_2(acc);
        acc = n0_2_3_3(acc);
        return acc;
    }

    static long n0_2_3_0(long acc) {
        acc = spin(acc, 506);
        return acc;
    }

    static long n0_2_3_1(long acc) {
        acc = spin(acc, 507);
        return acc;
    }

    static long n0_2_3_2(long acc) {
        acc = spin(acc, 508);
        return acc;
    }

    static long n0_2_3_3(long acc) {
        acc = spin(acc, 509);
        return acc;
    }

    static long n0_3(long acc) {
        acc = spin(acc, 40);
        acc = n0_3_0(acc);
        acc = n0_3_1(acc);
        acc = n0_3_2(acc);
        acc = n0_3_3(acc);
        return acc;
    }

    static long n0_3_0(long acc) {
        acc = n0_3_0_0(acc);
        acc = n0_3_0_1(acc);
        acc = n0_3_0_2(acc);
        acc = n0_3_0_3(acc);
        return acc;
    }

    static long n0_3_0_0(long acc) {
        acc = spin(acc, 1662);
        return acc;
    }

    static long n0_3_0_1(long acc) {
        acc = spin(acc, 1663);
        return acc;
    }

    static long n0_3_0_2(long acc) {
        acc = spin(acc, 1664);
        return acc;
    }

    static long n0_3_0_3(long acc) {
        acc = spin(acc, 1665);
        return acc;
    }

    static long n0_3_1(long acc) {
        acc = spin(acc, 3);
        acc = n0_3_1_0(acc);
        acc = n0_3_1_1(acc);
        acc = n0_3_1_2(acc);
        acc = n0_3_1_3(acc);
        return acc;
    }

    static long n0_3_1_0(long acc) {
        acc = spin(acc, 1223);
        return acc;
    }

    static long n0_3_1_1(long acc) {
        acc = spin(acc, 1224);
        return acc;
    }

    static long n0_3_1_2(long acc) {
        acc = spin(acc, 1225);
        return acc;
    }

    static long n0_3_1_3(long acc) {
        acc = spin(acc, 1226);
        return acc;
    }

    static long n0_3_2(long acc) {
        acc = spin(acc, 40);
        acc = n0_3_2_0(acc);
        acc = n0_3_2_1(acc);
        acc = n0_3_2_2(acc);
        acc = n0_3_2_3(acc);
        return acc;
    }

    static long n0_3_2_0(long acc) {
        acc = spin(acc, 784);
        return acc;
    }

    static long n0_3_2_1(long acc) {
        acc = spin(acc, 785);
        return acc;
    }

    static long n0_3_2_2(long acc) {
        acc = spin(acc, 786);
        return acc;
    }

    static long n0_3_2_3(long acc) {
        acc = spin(acc, 787);
        return acc;
    }

    static long n0_3_3(long acc) {
        acc = spin(acc, 250);
        acc = n0_3_3_0(acc);
        acc = n0_3_3_1(acc);
        acc = n0_3_3_2(acc);
        acc = n0_3_3_3(acc);
        return acc;
    }

    static long n0_3_3_0(long acc) {
        acc = spin(acc, 1945);
        return acc;
    }

    static long n0_3_3_1(long acc) {
        acc = spin(acc, 1946);
        return acc;
    }

    static long n0_3_3_2(long acc) {
        acc = spin(acc, 1947);
        return acc;
    }

    static long n0_3_3_3(long acc) {
        acc = spin(acc, 1948);
        return acc;
    }

    static void phaseTree(int rounds) {
        long acc = 0;
        for (int r = 0; r < rounds; r++) acc = n0(acc + r);
        sink += acc;
    }

    public static void main(String[] args) throws Exception {
        WorkloadSupport w = WorkloadSupport.start(args, 1, "phaseTree");
        w.runThreads("tree", 0, id -> {
            while (w.running()) WorkloadSupport.measure("phaseTree", () -> phaseTree(20));
        });
        w.finish();
    }
}
