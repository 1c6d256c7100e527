# SPDX-License-Identifier: GPL-2.0-only
"""Inputs for the application drivers of bench_decode_apps.py.

Everything is generated from a fixed seed into one directory: a text corpus,
XML order documents, their XML Schema and two stylesheets (XSLT 1.0 for
Xalan, XSLT 3.0 for Saxon), XSL-FO reports, SVG drawings, PDF files (written
by hand, Flate-compressed pages), a Java source tree and an Ant project.
`python3 gen_inputs.py DIR` writes them all.
"""
import os
import random
import sys
import zlib

SYLLABLES = "ka to ri mu sen da lo vi ne par ost gra bel ton fi qu ex har mon del".split()


def make_words(rng, n):
    return ["".join(rng.choice(SYLLABLES) for _ in range(rng.randint(1, 4))) for _ in range(n)]


def sentence(rng, words, n):
    return " ".join(rng.choice(words) for _ in range(n)).capitalize() + "."


def write(path, text, mode="w"):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, mode) as f:
        f.write(text)


def corpus(d, rng, words):
    """corpus.txt: 8000 lines, one "document" of 20-80 words each (~2.5 MB)."""
    lines = [" ".join(sentence(rng, words, rng.randint(5, 16)) for _ in range(rng.randint(2, 6)))
             for _ in range(8000)]
    write(os.path.join(d, "corpus.txt"), "\n".join(lines) + "\n")


def orders(d, rng, words):
    """orders-N.xml: 600 orders each, customers, items and free-text notes."""
    countries = ["DE", "FR", "US", "JP", "BR", "IN", "NO", "ZA"]
    for n in range(3):
        out = ['<?xml version="1.0" encoding="UTF-8"?>',
               '<orders xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
               'xsi:noNamespaceSchemaLocation="orders.xsd">']
        for i in range(600):
            c = rng.randrange(150)
            out.append(f'<order id="{n * 1000 + i}" date="2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}" '
                       f'status="{rng.choice(["open", "paid", "shipped", "returned"])}">')
            out.append(f'<customer id="c{c}" country="{countries[c % len(countries)]}">'
                       f'<name>{words[c].capitalize()} {words[c * 7 % len(words)].capitalize()}</name></customer>')
            for _ in range(rng.randint(1, 7)):
                out.append(f'<item sku="S{rng.randrange(400)}" qty="{rng.randint(1, 9)}" '
                           f'price="{rng.randint(100, 99999) / 100:.2f}"><title>{sentence(rng, words, 3)}</title></item>')
            out.append(f'<note>{sentence(rng, words, rng.randint(4, 30))} ref-{rng.randrange(10**6)}</note></order>')
        out.append("</orders>")
        write(os.path.join(d, f"orders-{n}.xml"), "\n".join(out) + "\n")
    write(os.path.join(d, "orders.xsd"), """<?xml version="1.0"?>
<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema">
 <xs:element name="orders"><xs:complexType><xs:sequence>
  <xs:element name="order" maxOccurs="unbounded"><xs:complexType><xs:sequence>
   <xs:element name="customer"><xs:complexType><xs:sequence><xs:element name="name" type="xs:string"/></xs:sequence>
    <xs:attribute name="id" type="xs:NCName" use="required"/>
    <xs:attribute name="country"><xs:simpleType><xs:restriction base="xs:string">
     <xs:pattern value="[A-Z]{2}"/></xs:restriction></xs:simpleType></xs:attribute>
   </xs:complexType></xs:element>
   <xs:element name="item" maxOccurs="unbounded"><xs:complexType><xs:sequence>
    <xs:element name="title" type="xs:string"/></xs:sequence>
    <xs:attribute name="sku" type="xs:string"/><xs:attribute name="qty" type="xs:positiveInteger"/>
    <xs:attribute name="price" type="xs:decimal"/>
   </xs:complexType></xs:element>
   <xs:element name="note" type="xs:string"/>
  </xs:sequence>
  <xs:attribute name="id" type="xs:integer"/><xs:attribute name="date" type="xs:date"/>
  <xs:attribute name="status"><xs:simpleType><xs:restriction base="xs:string">
   <xs:enumeration value="open"/><xs:enumeration value="paid"/><xs:enumeration value="shipped"/>
   <xs:enumeration value="returned"/></xs:restriction></xs:simpleType></xs:attribute>
  </xs:complexType></xs:element>
 </xs:sequence></xs:complexType></xs:element>
</xs:schema>
""")


