// SPDX-License-Identifier: GPL-2.0-only
import java.security.MessageDigest;
import java.util.zip.Adler32;
import java.util.zip.CRC32;
import java.util.zip.DataFormatException;
import java.util.zip.Deflater;
import java.util.zip.Inflater;

/**
 * Code that spends much of its time in the JDK's native code: zlib inflate
 * and deflate through JNI, message digests (intrinsics and JNI), CRC32 and
 * Adler32, and the random-string + MD5 + hex loop profilers famously
 * disagree on. Samples land in native code (frame anchors), in intrinsic
 * stubs and in JNI wrappers; a profiler that cannot see native frames'
 * Java callers misattributes them.
 */
public class WorkloadJni {
    static volatile long sink;
    static final byte[] PLAIN = new byte[1 << 20];
    static byte[] compressed;

    static {
        long seed = 7;
        for (int i = 0; i < PLAIN.length; i++) {
            seed = seed * 6364136223846793005L + 1442695040888963407L;
            PLAIN[i] = (byte) ("the quick brown fox jumps over the lazy dog ".charAt((int) ((seed >>> 58) + i / 64) % 44));
        }
        Deflater d = new Deflater(6);
        d.setInput(PLAIN);
        d.finish();
        byte[] buf = new byte[PLAIN.length];
        int n = d.deflate(buf);
        d.end();
        compressed = java.util.Arrays.copyOf(buf, n);
    }

    static void phaseInflate() {
        Inflater inf = new Inflater();
        byte[] out = new byte[PLAIN.length];
        try {
            inf.setInput(compressed);
            int n = inf.inflate(out);
            long sum = 0; /* a small Java pass over the result */
            for (int i = 0; i < n; i += 16) sum += out[i];
            sink += sum;
        } catch (DataFormatException e) {
            throw new IllegalStateException(e);
        } finally {
            inf.end();
        }
    }

    static void phaseDeflate() {
        Deflater d = new Deflater(6);
        d.setInput(PLAIN, 0, 64 << 10);
        d.finish();
        byte[] out = new byte[64 << 10];
        sink += d.deflate(out);
        d.end();
    }

    static final char[] HEX = "0123456789abcdef".toCharArray();

    static String hex(byte[] b) {
        char[] c = new char[b.length * 2];
        for (int i = 0; i < b.length; i++) {
            c[2 * i] = HEX[(b[i] >> 4) & 15];
            c[2 * i + 1] = HEX[b[i] & 15];
        }
        return new String(c);
    }

    static void phaseDigest() throws Exception {
        MessageDigest sha = MessageDigest.getInstance("SHA-256"), md5 = MessageDigest.getInstance("MD5");
        for (int off = 0; off + (64 << 10) <= PLAIN.length; off += 64 << 10) {
            sha.update(PLAIN, off, 64 << 10);
            md5.update(PLAIN, off, 64 << 10);
        }
        sink += hex(sha.digest()).hashCode() + hex(md5.digest()).hashCode();
    }

    static void phaseCrc() {
        CRC32 crc = new CRC32();
        Adler32 adler = new Adler32();
        for (int i = 0; i < 12; i++) {
            crc.update(PLAIN, 0, PLAIN.length);
            adler.update(PLAIN, 0, PLAIN.length);
        }
        sink += crc.getValue() ^ adler.getValue();
    }

    static void phaseRandomStrings(int count) throws Exception {
        MessageDigest md5 = MessageDigest.getInstance("MD5");
        long seed = System.nanoTime();
        for (int i = 0; i < count; i++) {
            StringBuilder sb = new StringBuilder();
            for (int k = 0; k < 32; k++) {
                seed = seed * 6364136223846793005L + 1442695040888963407L;
                sb.append((char) ('a' + (seed >>> 59)));
            }
            sink += hex(md5.digest(sb.toString().getBytes())).length();
        }
    }

    interface Body { void run() throws Exception; }

    static Runnable unchecked(Body b) {
        return () -> {
            try { b.run(); } catch (Exception e) { throw new IllegalStateException(e); }
        };
    }

    public static void main(String[] args) throws Exception {
        WorkloadSupport w = WorkloadSupport.start(args, 1, "phaseInflate", "phaseDeflate", "phaseDigest",
                "phaseCrc", "phaseRandomStrings");
        w.runThreads("jni", 0, id -> {
            while (w.running()) {
                WorkloadSupport.measure("phaseInflate", WorkloadJni::phaseInflate);
                WorkloadSupport.measure("phaseDeflate", WorkloadJni::phaseDeflate);
                WorkloadSupport.measure("phaseDigest", unchecked(WorkloadJni::phaseDigest));
                WorkloadSupport.measure("phaseCrc", WorkloadJni::phaseCrc);
                WorkloadSupport.measure("phaseRandomStrings", unchecked(() -> phaseRandomStrings(12000)));
            }
        });
        w.finish();
    }
}
