// SPDX-License-Identifier: GPL-2.0-only
import java.io.File;
import java.nio.file.Files;

/** The Scala 2.11 compiler (scala): scalac compiling Scala, in process; each
 * round type-checks and compiles a generated source of case classes,
 * sealed traits with pattern matching, generic collections code, implicits
 * and for-comprehensions to class files. */
public final class AppScala {
    static String source(int variant) {
        StringBuilder sb = new StringBuilder("package bench\n");
        sb.append("sealed trait Expr\n");
        sb.append("case class Num(v: Int) extends Expr\n");
        sb.append("case class Add(a: Expr, b: Expr) extends Expr\n");
        sb.append("case class Mul(a: Expr, b: Expr) extends Expr\n");
        sb.append("object Eval { def apply(e: Expr): Int = e match {\n");
        sb.append("  case Num(v) => v\n  case Add(a, b) => apply(a) + apply(b)\n  case Mul(a, b) => apply(a) * apply(b) } }\n");
        for (int i = 0; i < 12; i++) {
            sb.append("class Gen").append(i).append("[A](xs: List[A])(implicit o: Ordering[A]) {\n");
            sb.append("  def top(n: Int): List[A] = xs.sorted.reverse.take(n + ").append(variant).append(")\n");
            sb.append("  def pairs: List[(A, A)] = for (a <- xs; b <- xs if o.lt(a, b)) yield (a, b)\n");
            sb.append("  def fold: Map[A, Int] = xs.groupBy(identity).map { case (k, v) => k -> v.size }\n");
            sb.append("  def expr(d: Int): Expr = if (d == 0) Num(").append(i).append(") else Add(expr(d - 1), Mul(Num(d), Num(2)))\n");
            sb.append("}\n");
        }
        return sb.toString();
    }

    public static void main(String[] args) throws Exception {
        File dir = Files.createTempDirectory("jsampled-scala").toFile();
        File src = new File(dir, "Bench.scala");
        File out = new File(dir, "out");
        out.mkdirs();
        int[] round = {0};
        AppLoop.run(args, "compilations", () -> {
            Files.writeString(src.toPath(), source(round[0]++ % 7));
            File made = new File(out, "bench/Eval.class");
            made.delete();
            scala.tools.nsc.Main.process(new String[] {"-usejavacp", "-nowarn", "-d", out.getPath(), src.getPath()});
            if (!made.exists())
                throw new IllegalStateException("scalac failed");
            return 1;
        });
    }
}