def stylesheets(d):
    """orders.xsl (XSLT 1.0: Muenchian grouping, keys, sorting, recursive named
    templates) and orders3.xsl (XSLT 3.0: grouping, recursive functions,
    regular expressions, tokenizing)."""
    write(os.path.join(d, "orders.xsl"), """<?xml version="1.0"?>
<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
 <xsl:output method="html" indent="yes"/>
 <xsl:key name="by-customer" match="order" use="customer/@id"/>
 <xsl:key name="by-sku" match="item" use="@sku"/>
 <xsl:template match="/orders">
  <html><body>
   <h1>Customers</h1>
   <xsl:for-each select="order[generate-id() = generate-id(key('by-customer', customer/@id)[1])]">
    <xsl:sort select="customer/name"/>
    <xsl:variable name="mine" select="key('by-customer', customer/@id)"/>
    <h2><xsl:value-of select="customer/name"/> (<xsl:value-of select="count($mine)"/> orders)</h2>
    <p>Total: <xsl:call-template name="sum-items"><xsl:with-param name="items" select="$mine/item"/></xsl:call-template></p>
    <table>
     <xsl:for-each select="$mine">
      <xsl:sort select="@date" order="descending"/>
      <tr><td><xsl:value-of select="@id"/></td><td><xsl:value-of select="@date"/></td>
       <td><xsl:value-of select="@status"/></td>
       <td><xsl:call-template name="words"><xsl:with-param name="text" select="normalize-space(note)"/></xsl:call-template></td></tr>
     </xsl:for-each>
    </table>
   </xsl:for-each>
   <h1>Products</h1>
   <xsl:for-each select="order/item[generate-id() = generate-id(key('by-sku', @sku)[1])]">
    <xsl:sort select="sum(key('by-sku', @sku)/@qty)" data-type="number" order="descending"/>
    <xsl:if test="position() &lt;= 50"><p><xsl:value-of select="@sku"/>: <xsl:value-of select="sum(key('by-sku', @sku)/@qty)"/></p></xsl:if>
   </xsl:for-each>
  </body></html>
 </xsl:template>
 <xsl:template name="sum-items">
  <xsl:param name="items"/><xsl:param name="acc" select="0"/>
  <xsl:choose>
   <xsl:when test="$items"><xsl:call-template name="sum-items">
     <xsl:with-param name="items" select="$items[position() &gt; 1]"/>
     <xsl:with-param name="acc" select="$acc + $items[1]/@qty * $items[1]/@price"/></xsl:call-template></xsl:when>
   <xsl:otherwise><xsl:value-of select="format-number($acc, '#,##0.00')"/></xsl:otherwise>
  </xsl:choose>
 </xsl:template>
 <xsl:template name="words">
  <xsl:param name="text"/><xsl:param name="n" select="0"/>
  <xsl:choose>
   <xsl:when test="contains($text, ' ')"><xsl:call-template name="words">
     <xsl:with-param name="text" select="substring-after($text, ' ')"/>
     <xsl:with-param name="n" select="$n + 1"/></xsl:call-template></xsl:when>
   <xsl:otherwise><xsl:value-of select="$n + 1"/> words, last <xsl:value-of
     select="translate($text, 'abcdefghijklmnopqrstuvwxyz', 'ABCDEFGHIJKLMNOPQRSTUVWXYZ')"/></xsl:otherwise>
  </xsl:choose>
 </xsl:template>
</xsl:stylesheet>
""")
    write(os.path.join(d, "orders3.xsl"), r"""<?xml version="1.0"?>
<xsl:stylesheet version="3.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform"
  xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:f="urn:f" exclude-result-prefixes="xs f">
 <xsl:output method="xml" indent="yes"/>
 <xsl:function name="f:fib" as="xs:integer">
  <xsl:param name="n" as="xs:integer"/>
  <xsl:sequence select="if ($n lt 2) then $n else f:fib($n - 1) + f:fib($n - 2)"/>
 </xsl:function>
 <xsl:function name="f:total" as="xs:decimal">
  <xsl:param name="items" as="element(item)*"/>
  <xsl:sequence select="if (empty($items)) then 0
    else xs:decimal($items[1]/@qty) * xs:decimal($items[1]/@price) + f:total(tail($items))"/>
 </xsl:function>
 <xsl:template match="/orders">
  <report>
   <xsl:for-each-group select="order" group-by="customer/@country">
    <xsl:sort select="current-grouping-key()"/>
    <country code="{current-grouping-key()}" orders="{count(current-group())}">
     <xsl:for-each-group select="current-group()" group-by="substring(@date, 1, 7)">
      <xsl:sort select="current-grouping-key()"/>
      <month key="{current-grouping-key()}" total="{format-number(f:total(current-group()/item), '#,##0.00')}">
       <xsl:for-each select="current-group()">
        <xsl:sort select="xs:date(@date)"/>
        <xsl:variable name="words" select="tokenize(normalize-space(note), '\s+')"/>
        <order id="{@id}" words="{count($words)}" longest="{max($words ! string-length(.))}"
          ref="{replace(note, '^.*ref-(\d+).*$', '$1')}" fib="{f:fib(string-length(@id) + 9)}"
          upper="{upper-case(string-join($words[position() le 3], '-'))}"/>
       </xsl:for-each>
      </month>
     </xsl:for-each-group>
    </country>
   </xsl:for-each-group>
  </report>
 </xsl:template>
</xsl:stylesheet>
""")


