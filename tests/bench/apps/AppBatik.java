// SPDX-License-Identifier: GPL-2.0-only
import java.io.ByteArrayOutputStream;
import org.apache.batik.transcoder.TranscoderInput;
import org.apache.batik.transcoder.TranscoderOutput;
import org.apache.batik.transcoder.image.PNGTranscoder;

/** Batik (libbatik-java): the SVG drawings (gradients, curves, transformed
 * groups, dashes, text, a blur filter) rasterized to PNG. */
public final class AppBatik {
    public static void main(String[] args) throws Exception {
        System.setProperty("java.awt.headless", "true");
        AppLoop.run(args, "images", () -> {
            long n = 0;
            for (int i = 0; i < 4; i++) {
                PNGTranscoder t = new PNGTranscoder();
                t.addTranscodingHint(PNGTranscoder.KEY_WIDTH, 400f);
                ByteArrayOutputStream png = new ByteArrayOutputStream();
                t.transcode(new TranscoderInput(AppLoop.input(args, "drawing-" + i + ".svg").toURI().toString()),
                            new TranscoderOutput(png));
                if (png.size() < 1000) throw new IllegalStateException("short PNG");
                n++;
            }
            return n;
        });
    }
}
