// SPDX-License-Identifier: GPL-2.0-only
import org.mozilla.javascript.Context;
import org.mozilla.javascript.Script;
import org.mozilla.javascript.Scriptable;

/** Rhino (rhino): JavaScript, both interpreted (optimization level -1, the
 * bytecode interpreter loop) and compiled to JVM classes (level 9): deep
 * recursion, closures, objects, string and array work. */
public final class AppRhino {
    static final String SCRIPT = String.join("\n",
        "function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }",
        "function ack(m, n) { return m == 0 ? n + 1 : n == 0 ? ack(m - 1, 1) : ack(m - 1, ack(m, n - 1)); }",
        "function depth(n) { return n == 0 ? 0 : 1 + depth(n - 1); }",
        "function tree(d) { return d == 0 ? null : { l: tree(d - 1), r: tree(d - 1), v: d }; }",
        "function sum(t) { return t == null ? 0 : t.v + sum(t.l) + sum(t.r); }",
        "function words() {",
        "  var counts = {}, out = [];",
        "  for (var i = 0; i < 4000; i++) { var w = 'w' + (i * 7919 % 613); counts[w] = (counts[w] || 0) + 1; }",
        "  for (var k in counts) out.push([k, counts[k]]);",
        "  out.sort(function (a, b) { return b[1] - a[1] || (a[0] < b[0] ? -1 : 1); });",
        "  return out.slice(0, 10).map(function (p) { return p[0].toUpperCase(); }).join(',').length;",
        "}",
        "fib(18) + ack(2, 150) + depth(800) + sum(tree(12)) + words();");

    public static void main(String[] args) throws Exception {
        Context cx = Context.enter();
        Scriptable scope = cx.initStandardObjects();
        cx.setOptimizationLevel(-1);
        cx.setMaximumInterpreterStackDepth(100000);
        Script interpreted = cx.compileString(SCRIPT, "bench-interpreted.js", 1, null);
        cx.setOptimizationLevel(9);
        Script compiled = cx.compileString(SCRIPT, "bench-compiled.js", 1, null);
        AppLoop.run(args, "script runs", () -> {
            Context.toNumber(interpreted.exec(cx, scope));
            Context.toNumber(compiled.exec(cx, scope));
            return 2;
        });
    }
}