def fo_reports(d, rng, words):
    """report-N.fo: about 12 pages of headings, paragraphs, a list and a table."""
    for n in range(2):
        body = []
        for s in range(6):
            body.append(f'<fo:block font-size="16pt" font-weight="bold" space-before="12pt" '
                        f'keep-with-next="always">Section {s + 1}: {sentence(rng, words, 3)}</fo:block>')
            for _ in range(4):
                body.append(f'<fo:block text-align="justify" space-after="6pt">'
                            f'{" ".join(sentence(rng, words, rng.randint(6, 18)) for _ in range(6))}</fo:block>')
            body.append('<fo:list-block provisional-distance-between-starts="18pt">')
            for i in range(6):
                body.append(f'<fo:list-item><fo:list-item-label end-indent="label-end()"><fo:block>{i + 1}.</fo:block>'
                            f'</fo:list-item-label><fo:list-item-body start-indent="body-start()"><fo:block>'
                            f'{sentence(rng, words, 12)}</fo:block></fo:list-item-body></fo:list-item>')
            body.append('</fo:list-block><fo:table table-layout="fixed" width="100%" border="0.5pt solid black">'
                        '<fo:table-column column-width="15%"/><fo:table-column column-width="55%"/>'
                        '<fo:table-column column-width="15%"/><fo:table-column column-width="15%"/><fo:table-body>')
            for i in range(30):
                cells = [f"S{rng.randrange(400)}", sentence(rng, words, 5), str(rng.randint(1, 9)),
                         f"{rng.randint(100, 99999) / 100:.2f}"]
                body.append("<fo:table-row>" + "".join(
                    f'<fo:table-cell border="0.5pt solid gray" padding="2pt"><fo:block>{c}</fo:block></fo:table-cell>'
                    for c in cells) + "</fo:table-row>")
            body.append("</fo:table-body></fo:table>")
        write(os.path.join(d, f"report-{n}.fo"), f"""<?xml version="1.0" encoding="UTF-8"?>
<fo:root xmlns:fo="http://www.w3.org/1999/XSL/Format">
 <fo:layout-master-set><fo:simple-page-master master-name="A4" page-height="29.7cm" page-width="21cm"
   margin="2cm"><fo:region-body margin-bottom="1cm"/><fo:region-after extent="1cm"/></fo:simple-page-master>
 </fo:layout-master-set>
 <fo:page-sequence master-reference="A4">
  <fo:static-content flow-name="xsl-region-after"><fo:block text-align="center">Page <fo:page-number/></fo:block>
  </fo:static-content>
  <fo:flow flow-name="xsl-region-body" font-family="serif" font-size="10pt">
{chr(10).join(body)}
  </fo:flow>
 </fo:page-sequence>
</fo:root>
""")


