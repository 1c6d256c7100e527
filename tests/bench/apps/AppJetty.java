// SPDX-License-Identifier: GPL-2.0-only
import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import javax.servlet.http.HttpServlet;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.gzip.GzipHandler;
import org.eclipse.jetty.servlet.ServletContextHandler;
import org.eclipse.jetty.servlet.ServletHolder;

/** Jetty 9 (libjetty9-java), embedded, under load over loopback from four
 * client threads of the same JVM (java.net.http, so it runs in a JDK's
 * root of another release too): each round is two seconds of requests to a
 * servlet behind Jetty's gzip handler that counts word frequencies in a
 * slice of a text corpus and renders them as JSON. Units: requests. */
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
        HttpClient client = HttpClient.newHttpClient();
        ExecutorService clients = Executors.newFixedThreadPool(4);
        AppLoop.run(args, "requests", () -> {
            long until = System.nanoTime() + 2_000_000_000L;
            List<Future<Long>> done = new ArrayList<>();
            for (int c = 0; c < 4; c++) {
                int first = c;
                done.add(clients.submit(() -> {
                    long n = 0;
                    while (System.nanoTime() < until) {
                        HttpRequest req = HttpRequest.newBuilder(
                            URI.create("http://127.0.0.1:" + port + urls[(int) ((first + n) % urls.length)]))
                            .header("Accept-Encoding", "gzip").build();
                        HttpResponse<byte[]> resp = client.send(req, HttpResponse.BodyHandlers.ofByteArray());
                        if (resp.statusCode() != 200 || resp.body().length == 0)
                            throw new IllegalStateException("HTTP " + resp.statusCode());
                        n++;
                    }
                    return n;
                }));
            }
            long requests = 0;
            for (Future<Long> f : done) requests += f.get();
            return requests;
        });
    }
}
