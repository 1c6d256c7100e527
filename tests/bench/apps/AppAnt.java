// SPDX-License-Identifier: GPL-2.0-only
import java.io.File;
import java.nio.file.Files;
import org.apache.tools.ant.DefaultLogger;
import org.apache.tools.ant.Project;
import org.apache.tools.ant.ProjectHelper;

/** Apache Ant (ant), in-process: each round runs the generated project's
 * build (clean, javac through the JDK's compiler, copy with filtering,
 * replaceregexp, jar, zip, checksum, concat). */
public final class AppAnt {
    public static void main(String[] args) throws Exception {
        File buildXml = new File(AppLoop.input(args, "ant"), "build.xml");
        File out = Files.createTempDirectory("appant").toFile();
        AppLoop.run(args, "builds", () -> {
            Project p = new Project();
            DefaultLogger log = new DefaultLogger();
            log.setErrorPrintStream(System.err);
            log.setOutputPrintStream(System.err);
            log.setMessageOutputLevel(Project.MSG_WARN);
            p.addBuildListener(log);
            p.setUserProperty("ant.file", buildXml.getAbsolutePath());
            p.setUserProperty("out", out.getAbsolutePath());
            p.init();
            ProjectHelper.configureProject(p, buildXml);
            p.executeTarget(p.getDefaultTarget());
            if (!new File(out, "generated.jar").isFile()) throw new IllegalStateException("no jar built");
            return 1;
        });
    }
}