def svgs(d, rng, words):
    """drawing-N.svg: gradients, curves, polygons, transformed groups, dashes, text, one blur filter."""
    for n in range(4):
        out = ['<svg xmlns="http://www.w3.org/2000/svg" width="400" height="400" viewBox="0 0 400 400">',
               '<defs><linearGradient id="g1" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="#f80"/>'
               '<stop offset="1" stop-color="#08f" stop-opacity="0.6"/></linearGradient>'
               '<radialGradient id="g2"><stop offset="0" stop-color="#fff"/><stop offset="1" stop-color="#363"/>'
               '</radialGradient><filter id="blur"><feGaussianBlur stdDeviation="3"/></filter></defs>',
               '<rect width="400" height="400" fill="url(#g2)"/>']
        for g in range(12):
            out.append(f'<g transform="rotate({rng.randint(0, 359)} 200 200) translate({rng.randint(-50, 50)} '
                       f'{rng.randint(-50, 50)}) scale({rng.uniform(0.5, 1.5):.2f})" opacity="{rng.uniform(0.4, 1):.2f}">')
            for _ in range(15):
                pts = " ".join(f"{rng.randint(0, 400)},{rng.randint(0, 400)}" for _ in range(rng.randint(3, 9)))
                out.append(f'<polygon points="{pts}" fill="{"url(#g1)" if rng.random() < 0.3 else "#%06x" % rng.randrange(1 << 24)}" '
                           f'stroke="#222" stroke-width="{rng.uniform(0.2, 3):.1f}" fill-opacity="0.5"/>')
                c = [rng.randint(0, 400) for _ in range(8)]
                out.append(f'<path d="M{c[0]},{c[1]} C{c[2]},{c[3]} {c[4]},{c[5]} {c[6]},{c[7]} S{c[1]},{c[0]} {c[3]},{c[2]}" '
                           f'fill="none" stroke="#%06x" stroke-width="2" stroke-dasharray="6,3"/>' % rng.randrange(1 << 24))
            out.append(f'<text x="20" y="{30 + 25 * g}" font-family="sans-serif" font-size="18">'
                       f'{sentence(rng, words, 4)}</text></g>')
        out.append('<circle cx="200" cy="200" r="80" fill="url(#g1)" filter="url(#blur)"/></svg>')
        write(os.path.join(d, f"drawing-{n}.svg"), "\n".join(out) + "\n")


def pdfs(d, rng, words):
    """doc-N.pdf: 8 pages each of Helvetica text and vector graphics, Flate-compressed."""
    for n in range(3):
        objs = {1: b"<< /Type /Catalog /Pages 2 0 R >>",
                3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
                4: b"<< /Type /Font /Subtype /Type1 /BaseFont /Times-Bold /Encoding /WinAnsiEncoding >>"}
        kids = []
        for p in range(8):
            ops = [f"BT /F2 16 Tf 50 790 Td ({sentence(rng, words, 4)}) Tj ET"]
            ops.append("BT /F1 9 Tf 11 TL 50 760 Td")
            ops += [f"({sentence(rng, words, rng.randint(8, 14))}) '" for _ in range(30)]
            ops.append("ET")
            for _ in range(40):
                x, y = rng.randint(40, 500), rng.randint(40, 400)
                ops.append(f"{rng.random():.2f} {rng.random():.2f} {rng.random():.2f} rg {rng.uniform(0.3, 2):.1f} w "
                           f"{x} {y} m {x + rng.randint(-80, 80)} {y + rng.randint(-80, 80)} "
                           f"{x + rng.randint(-80, 80)} {y + rng.randint(-80, 80)} {x + rng.randint(-80, 80)} "
                           f"{y + rng.randint(-80, 80)} c h B")
                ops.append(f"{rng.randint(40, 500)} {rng.randint(40, 400)} {rng.randint(5, 60)} {rng.randint(5, 60)} re S")
            content = zlib.compress("\n".join(ops).encode("latin-1"))
            page, stream = 5 + 2 * p, 6 + 2 * p
            objs[stream] = b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(content) + content + b"\nendstream"
            objs[page] = (b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents %d 0 R "
                          b"/Resources << /Font << /F1 3 0 R /F2 4 0 R >> >> >>" % stream)
            kids.append(b"%d 0 R" % page)
        objs[2] = b"<< /Type /Pages /Kids [" + b" ".join(kids) + b"] /Count %d >>" % len(kids)
        out, offsets = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n"), {}
        for num in sorted(objs):
            offsets[num] = len(out)
            out += b"%d 0 obj\n" % num + objs[num] + b"\nendobj\n"
        xref = len(out)
        out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
        out += b"".join(b"%010d 00000 n \n" % offsets[k] for k in sorted(objs))
        out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
        write(os.path.join(d, f"doc-{n}.pdf"), bytes(out), "wb")


