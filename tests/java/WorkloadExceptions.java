// SPDX-License-Identifier: GPL-2.0-only
/**
 * Exceptions: thrown from 20 frames deep with their stack traces filled in
 * (Throwable.fillInStackTrace walks the stack in the VM), thrown cheaply
 * without a stack trace from a few frames deep, and the same work without
 * exceptions for comparison. Exercises the VM's exception paths, unwinding
 * through compiled frames, deoptimization of frames that catch, and
 * native/VM code reached from Java.
 */
public class WorkloadExceptions {
    static volatile long sink;

    static final class Cheap extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Cheap() { super("cheap", null, false, false); }
    }

    static final Cheap CHEAP = new Cheap();

    static int deep(int depth, int x) {
        if (depth == 0) {
            if ((x & 1) == 0) throw new IllegalStateException("deep " + x);
            return x;
        }
        return deep(depth - 1, x * 3 + depth) + 1;
    }

    static int shallow(int depth, int x) {
        if (depth == 0) {
            if ((x & 3) != 0) throw CHEAP;
            return x;
        }
        return shallow(depth - 1, x + depth);
    }

    static int plain(int depth, int x) {
        if (depth == 0) return (x & 1) == 0 ? -1 : x;
        return plain(depth - 1, x * 3 + depth) + 1;
    }

    static void phaseThrowDeep(int n) {
        long acc = 0;
        for (int i = 0; i < n; i++) {
            try {
                acc += deep(20, i);
            } catch (IllegalStateException e) {
                acc += e.getStackTrace().length;
            }
        }
        sink += acc;
    }

    static void phaseThrowCheap(int n) {
        long acc = 0;
        for (int i = 0; i < n; i++) {
            try {
                acc += shallow(4, i);
            } catch (Cheap e) {
                acc++;
            }
        }
        sink += acc;
    }

    static void phaseNormal(int n) {
        long acc = 0;
        for (int i = 0; i < n; i++) acc += plain(20, i);
        sink += acc;
    }

    public static void main(String[] args) throws Exception {
        WorkloadSupport w = WorkloadSupport.start(args, 1, "phaseThrowDeep", "phaseThrowCheap", "phaseNormal");
        w.runThreads("exceptions", 0, id -> {
            while (w.running()) {
                WorkloadSupport.measure("phaseThrowDeep", () -> phaseThrowDeep(2000));
                WorkloadSupport.measure("phaseThrowCheap", () -> phaseThrowCheap(70000));
                WorkloadSupport.measure("phaseNormal", () -> phaseNormal(300000));
            }
        });
        w.finish();
    }
}
