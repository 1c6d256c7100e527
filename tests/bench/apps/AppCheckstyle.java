// SPDX-License-Identifier: GPL-2.0-only
import com.puppycrawl.tools.checkstyle.Checker;
import com.puppycrawl.tools.checkstyle.ConfigurationLoader;
import com.puppycrawl.tools.checkstyle.PropertiesExpander;
import com.puppycrawl.tools.checkstyle.api.AuditEvent;
import com.puppycrawl.tools.checkstyle.api.AuditListener;
import com.puppycrawl.tools.checkstyle.api.Configuration;
import java.io.File;
import java.nio.file.Files;
import java.util.List;
import java.util.stream.Collectors;

/** Checkstyle (checkstyle), the Java source linter: each round checks the
 * generated source tree (generics, records, lambdas, switch expressions,
 * inner classes) against the Google style rules bundled with it: Java and
 * Javadoc parsing, AST walks by every check, regular expressions over lines.
 * Units: files checked. */
public final class AppCheckstyle {
    static final class Count implements AuditListener {
        long violations;

        public void auditStarted(AuditEvent e) {}
        public void auditFinished(AuditEvent e) {}
        public void fileStarted(AuditEvent e) {}
        public void fileFinished(AuditEvent e) {}
        public void addError(AuditEvent e) { violations++; }
        public void addException(AuditEvent e, Throwable t) { throw new IllegalStateException(e.getFileName(), t); }
    }

    public static void main(String[] args) throws Exception {
        File src = new File(AppLoop.input(args, "javac"), "src");
        List<File> files;
        try (var s = Files.walk(src.toPath())) {
            files = s.filter(p -> p.toString().endsWith(".java")).map(p -> p.toFile()).collect(Collectors.toList());
        }
        Configuration config = ConfigurationLoader.loadConfiguration("/google_checks.xml",
                                                                     new PropertiesExpander(System.getProperties()));
        AppLoop.run(args, "files checked", () -> {
            Checker checker = new Checker();
            checker.setModuleClassLoader(Checker.class.getClassLoader());
            checker.configure(config);
            Count count = new Count();
            checker.addListener(count);
            checker.process(files);
            checker.destroy();
            if (count.violations == 0)
                throw new IllegalStateException("checkstyle found nothing to report");
            return files.size();
        });
    }
}
