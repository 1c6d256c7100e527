// SPDX-License-Identifier: GPL-2.0-only
import java.io.InputStream;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/**
 * Defines hidden classes without end, as scripting engines and proxy
 * generators do: each one is used for a moment, then dropped, so the JVM
 * unloads it at a later GC. Between classes, ordinary work in a method of
 * its own (churnSpin) keeps a known share of the CPU.
 * Args: seconds [gcEvery]: with gcEvery, System.gc() after every gcEvery
 * classes (run with -XX:+ExplicitGCInvokesConcurrent, each call starts a
 * concurrent mark that ends by unloading the dropped classes).
 */
public class HiddenClassChurn {
    static volatile long sink;

    /** The class defined again and again. */
    public static class Template {
        public static long work(long x) {
            for (int i = 0; i < 2000; i++) x = x * 6364136223846793005L + 1442695040888963407L;
            return x;
        }
    }

    static long churnSpin(long x) {
        for (int i = 0; i < 20000; i++) x ^= (x << 13) ^ (x >>> 7) ^ (x << 17);
        return x;
    }

    public static void main(String[] args) throws Throwable {
        double seconds = Double.parseDouble(args[0]);
        long gcEvery = args.length > 1 ? Long.parseLong(args[1]) : 0;
        byte[] bytes;
        try (InputStream in = HiddenClassChurn.class.getResourceAsStream("HiddenClassChurn$Template.class")) {
            bytes = in.readAllBytes();
        }
        MethodHandles.Lookup lookup = MethodHandles.lookup();
        MethodType type = MethodType.methodType(long.class, long.class);
        long end = System.nanoTime() + (long) (seconds * 1e9), classes = 0, x = 1;
        while (System.nanoTime() < end) {
            Class<?> c = lookup.defineHiddenClass(bytes, true).lookupClass();
            MethodHandle work = lookup.findStatic(c, "work", type);
            x = (long) work.invokeExact(x);
            x = churnSpin(x);
            classes++;
            if (gcEvery > 0 && classes % gcEvery == 0) System.gc();
        }
        sink = x;
        System.out.println("classes " + classes);
    }
}
