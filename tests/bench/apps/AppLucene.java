// SPDX-License-Identifier: GPL-2.0-only
import java.nio.file.Files;
import java.util.List;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.standard.StandardAnalyzer;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.IntField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.Term;
import org.apache.lucene.queryparser.classic.QueryParser;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.FuzzyQuery;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.PrefixQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.Sort;
import org.apache.lucene.search.SortField;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.store.RAMDirectory;
import org.apache.lucene.util.Version;

/** Lucene 4.10 (liblucene4.10-java): each round indexes the text corpus
 * (one document per line) in memory, then runs term, boolean, phrase,
 * prefix, fuzzy and sorted queries against it. */
public final class AppLucene {
    public static void main(String[] args) throws Exception {
        List<String> lines = Files.readAllLines(AppLoop.input(args, "corpus.txt").toPath());
        Analyzer analyzer = new StandardAnalyzer();
        String[] probe = lines.get(17).toLowerCase().replaceAll("[^a-z ]", "").split(" +");
        AppLoop.run(args, "documents and queries", () -> {
            RAMDirectory dir = new RAMDirectory();
            long n = 0;
            try (IndexWriter w = new IndexWriter(dir, new IndexWriterConfig(Version.LATEST, analyzer))) {
                for (int i = 0; i < 4000; i++) {
                    Document d = new Document();
                    d.add(new TextField("body", lines.get(i), Field.Store.NO));
                    d.add(new IntField("len", lines.get(i).length(), Field.Store.YES));
                    w.addDocument(d);
                    n++;
                }
            }
            try (DirectoryReader r = DirectoryReader.open(dir)) {
                IndexSearcher s = new IndexSearcher(r);
                QueryParser qp = new QueryParser("body", analyzer);
                for (int i = 0; i + 1 < probe.length && i < 40; i++) {
                    Query[] qs = {
                        new TermQuery(new Term("body", probe[i])),
                        qp.parse("\"" + probe[i] + " " + probe[i + 1] + "\"~3"),
                        qp.parse("+" + probe[i] + " -" + probe[i + 1] + " " + probe[(i + 2) % probe.length]),
                        new PrefixQuery(new Term("body", probe[i].substring(0, Math.min(3, probe[i].length())))),
                        new FuzzyQuery(new Term("body", probe[i]), 2),
                    };
                    BooleanQuery all = new BooleanQuery();
                    for (Query q : qs) {
                        TopDocs top = s.search(q, 20);
                        n += 1 + (top.totalHits > 0 ? 0 : 0);
                        all.add(q, BooleanClause.Occur.SHOULD);
                    }
                    s.search(all, 50, new Sort(new SortField("len", SortField.Type.INT, true)));
                    n++;
                }
            }
            return n;
        });
    }
}