def java_tree(d, rng, words, classes):
    """A compilable source tree: packages of classes with generics, lambdas, records,
    inner classes and switches, each class calling the one before it."""
    for i in range(classes):
        pkg = f"gen.p{i % 8}"
        prev = f"gen.p{(i - 1) % 8}.C{i - 1}" if i else None
        fields = "\n".join(f"    private int {w}{k};" for k, w in enumerate(rng.sample(words, 6)))
        src = f"""package {pkg};

import java.util.*;
import java.util.function.*;
import java.util.stream.*;

/** {sentence(rng, words, 8)} */
public class C{i} implements Comparable<C{i}> {{
{fields}
    private final Map<String, List<Integer>> index = new TreeMap<>();

    public record Entry(String key, int value) {{
        public Entry {{ Objects.requireNonNull(key); }}
    }}

    interface Visitor<R> {{ R visit(Entry e); }}

    final class Walker implements Visitor<Integer> {{
        public Integer visit(Entry e) {{ return e.value() * {i + 1} + index.size(); }}
    }}

    public int compareTo(C{i} o) {{ return Integer.compare(hashCode(), o.hashCode()); }}

    public static <T extends Comparable<? super T>> List<T> top(Collection<T> in, int n) {{
        return in.stream().sorted(Comparator.reverseOrder()).limit(n).collect(Collectors.toList());
    }}

    public int work(String text) {{
        int acc = {'0' if prev is None else f'new {prev}().work(text.substring(0, text.length() / 2))'};
        for (String w : text.split(" ")) {{
            index.computeIfAbsent(w, k -> new ArrayList<>()).add(w.length());
            switch (w.length() % 4) {{
                case 0 -> acc += w.hashCode() & 0xff;
                case 1 -> acc ^= w.length();
                default -> acc += new Walker().visit(new Entry(w, acc & 7));
            }}
        }}
        Function<Integer, String> f = x -> "{rng.choice(words)}" + x;
        BiFunction<String, Integer, Integer> g = (s, x) -> s.length() + x;
        return g.apply(f.apply(acc), top(index.keySet(), 3).size());
    }}
}}
"""
        write(os.path.join(d, "src", pkg.replace(".", "/"), f"C{i}.java"), src)


def ant_project(d, rng, words):
    """An Ant project: its own source tree, resources to filter, and a build.xml
    that compiles, jars, copies with filtering, zips and checksums."""
    java_tree(d, rng, words, 40)
    for i in range(30):
        write(os.path.join(d, "res", f"msg{i}.properties"),
              "".join(f"{w}=@VERSION@ {sentence(rng, words, 6)}\n" for w in rng.sample(words, 20)))
    write(os.path.join(d, "build.xml"), """<project name="generated" default="all" basedir=".">
  <property name="out" value="${basedir}/out"/>
  <target name="clean"><delete dir="${out}" quiet="true"/></target>
  <target name="compile" depends="clean">
    <mkdir dir="${out}/classes"/>
    <javac srcdir="src" destdir="${out}/classes" includeantruntime="false" release="17" debug="true"/>
  </target>
  <target name="resources" depends="clean">
    <copy todir="${out}/classes/res"><fileset dir="res"/><filterset><filter token="VERSION" value="1.0.${ant.java.version}"/></filterset></copy>
    <replaceregexp match="(\\w+)=" replace="\\1 = " flags="g" byline="true"><fileset dir="${out}/classes/res"/></replaceregexp>
  </target>
  <target name="all" depends="compile,resources">
    <jar destfile="${out}/generated.jar" basedir="${out}/classes"/>
    <zip destfile="${out}/src.zip"><fileset dir="src"/><fileset dir="res"/></zip>
    <checksum algorithm="SHA-256"><fileset dir="${out}" includes="*.jar,*.zip"/></checksum>
    <concat destfile="${out}/all.properties"><fileset dir="${out}/classes/res"/></concat>
  </target>
</project>
""")


def generate(d):
    rng = random.Random(20240611)
    words = make_words(rng, 3000)
    corpus(d, rng, words)
    orders(d, rng, words)
    stylesheets(d)
    fo_reports(d, rng, words)
    svgs(d, rng, words)
    pdfs(d, rng, words)
    java_tree(os.path.join(d, "javac"), rng, words, 120)
    ant_project(os.path.join(d, "ant"), rng, words)


if __name__ == "__main__":
    generate(sys.argv[1])
