// SPDX-License-Identifier: GPL-2.0-only
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/** Virtual threads (JDK 21+): each round runs 10,000 virtual threads on the
 * carrier pool, each doing recursive and string work in steps with a
 * blocking sleep or a yield between steps, so its frames are frozen into a
 * heap stack chunk and thawed back onto a carrier, often on another one. */
public final class AppVirtualThreads {
    static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

    static long depth(int n, long acc) {
        if (n == 0) {
            Thread.yield(); // unmounted deep in the stack
            return acc;
        }
        return depth(n - 1, acc + n);
    }

    static long task(int id) throws InterruptedException {
        long sum = 0;
        StringBuilder sb = new StringBuilder();
        for (int step = 0; step < 4; step++) {
            sum += fib(14 + (id + step) % 4);
            sb.setLength(0);
            for (int i = 0; i < 40; i++)
                sb.append(id * 31 + i).append(',');
            sum += sb.toString().hashCode();
            sum += depth(30 + step * 20, 0);
            if (step % 2 == 0)
                Thread.sleep(1);
        }
        return sum;
    }

    public static void main(String[] args) throws Exception {
        AppLoop.run(args, "virtual threads", () -> {
            long total = 0;
            try (ExecutorService ex = Executors.newVirtualThreadPerTaskExecutor()) {
                List<Future<Long>> fs = new ArrayList<>();
                for (int i = 0; i < 10_000; i++) {
                    final int id = i;
                    fs.add(ex.submit(() -> task(id)));
                }
                for (Future<Long> f : fs)
                    total += f.get();
            }
            return total == 42 ? 10_001 : 10_000;
        });
    }
}
