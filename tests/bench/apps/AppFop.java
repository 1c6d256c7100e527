// SPDX-License-Identifier: GPL-2.0-only
import java.io.ByteArrayOutputStream;
import java.io.File;
import javax.xml.transform.Transformer;
import javax.xml.transform.TransformerFactory;
import javax.xml.transform.sax.SAXResult;
import javax.xml.transform.stream.StreamSource;
import org.apache.fop.apps.Fop;
import org.apache.fop.apps.FopFactory;
import org.apache.fop.apps.FormattingResults;
import org.apache.xmlgraphics.util.MimeConstants;

/** Apache FOP (fop): the XSL-FO reports laid out and rendered to PDF
 * (line breaking, justification, tables, lists, page numbers). */
public final class AppFop {
    public static void main(String[] args) throws Exception {
        FopFactory fops = FopFactory.newInstance(new File(args[2]).toURI());
        TransformerFactory tf = TransformerFactory.newInstance();
        AppLoop.run(args, "pages", () -> {
            long pages = 0;
            for (int i = 0; i < 2; i++) {
                ByteArrayOutputStream pdf = new ByteArrayOutputStream();
                Fop fop = fops.newFop(MimeConstants.MIME_PDF, pdf);
                Transformer t = tf.newTransformer();
                t.transform(new StreamSource(AppLoop.input(args, "report-" + i + ".fo")), new SAXResult(fop.getDefaultHandler()));
                FormattingResults r = fop.getResults();
                if (pdf.size() < 10000) throw new IllegalStateException("short PDF");
                pages += r.getPageCount();
            }
            return pages;
        });
    }
}
