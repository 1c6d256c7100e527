// SPDX-License-Identifier: GPL-2.0-only
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.catalina.Context;
import org.apache.catalina.startup.Tomcat;

/** Tomcat 10 (libtomcat10-java), embedded, under load from wrk (wrk) over
 * loopback: each round is one wrk run of a few seconds against a servlet
 * that searches, sorts and renders a catalogue as HTML. Units: requests. */
public final class AppTomcat {
    record Product(String sku, String title, int qty, double price) {}

    static final List<Product> CATALOGUE = new ArrayList<>();

    public static final class CatalogueServlet extends HttpServlet {
        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws java.io.IOException {
            String q = req.getParameter("q") == null ? "" : req.getParameter("q");
            int n = Integer.parseInt(req.getParameter("n") == null ? "50" : req.getParameter("n"));
            List<Product> hits = new ArrayList<>();
            for (Product p : CATALOGUE)
                if (p.title().contains(q)) hits.add(p);
            hits.sort(Comparator.comparingDouble(Product::price).reversed().thenComparing(Product::sku));
            resp.setContentType("text/html;charset=UTF-8");
            PrintWriter out = resp.getWriter();
            out.println("<html><body><h1>" + hits.size() + " products matching " + q + "</h1><table>");
            double total = 0;
            for (Product p : hits.subList(0, Math.min(n, hits.size()))) {
                total += p.qty() * p.price();
                out.printf(Locale.ROOT, "<tr><td>%s</td><td>%s</td><td>%d</td><td>%.2f</td></tr>%n",
                           p.sku(), p.title().toUpperCase(Locale.ROOT), p.qty(), p.price());
            }
            out.printf(Locale.ROOT, "</table><p>total %.2f</p></body></html>%n", total);
        }
    }

    public static void main(String[] args) throws Exception {
        List<String> lines = Files.readAllLines(AppLoop.input(args, "corpus.txt").toPath());
        for (int i = 0; i < 4000; i++) {
            String l = lines.get(i);
            CATALOGUE.add(new Product("S" + i, l.substring(0, Math.min(60, l.length())), 1 + i % 9, (i * 7919 % 99900) / 100.0));
        }
        File base = Files.createTempDirectory("apptomcat").toFile();
        Tomcat tomcat = new Tomcat();
        tomcat.setBaseDir(base.getPath());
        tomcat.setPort(0);
        Context ctx = tomcat.addContext("", base.getPath());
        Tomcat.addServlet(ctx, "catalogue", new CatalogueServlet());
        ctx.addServletMappingDecoded("/catalogue", "catalogue");
        tomcat.getConnector();
        tomcat.start();
        int port = tomcat.getConnector().getLocalPort();
        String[] urls = {"/catalogue?q=ka&n=100", "/catalogue?q=sen&n=30", "/catalogue?q=Mu&n=200"};
        Pattern done = Pattern.compile("(\\d+) requests in");
        long[] round = {0};
        AppLoop.run(args, "requests", () -> {
            String url = "http://127.0.0.1:" + port + urls[(int) (round[0]++ % urls.length)];
            Process wrk = new ProcessBuilder("wrk", "-t1", "-c8", "-d2s", url).redirectErrorStream(true).start();
            StringBuilder text = new StringBuilder();
            try (BufferedReader r = new BufferedReader(new InputStreamReader(wrk.getInputStream()))) {
                for (String l; (l = r.readLine()) != null; ) text.append(l).append('\n');
            }
            if (wrk.waitFor() != 0 || text.indexOf("Non-2xx") >= 0 || text.indexOf("Socket errors") >= 0)
                throw new IllegalStateException("wrk: " + text);
            Matcher m = done.matcher(text);
            if (!m.find()) throw new IllegalStateException("wrk: " + text);
            return Long.parseLong(m.group(1));
        });
    }
}
