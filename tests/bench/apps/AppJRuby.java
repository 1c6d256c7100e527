// SPDX-License-Identifier: GPL-2.0-only
import org.jruby.embed.LocalContextScope;
import org.jruby.embed.ScriptingContainer;

/** JRuby (jruby): Ruby compiled to JVM bytecode at run time, with
 * invokedynamic call sites; each round runs recursive methods, blocks over
 * arrays and hashes, a recursive-descent parser, string building and a
 * small class hierarchy with method_missing. */
public final class AppJRuby {
    static final String SCRIPT = String.join("\n",
        "def fib(n) n < 2 ? n : fib(n - 1) + fib(n - 2) end",
        "def ack(m, n)",
        "  return n + 1 if m == 0",
        "  return ack(m - 1, 1) if n == 0",
        "  ack(m - 1, ack(m, n - 1))",
        "end",
        "def depth(n) n == 0 ? 0 : 1 + depth(n - 1) end",
        "class Parser",
        "  def initialize(t) @t, @i = t, 0 end",
        "  def expr",
        "    v = term",
        "    while @i < @t.size && '+-'.include?(@t[@i])",
        "      op = @t[@i]; @i += 1; w = term; v = op == '+' ? v + w : v - w",
        "    end",
        "    v",
        "  end",
        "  def term",
        "    v = atom",
        "    while @i < @t.size && @t[@i] == '*' do @i += 1; v *= atom end",
        "    v",
        "  end",
        "  def atom",
        "    if @t[@i] == '('",
        "      @i += 1; v = expr; @i += 1; return v",
        "    end",
        "    j = @i",
        "    @i += 1 while @i < @t.size && @t[@i] =~ /\\d/",
        "    @t[j...@i].to_i",
        "  end",
        "end",
        "def nested(n) n == 0 ? n.to_s : \"(#{n}+#{nested(n - 1)}*2)\" end",
        "class Shape; def area; 0; end; end",
        "class Sq < Shape; def initialize(s) @s = s end; def area; @s * @s end end",
        "class Circ < Shape; def initialize(r) @r = r end; def area; 3 * @r * @r end end",
        "class Ghost; def method_missing(n, *a) n.to_s.size + a.size end; def respond_to_missing?(*) true end end",
        "def words",
        "  counts = Hash.new(0)",
        "  3000.times { |i| counts[\"w#{i * 7919 % 613}\"] += 1 }",
        "  counts.sort_by { |k, v| [-v, k] }.first(10)",
        "end",
        "def shapes",
        "  g = Ghost.new",
        "  (1..500).map { |i| i.even? ? Sq.new(i) : Circ.new(i) }.sum(&:area) + g.spooky(1, 2)",
        "end",
        "def round",
        "  n = fib(20) + ack(2, 60) + depth(400)",
        "  n += Parser.new(nested(100)).expr % 1000",
        "  n + words.size + shapes % 7",
        "end");

    public static void main(String[] args) throws Exception {
        ScriptingContainer ruby = new ScriptingContainer(LocalContextScope.SINGLETHREAD);
        ruby.runScriptlet(SCRIPT);
        Object self = ruby.runScriptlet("self");
        AppLoop.run(args, "script rounds", () -> {
            ((Number) ruby.callMethod(self, "round", Object.class)).longValue();
            return 1;
        });
    }
}
