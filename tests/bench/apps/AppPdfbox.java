// SPDX-License-Identifier: GPL-2.0-only
import java.awt.image.BufferedImage;
import org.apache.pdfbox.pdmodel.PDDocument;
import org.apache.pdfbox.rendering.PDFRenderer;
import org.apache.pdfbox.text.PDFTextStripper;

/** PDFBox 2 (libpdfbox2-java): the PDF files parsed, their text extracted
 * and every page rendered at 72 dpi. */
public final class AppPdfbox {
    public static void main(String[] args) throws Exception {
        System.setProperty("java.awt.headless", "true");
        AppLoop.run(args, "pages", () -> {
            long pages = 0;
            for (int i = 0; i < 3; i++) {
                try (PDDocument doc = PDDocument.load(AppLoop.input(args, "doc-" + i + ".pdf"))) {
                    String text = new PDFTextStripper().getText(doc);
                    if (text.length() < 1000) throw new IllegalStateException("little text");
                    PDFRenderer r = new PDFRenderer(doc);
                    for (int p = 0; p < doc.getNumberOfPages(); p++) {
                        BufferedImage img = r.renderImageWithDPI(p, 72);
                        if (img.getWidth() < 100) throw new IllegalStateException("small page");
                        pages++;
                    }
                }
            }
            return pages;
        });
    }
}
