// SPDX-License-Identifier: GPL-2.0-only
import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Code that spends most of its CPU time in the kernel, entered from Java:
 *  - writeLoop: positional writes (pwrite(2)) of a 64 KiB direct buffer to
 *    offset 0 of a temporary file. Nothing is copied in user space (the
 *    buffer is native memory); the kernel copies it into the page cache
 *    each time (vfs_write, generic_perform_write, ...). The same pages are
 *    rewritten, so the file stays 64 KiB and the disk sees almost nothing.
 *    (Small unbuffered FileOutputStream writes to /dev/null were measured
 *    first: there the JNI path costs twice the syscall, user time wins.)
 *  - statLoop: stat(2) of a file 16 directories deep, through java.io
 *    (File.exists) and java.nio (Files.getLastModifiedTime): the kernel
 *    walks the path each time.
 *  - phaseJava: a little plain Java, so that samples without kernel frames
 *    exist too.
 * Each worker thread runs the three phases in turn. A profiler that records
 * kernel stacks shows the kernel's write and stat paths above writeLoop and
 * statLoop.
 */
public class WorkloadSyscalls {
    static volatile long sink;
    static final int WRITE_BYTES = 64 << 10;
    static final int DEPTH = 16;

    /** Each write is one pwrite64 syscall copying WRITE_BYTES into the page cache. */
    static long writeLoop(FileChannel ch, ByteBuffer buf, int writes) throws IOException {
        long sum = 0;
        for (int i = 0; i < writes; i++) {
            buf.clear();
            buf.put(i & (WRITE_BYTES - 1), (byte) i); /* a trace of Java work per write */
            sum += ch.write(buf, 0);
        }
        return sum;
    }

    /** Two stats per iteration of an existing file, through java.io and java.nio. */
    static long statLoop(File file, Path path, int stats) throws IOException {
        long sum = 0;
        for (int i = 0; i < stats; i++) {
            if (new File(file.getPath()).exists()) sum++;
            sum += Files.getLastModifiedTime(path).toMillis() & 1;
        }
        return sum;
    }

    static void phaseWrite(FileChannel ch, ByteBuffer buf) {
        try {
            sink += writeLoop(ch, buf, 1500);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    static void phaseStat(File file, Path path) {
        try {
            sink += statLoop(file, path, 2000);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A little pure Java between the syscall loops (an LCG and a sum). */
    static void phaseJava(int n) {
        long seed = sink, acc = 0;
        for (int i = 0; i < n; i++) {
            seed = seed * 6364136223846793005L + 1442695040888963407L;
            acc += (seed >>> 33) % 1000003;
        }
        sink += acc;
    }

    public static void main(String[] args) throws Exception {
        WorkloadSupport w = WorkloadSupport.start(args, 2, "phaseWrite", "phaseStat", "phaseJava");
        Path top = Files.createTempDirectory("jsampled-syscalls");
        Path dir = top;
        for (int i = 0; i < DEPTH; i++) dir = dir.resolve("d" + i);
        Files.createDirectories(dir);
        Path statted = Files.createFile(dir.resolve("statted"));
        File stattedFile = statted.toFile();
        try {
            w.runThreads("syscalls", 0, id -> {
                Path written = top.resolve("written-" + id);
                try (FileChannel ch = FileChannel.open(written, StandardOpenOption.CREATE,
                        StandardOpenOption.WRITE)) {
                    ByteBuffer buf = ByteBuffer.allocateDirect(WRITE_BYTES);
                    while (w.running()) {
                        WorkloadSupport.measure("phaseWrite", () -> phaseWrite(ch, buf));
                        WorkloadSupport.measure("phaseStat", () -> phaseStat(stattedFile, statted));
                        WorkloadSupport.measure("phaseJava", () -> phaseJava(300000));
                    }
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            });
        } finally {
            try (java.util.stream.Stream<Path> all = Files.walk(top)) {
                all.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
        w.finish();
    }
}
