// SPDX-License-Identifier: GPL-2.0-only
import java.util.Properties;
import org.python.core.PyObject;
import org.python.core.PySystemState;
import org.python.util.PythonInterpreter;

/** Jython (jython): Python compiled to JVM bytecode; each round runs deeply
 * recursive functions (fib, ackermann, a recursive-descent expression
 * evaluator) plus dictionary and string work in Python. */
public final class AppJython {
    static final String SCRIPT = String.join("\n",
        "import sys",
        "sys.setrecursionlimit(20000)",
        "def fib(n):",
        "    return n if n < 2 else fib(n - 1) + fib(n - 2)",
        "def ack(m, n):",
        "    if m == 0: return n + 1",
        "    if n == 0: return ack(m - 1, 1)",
        "    return ack(m - 1, ack(m, n - 1))",
        "def depth(n):",
        "    return 0 if n == 0 else 1 + depth(n - 1)",
        "class Parser(object):",
        "    def __init__(self, text): self.t, self.i = text, 0",
        "    def expr(self):",
        "        v = self.term()",
        "        while self.i < len(self.t) and self.t[self.i] in '+-':",
        "            op = self.t[self.i]; self.i += 1",
        "            w = self.term(); v = v + w if op == '+' else v - w",
        "        return v",
        "    def term(self):",
        "        v = self.atom()",
        "        while self.i < len(self.t) and self.t[self.i] == '*':",
        "            self.i += 1; v = v * self.atom()",
        "        return v",
        "    def atom(self):",
        "        if self.t[self.i] == '(':",
        "            self.i += 1; v = self.expr(); self.i += 1; return v",
        "        j = self.i",
        "        while self.i < len(self.t) and self.t[self.i].isdigit(): self.i += 1",
        "        return int(self.t[j:self.i])",
        "def nested(n):",
        "    return str(n) if n == 0 else '(' + str(n) + '+' + nested(n - 1) + '*2)'",
        "def words():",
        "    counts = {}",
        "    for i in range(3000):",
        "        w = 'w%d' % (i * 7919 % 613)",
        "        counts[w] = counts.get(w, 0) + 1",
        "    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:10]",
        "def round():",
        "    n = fib(22) + ack(2, 60) + depth(400)",
        "    n += Parser(nested(100)).expr() % 1000",
        "    n += len(words())",
        "    return n");

    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        props.setProperty("python.home", "/usr/share/jython");
        props.setProperty("python.cachedir.skip", "true");
        props.setProperty("python.import.site", "false");
        PythonInterpreter.initialize(System.getProperties(), props, new String[0]);
        PythonInterpreter py = new PythonInterpreter();
        py.exec(SCRIPT);
        PyObject round = py.get("round");
        AppLoop.run(args, "script rounds", () -> {
            round.__call__().asLong();
            return 1;
        });
    }
}
