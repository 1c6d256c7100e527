// SPDX-License-Identifier: GPL-2.0-only
import javax.xml.XMLConstants;
import javax.xml.parsers.SAXParser;
import javax.xml.validation.Schema;
import org.apache.xerces.jaxp.DocumentBuilderFactoryImpl;
import org.apache.xerces.jaxp.SAXParserFactoryImpl;
import org.apache.xerces.jaxp.validation.XMLSchemaFactory;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.xml.sax.SAXParseException;
import org.xml.sax.helpers.DefaultHandler;

/** Xerces-J (libxerces2-java), not the JDK's copy: each round parses the
 * order documents with XML Schema validation (SAX), then builds and walks
 * their DOM. */
public final class AppXerces {
    static long walk(Node n) {
        long c = 1;
        if (n instanceof Element) c += ((Element) n).getAttributes().getLength();
        for (Node k = n.getFirstChild(); k != null; k = k.getNextSibling()) c += walk(k);
        return c;
    }

    public static void main(String[] args) throws Exception {
        Schema schema = new XMLSchemaFactory().newSchema(AppLoop.input(args, "orders.xsd"));
        SAXParserFactoryImpl spf = new SAXParserFactoryImpl();
        spf.setNamespaceAware(true);
        spf.setSchema(schema);
        DocumentBuilderFactoryImpl dbf = new DocumentBuilderFactoryImpl();
        dbf.setNamespaceAware(true);
        DefaultHandler strict = new DefaultHandler() {
            @Override public void error(SAXParseException e) throws SAXParseException { throw e; }
        };
        AppLoop.run(args, "documents", () -> {
            long n = 0, nodes = 0;
            for (int i = 0; i < 3; i++) {
                SAXParser p = spf.newSAXParser();
                p.parse(AppLoop.input(args, "orders-" + i + ".xml"), strict);
                Document d = dbf.newDocumentBuilder().parse(AppLoop.input(args, "orders-" + i + ".xml"));
                nodes += walk(d);
                n += 2;
            }
            if (nodes < 1000) throw new IllegalStateException("few nodes");
            return n;
        });
    }
}
