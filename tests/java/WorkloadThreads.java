// SPDX-License-Identifier: GPL-2.0-only
/**
 * More threads than cores (16 by default on a 2-core machine) with
 * different loads: thread i runs the light, medium or heavy phase by i % 3
 * (heavy does 4x and medium 2x the work of light per iteration), and two
 * more threads hand a token back and forth with wait/notify and sleep, so
 * threads are often preempted, descheduled and woken. A sampler that
 * favours running-at-safepoint threads, or loses samples under contention,
 * gets the split between the phases wrong.
 */
public class WorkloadThreads {
    static volatile long sink;

    static long work(int units) {
        long acc = 0;
        for (int u = 0; u < units; u++)
            for (int i = 0; i < 20_000; i++) acc = acc * 6364136223846793005L + i;
        return acc;
    }

    static void phaseLight() { sink += work(1); }

    static void phaseMedium() { sink += work(2); }

    static void phaseHeavy() { sink += work(4); }

    static final Object TOKEN = new Object();
    static boolean ping;

    /** One side of a handoff: wait for the other side, do a little work, pass the token on. */
    static void phaseHandoff(boolean side) {
        synchronized (TOKEN) {
            long giveUp = System.nanoTime() + 50_000_000L;
            while (ping == side && System.nanoTime() < giveUp) {
                try {
                    TOKEN.wait(5);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
            sink += work(1);
            ping = side;
            TOKEN.notifyAll();
        }
        try {
            Thread.sleep(1);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    public static void main(String[] args) throws Exception {
        WorkloadSupport w = WorkloadSupport.start(args, 16, "phaseLight", "phaseMedium", "phaseHeavy",
                "phaseHandoff");
        Thread[] handoff = new Thread[2];
        for (int i = 0; i < 2; i++) {
            final boolean side = i == 0;
            handoff[i] = new Thread(() -> {
                while (w.running()) WorkloadSupport.measure("phaseHandoff", () -> phaseHandoff(side));
            }, "handoff-" + i);
            handoff[i].start();
        }
        w.runThreads("load", 0, id -> {
            while (w.running()) {
                switch (id % 3) {
                    case 0: WorkloadSupport.measure("phaseLight", WorkloadThreads::phaseLight); break;
                    case 1: WorkloadSupport.measure("phaseMedium", WorkloadThreads::phaseMedium); break;
                    default: WorkloadSupport.measure("phaseHeavy", WorkloadThreads::phaseHeavy);
                }
            }
        });
        for (Thread t : handoff) t.join();
        w.finish();
    }
}
