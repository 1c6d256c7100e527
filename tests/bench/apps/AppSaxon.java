// SPDX-License-Identifier: GPL-2.0-only
import java.io.StringWriter;
import javax.xml.transform.Templates;
import javax.xml.transform.TransformerFactory;
import javax.xml.transform.stream.StreamResult;
import javax.xml.transform.stream.StreamSource;

/** Saxon-HE (libsaxonhe-java): XSLT 3.0 with grouping, recursive functions,
 * regular expressions and date sorting over the order documents. */
public final class AppSaxon {
    public static void main(String[] args) throws Exception {
        TransformerFactory tf = new net.sf.saxon.TransformerFactoryImpl();
        Templates xsl = tf.newTemplates(new StreamSource(AppLoop.input(args, "orders3.xsl")));
        AppLoop.run(args, "documents", () -> {
            long n = 0;
            for (int i = 0; i < 3; i++) {
                StringWriter out = new StringWriter();
                xsl.newTransformer().transform(new StreamSource(AppLoop.input(args, "orders-" + i + ".xml")),
                                               new StreamResult(out));
                if (out.getBuffer().length() < 1000) throw new IllegalStateException("short output");
                n++;
            }
            return n;
        });
    }
}
