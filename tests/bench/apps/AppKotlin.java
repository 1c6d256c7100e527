// SPDX-License-Identifier: GPL-2.0-only
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.PrintStream;
import java.nio.file.Files;
import org.jetbrains.kotlin.cli.common.ExitCode;
import org.jetbrains.kotlin.cli.jvm.K2JVMCompiler;

/** The Kotlin 1.3 compiler (kotlin): kotlinc compiling Kotlin, in process;
 * each round analyses and compiles a generated source of data classes,
 * sealed classes with `when`, extension functions, lambdas over
 * collections, generics with reified inline functions and coroutines-free
 * sequences to class files. */
public final class AppKotlin {
    static String source(int variant) {
        StringBuilder sb = new StringBuilder("package bench\n\n");
        sb.append("sealed class Expr\n");
        sb.append("data class Num(val v: Int) : Expr()\n");
        sb.append("data class Add(val a: Expr, val b: Expr) : Expr()\n");
        sb.append("data class Mul(val a: Expr, val b: Expr) : Expr()\n");
        sb.append("fun eval(e: Expr): Int = when (e) {\n  is Num -> e.v\n  is Add -> eval(e.a) + eval(e.b)\n"
                  + "  is Mul -> eval(e.a) * eval(e.b)\n}\n");
        sb.append("inline fun <reified T> List<Any>.only(): List<T> = filterIsInstance<T>()\n");
        for (int i = 0; i < 8; i++) {
            sb.append("data class Row").append(i).append("(val key: String, val n: Int, val tags: List<String>)\n");
            sb.append("fun String.score").append(i).append("(): Int = fold(").append(variant)
              .append(") { acc, c -> acc * 31 + c.toInt() }\n");
            sb.append("class Gen").append(i).append("<T : Comparable<T>>(private val xs: List<T>) {\n");
            sb.append("  fun top(n: Int): List<T> = xs.sortedDescending().take(n + ").append(i).append(")\n");
            sb.append("  fun pairs(): List<Pair<T, T>> = xs.flatMap { a -> xs.filter { it > a }.map { a to it } }\n");
            sb.append("  fun groups(): Map<T, Int> = xs.groupingBy { it }.eachCount()\n");
            sb.append("  fun expr(d: Int): Expr = if (d == 0) Num(").append(i)
              .append(") else Add(expr(d - 1), Mul(Num(d), Num(2)))\n");
            sb.append("  fun rows(): Sequence<Row").append(i).append("> = generateSequence(0) { it + 1 }.take(xs.size)\n");
            sb.append("      .map { Row").append(i).append("(xs[it].toString(), it, listOf(\"a\", \"b\")) }\n");
            sb.append("      .filter { it.key.score").append(i).append("() % 3 != 0 }\n");
            sb.append("}\n");
        }
        return sb.toString();
    }

    public static void main(String[] args) throws Exception {
        File dir = Files.createTempDirectory("jsampled-kotlin").toFile();
        File src = new File(dir, "Bench.kt");
        File out = new File(dir, "out");
        String home = System.getProperty("kotlin.home", "/usr/share/kotlin/kotlinc");
        int[] round = {0};
        AppLoop.run(args, "compilations", () -> {
            Files.writeString(src.toPath(), source(round[0]++ % 7));
            File made = new File(out, "bench/Num.class");
            made.delete();
            ByteArrayOutputStream msgs = new ByteArrayOutputStream();
            ExitCode rc = new K2JVMCompiler().exec(new PrintStream(msgs),
                new String[] {"-kotlin-home", home, "-no-reflect", "-nowarn", "-jvm-target", "1.8",
                              "-d", out.getPath(), src.getPath()});
            if (rc != ExitCode.OK || !made.exists())
                throw new IllegalStateException("kotlinc failed: " + msgs);
            return 1;
        });
    }
}
