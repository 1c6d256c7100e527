// SPDX-License-Identifier: GPL-2.0-only
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.servlet.http.HttpServlet;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.gzip.GzipHandler;
import org.eclipse.jetty.servlet.ServletContextHandler;
import org.eclipse.jetty.servlet.ServletHolder;

/** Jetty 9 (libjetty9-java), embedded, under load from wrk (wrk) over
 * loopback: each round is one wrk run of a few seconds against a servlet
 * behind Jetty's gzip handler that counts word frequencies in a slice of a
 * text corpus and renders them as JSON. Units: requests. */
public final class AppJetty {
    static List<String> lines;

    public static final class WordsServlet extends HttpServlet {
        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            int from = Integer.parseInt(req.getParameter("from"));
            int n = Integer.parseInt(req.getParameter("n"));
            Map<String, Integer> counts = new TreeMap<>();
            for (String l : lines.subList(from, Math.min(lines.size(), from + n)))
                for (String w : l.split(" "))
                    if (!w.isEmpty()) counts.merge(w.toLowerCase(Locale.ROOT), 1, Integer::sum);
            resp.setContentType("application/json;charset=UTF-8");
            PrintWriter out = resp.getWriter();
            out.print("{\"from\":" + from + ",\"words\":{");
            boolean first = true;
            for (Map.Entry<String, Integer> e : counts.entrySet()) {
                if (e.getValue() < 2) continue;
                out.print((first ? "" : ",") + "\"" + e.getKey() + "\":" + e.getValue());
                first = false;
            }
            out.println("}}");
        }
    }

    public static void main(String[] args) throws Exception {
        lines = Files.readAllLines(AppLoop.input(args, "corpus.txt").toPath());
        Server server = new Server();
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        server.addConnector(connector);
        ServletContextHandler ctx = new ServletContextHandler();
        ctx.addServlet(new ServletHolder(new WordsServlet()), "/words");
        GzipHandler gzip = new GzipHandler();
        gzip.setHandler(ctx);
        server.setHandler(gzip);
        server.start();
        int port = connector.getLocalPort();
        String[] urls = {"/words?from=0&n=40", "/words?from=2000&n=120", "/words?from=5000&n=10"};
        Pattern done = Pattern.compile("(\\d+) requests in");
        long[] round = {0};
        AppLoop.run(args, "requests", () -> {
            String url = "http://127.0.0.1:" + port + urls[(int) (round[0]++ % urls.length)];
            Process wrk = new ProcessBuilder("wrk", "-t1", "-c8", "-d2s", "-H", "Accept-Encoding: gzip", url)
                              .redirectErrorStream(true).start();
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
