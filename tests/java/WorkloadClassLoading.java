// SPDX-License-Identifier: GPL-2.0-only
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.function.IntBinaryOperator;
import java.util.function.IntUnaryOperator;
import java.util.function.Supplier;

/**
 * Class loading, lambdas and method handles: many distinct lambdas and
 * method references (each spun into a hidden class on first use), method
 * handle invocation (LambdaForms, invokeBasic/linkTo* adapters), dynamic
 * proxies, reflection, and classes loaded again and again by fresh class
 * loaders and unloaded. Exercises interpreted frames, method entries,
 * method-handle frames, hidden classes and code being unloaded.
 */
public class WorkloadClassLoading {
    static volatile long sink;

    static int twice(int x) { return 2 * x; }

    int plus(int x, int y) { return x + y; }

    static void phaseLambdas(int rounds) {
        IntUnaryOperator[] ops = {
            x -> x + 1, x -> x * 3, x -> x ^ 0x55, x -> x >>> 1, x -> x - 7, WorkloadClassLoading::twice,
            x -> Integer.rotateLeft(x, 3), x -> x * x, Math::abs, x -> ~x,
        };
        IntBinaryOperator[] bins = {Integer::sum, Math::max, (a, b) -> a * b + 1, (a, b) -> a ^ b};
        try {
            MethodHandle twice = MethodHandles.lookup().findStatic(WorkloadClassLoading.class, "twice",
                    MethodType.methodType(int.class, int.class));
            MethodHandle plus = MethodHandles.lookup().findVirtual(WorkloadClassLoading.class, "plus",
                    MethodType.methodType(int.class, int.class, int.class));
            WorkloadClassLoading self = new WorkloadClassLoading();
            int acc = 1;
            for (int r = 0; r < rounds; r++) {
                for (IntUnaryOperator op : ops) acc = op.applyAsInt(acc);
                for (IntBinaryOperator op : bins) acc = op.applyAsInt(acc, r);
                acc = (int) twice.invokeExact(acc);
                acc = (int) plus.invokeExact(self, acc, r);
            }
            sink += acc;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    static void phaseProxies(int calls) {
        InvocationHandler h = (proxy, method, args) -> method.getName().length() + (args == null ? 0 : args.length);
        @SuppressWarnings("unchecked") /* the proxy implements exactly Supplier */
        Supplier<Object> s = (Supplier<Object>) Proxy.newProxyInstance(WorkloadClassLoading.class.getClassLoader(),
                new Class<?>[] {Supplier.class}, h);
        long acc = 0;
        for (int i = 0; i < calls; i++) acc += (Integer) s.get();
        sink += acc;
    }

    static URL classDirectory() {
        return WorkloadClassLoading.class.getProtectionDomain().getCodeSource().getLocation();
    }

    static void phaseReload(int loads) {
        URL dir = classDirectory();
        for (int i = 0; i < loads; i++) {
            /* A parent-less loader (delegating to the boot loader only), so
             * ReloadableHelper is defined anew by each one. */
            try (URLClassLoader loader = new URLClassLoader(new URL[] {dir}, null)) {
                Class<?> c = loader.loadClass("ReloadableHelper");
                IntUnaryOperator op = (IntUnaryOperator) c.getDeclaredConstructor().newInstance();
                sink += op.applyAsInt(i);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
    }

    static void phaseReflection(int calls) {
        try {
            Method m = WorkloadClassLoading.class.getDeclaredMethod("twice", int.class);
            int acc = 1;
            for (int i = 0; i < calls; i++) acc = (Integer) m.invoke(null, acc + i);
            sink += acc;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    public static void main(String[] args) throws Exception {
        WorkloadSupport w = WorkloadSupport.start(args, 1, "phaseLambdas", "phaseProxies", "phaseReload",
                "phaseReflection");
        w.runThreads("classloading", 0, id -> {
            while (w.running()) {
                WorkloadSupport.measure("phaseLambdas", () -> phaseLambdas(3000));
                WorkloadSupport.measure("phaseProxies", () -> phaseProxies(12000000));
                WorkloadSupport.measure("phaseReload", () -> phaseReload(6));
                WorkloadSupport.measure("phaseReflection", () -> phaseReflection(150000));
            }
        });
        w.finish();
    }
}
