// SPDX-License-Identifier: GPL-2.0-only
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.util.Arrays;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;
import org.apache.commons.compress.compressors.bzip2.BZip2CompressorInputStream;
import org.apache.commons.compress.compressors.bzip2.BZip2CompressorOutputStream;
import org.apache.commons.compress.compressors.lzma.LZMACompressorInputStream;
import org.apache.commons.compress.compressors.lzma.LZMACompressorOutputStream;
import org.apache.commons.compress.compressors.snappy.SnappyCompressorInputStream;
import org.apache.commons.compress.compressors.snappy.SnappyCompressorOutputStream;
import org.apache.commons.compress.compressors.xz.XZCompressorInputStream;
import org.apache.commons.compress.compressors.xz.XZCompressorOutputStream;
import org.apache.commons.compress.utils.IOUtils;

/** Commons Compress (libcommons-compress-java) with XZ for Java
 * (libxz-java): a megabyte of the text corpus in a tar, through bzip2, xz,
 * LZMA and Snappy in pure Java, each compressed, decompressed and checked.
 * (Not LZ4: commons-compress 1.22 takes a minute per megabyte of this text
 * with its default parameters and fails with those tuned for speed; raw
 * Snappy, as the framed format's reader returns nothing of this data.) */
public final class AppCompress {
    interface Codec {
        OutputStream out(OutputStream o) throws Exception;
        InputStream in(InputStream i) throws Exception;
    }

    static byte[] pipe(byte[] data, Codec c) throws Exception {
        ByteArrayOutputStream packed = new ByteArrayOutputStream();
        try (OutputStream o = c.out(packed)) {
            o.write(data);
        }
        try (InputStream i = c.in(new ByteArrayInputStream(packed.toByteArray()))) {
            return IOUtils.toByteArray(i); // (Snappy's read may return 0 before the end)
        }
    }

    public static void main(String[] args) throws Exception {
        byte[] text = Files.readAllBytes(AppLoop.input(args, "corpus.txt").toPath());
        byte[] part = Arrays.copyOf(text, 1 << 20);
        ByteArrayOutputStream tarred = new ByteArrayOutputStream();
        try (TarArchiveOutputStream t = new TarArchiveOutputStream(tarred)) {
            for (int i = 0; i < 4; i++) {
                TarArchiveEntry e = new TarArchiveEntry("part-" + i + ".txt");
                byte[] b = Arrays.copyOfRange(part, i << 18, (i + 1) << 18);
                e.setSize(b.length);
                t.putArchiveEntry(e);
                t.write(b);
                t.closeArchiveEntry();
            }
        }
        byte[] tar = tarred.toByteArray();
        final int size = tar.length;
        Codec[] codecs = {
            new Codec() {
                public OutputStream out(OutputStream o) throws Exception { return new BZip2CompressorOutputStream(o, 9); }
                public InputStream in(InputStream i) throws Exception { return new BZip2CompressorInputStream(i); }
            },
            new Codec() {
                public OutputStream out(OutputStream o) throws Exception { return new XZCompressorOutputStream(o, 3); }
                public InputStream in(InputStream i) throws Exception { return new XZCompressorInputStream(i); }
            },
            new Codec() {
                public OutputStream out(OutputStream o) throws Exception { return new LZMACompressorOutputStream(o); }
                public InputStream in(InputStream i) throws Exception { return new LZMACompressorInputStream(i); }
            },
            new Codec() {
                public OutputStream out(OutputStream o) throws Exception { return new SnappyCompressorOutputStream(o, size); }
                public InputStream in(InputStream i) throws Exception { return new SnappyCompressorInputStream(i); }
            },
        };
        AppLoop.run(args, "MiB through codecs", () -> {
            long bytes = 0;
            for (Codec c : codecs) {
                byte[] back = pipe(tar, c);
                if (!Arrays.equals(back, tar)) throw new IllegalStateException("round trip differs: " + c);
                bytes += tar.length;
            }
            try (TarArchiveInputStream t = new TarArchiveInputStream(new ByteArrayInputStream(tar))) {
                while (t.getNextTarEntry() != null) bytes += IOUtils.toByteArray(t).length;
            }
            return bytes >> 20;
        });
    }
}
