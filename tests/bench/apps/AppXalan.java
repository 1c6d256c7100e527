// SPDX-License-Identifier: GPL-2.0-only
import java.io.File;
import java.io.StringWriter;
import javax.xml.transform.Templates;
import javax.xml.transform.TransformerFactory;
import javax.xml.transform.stream.StreamResult;
import javax.xml.transform.stream.StreamSource;

/** Xalan-J (libxalan2-java), its interpretive processor: XSLT 1.0 with keys,
 * grouping, sorting and recursive named templates over the order documents. */
public final class AppXalan {
    public static void main(String[] args) throws Exception {
        TransformerFactory tf = new org.apache.xalan.processor.TransformerFactoryImpl();
        Templates xsl = tf.newTemplates(new StreamSource(AppLoop.input(args, "orders.xsl")));
        if (!xsl.getClass().getName().startsWith("org.apache.xalan."))
            throw new IllegalStateException("not Xalan: " + xsl.getClass());
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
