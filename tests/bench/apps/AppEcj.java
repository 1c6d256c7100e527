// SPDX-License-Identifier: GPL-2.0-only
import java.io.File;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import org.eclipse.jdt.core.compiler.batch.BatchCompiler;

/** The Eclipse compiler for Java (libeclipse-jdt-core-java): each round
 * compiles the generated source tree (generics, records, lambdas, switch
 * expressions, inner classes) for Java 17, class files written to a
 * temporary directory. */
public final class AppEcj {
    public static void main(String[] args) throws Exception {
        File src = new File(AppLoop.input(args, "javac"), "src");
        long files;
        try (var s = Files.walk(src.toPath())) {
            files = s.filter(p -> p.toString().endsWith(".java")).count();
        }
        File out = Files.createTempDirectory("appecj").toFile();
        long n = files;
        AppLoop.run(args, "classes compiled", () -> {
            StringWriter err = new StringWriter();
            boolean ok = BatchCompiler.compile(new String[] {"-17", "-nowarn", "-proc:none", "-d", out.getPath(),
                                                             src.getPath()},
                                               new PrintWriter(new StringWriter()), new PrintWriter(err), null);
            if (!ok) throw new IllegalStateException("ecj failed: " + err);
            return n;
        });
    }
}
