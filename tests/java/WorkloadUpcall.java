// SPDX-License-Identifier: GPL-2.0-only
/**
 * Java code called from native code: Class.forName on a class loader whose
 * loadClass computes for a while and then gives up. forName0 is a native
 * method; the VM (JVM_FindClassFromCaller, SystemDictionary) calls back into
 * Java through JavaCalls and the call stub, and since the class is never
 * found nothing is cached, so every forName makes the upcall again. The
 * stack is Java -> native method -> libjvm -> Java, the shape of every JNI
 * upcall (CallXMethod goes through the same JavaCalls::call_helper).
 */
public class WorkloadUpcall {
    static volatile long sink;

    static final class SpinLoader extends ClassLoader {
        SpinLoader() { super(null); }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            sink += spinInLoader(200_000);
            throw new ClassNotFoundException(name);
        }
    }

    static long spinInLoader(int n) {
        long x = 1;
        for (int i = 0; i < n; i++) x = x * 6364136223846793005L + i;
        return x;
    }

    static void phaseUpcall(ClassLoader loader) {
        try {
            Class.forName("jsampled.Missing", false, loader);
        } catch (ClassNotFoundException expected) {
            sink++;
        }
    }

    public static void main(String[] args) throws Exception {
        WorkloadSupport w = WorkloadSupport.start(args, 1, "phaseUpcall");
        ClassLoader loader = new SpinLoader();
        w.runThreads("upcall", 0, id -> {
            while (w.running())
                WorkloadSupport.measure("phaseUpcall", () -> phaseUpcall(loader));
        });
        w.finish();
    }
}
