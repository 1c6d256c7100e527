// SPDX-License-Identifier: GPL-2.0-only
import java.io.File;

/**
 * The command line and handshake every driver shares, as tests/java's
 * workloads do: SECONDS GO_FILE INPUT_DIR. Wait for GO_FILE (the harness
 * creates it once jsampled has attached to this JVM), repeat one round of
 * work until SECONDS have passed, print "total N UNIT in R rounds", then wait
 * for GO_FILE's removal so the harness can read jsampled's stats meanwhile.
 * With APPLOOP_ROUNDS=1 in the environment, each round also prints
 * "round START_MS END_MS UNITS" (epoch ms): throughput over time.
 */
final class AppLoop {
    interface Round {
        /** One round of work; returns how many units (documents, queries...) it did. */
        long run() throws Exception;
    }

    static void run(String[] args, String unit, Round round) throws Exception {
        File go = new File(args[1]);
        waitFor(go, true);
        long deadline = System.nanoTime() + (long) (Double.parseDouble(args[0]) * 1e9);
        long units = 0, rounds = 0;
        boolean each = "1".equals(System.getenv("APPLOOP_ROUNDS"));
        while (System.nanoTime() < deadline) {
            long t0 = System.currentTimeMillis(), u = round.run();
            units += u;
            rounds++;
            if (each)
                System.out.println("round " + t0 + " " + System.currentTimeMillis() + " " + u);
        }
        System.out.println("total " + units + " " + unit + " in " + rounds + " rounds");
        System.out.flush();
        waitFor(go, false);
        System.exit(0);
    }

    static void waitFor(File f, boolean exists) throws InterruptedException {
        long giveUp = System.nanoTime() + 120_000_000_000L;
        while (f.exists() != exists && System.nanoTime() < giveUp) Thread.sleep(10);
    }

    static File input(String[] args, String name) {
        return new File(args[2], name);
    }
}
