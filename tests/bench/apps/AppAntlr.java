// SPDX-License-Identifier: GPL-2.0-only
import java.io.File;
import java.nio.file.Files;
import java.util.Random;
import org.antlr.v4.Tool;
import org.antlr.v4.runtime.CharStreams;
import org.antlr.v4.runtime.CommonTokenStream;
import org.antlr.v4.runtime.LexerInterpreter;
import org.antlr.v4.runtime.ParserInterpreter;
import org.antlr.v4.runtime.tree.ParseTree;
import org.antlr.v4.tool.Grammar;

/** ANTLR 4 (antlr4): the parser generator and the parsers it makes; each
 * round generates the Java lexer and parser of a small programming language
 * from its grammar (grammar parsing, ATN construction and analysis,
 * StringTemplate code generation), then parses a generated program of that
 * language with the grammar's ATN (the adaptive LL(*) prediction generated
 * parsers run). Units: statements parsed. */
public final class AppAntlr {
    static final String GRAMMAR = String.join("\n",
        "grammar Mini;",
        "prog: decl* EOF;",
        "FUN: 'fun'; LET: 'let'; IF: 'if'; ELSE: 'else'; WHILE: 'while'; RETURN: 'return';",
        "LP: '('; RP: ')'; LB: '{'; RB: '}'; COMMA: ','; SEMI: ';'; ASSIGN: '=';",
        "EQ: '=='; LT: '<'; GT: '>'; PLUS: '+'; MINUS: '-'; STAR: '*'; SLASH: '/'; DOT: '.';",
        "ID: [a-zA-Z_] [a-zA-Z_0-9]*; INT: [0-9]+; STR: '\"' (~[\"\\\\] | '\\\\' .)* '\"';",
        "WS: [ \\t\\r\\n]+ -> skip; COMMENT: '//' ~[\\n]* -> skip;",
        "decl: FUN ID LP params? RP block | stmt;",
        "params: ID (COMMA ID)*;",
        "block: LB stmt* RB;",
        "stmt: LET ID ASSIGN expr SEMI | ID ASSIGN expr SEMI | IF LP expr RP block (ELSE (block | stmt))?",
        "    | WHILE LP expr RP block | RETURN expr? SEMI | expr SEMI | block;",
        "expr: expr DOT ID (LP args? RP)? | expr LP args? RP | MINUS expr | expr (STAR | SLASH) expr",
        "    | expr (PLUS | MINUS) expr | expr (LT | GT | EQ) expr | LP expr RP | ID | INT | STR;",
        "args: expr (COMMA expr)*;", "");

    static String program(Random rng, int functions) {
        StringBuilder sb = new StringBuilder();
        for (int f = 0; f < functions; f++) {
            sb.append("fun f").append(f).append("(a, b, c) {\n");
            for (int s = 0; s < 12; s++) {
                int kind = rng.nextInt(4);
                if (kind == 0)
                    sb.append("  let v").append(s).append(" = ").append(expr(rng, 4)).append(";\n");
                else if (kind == 1)
                    sb.append("  if (").append(expr(rng, 2)).append(") { a = ").append(expr(rng, 3))
                      .append("; } else b = c.m").append(s).append("(a, ").append(expr(rng, 2)).append(");\n");
                else if (kind == 2)
                    sb.append("  while (a < ").append(rng.nextInt(100)).append(") { a = a + 1; // loop\n  }\n");
                else
                    sb.append("  print(\"s").append(s).append("\", ").append(expr(rng, 3)).append(");\n");
            }
            sb.append("  return ").append(expr(rng, 3)).append(";\n}\n");
        }
        return sb.toString();
    }

    static String expr(Random rng, int depth) {
        if (depth == 0) return rng.nextBoolean() ? "a" : Integer.toString(rng.nextInt(1000));
        String[] ops = {"+", "-", "*", "/", "<", "=="};
        int kind = rng.nextInt(4);
        if (kind == 0)
            return "(" + expr(rng, depth - 1) + " " + ops[rng.nextInt(ops.length)] + " " + expr(rng, depth - 1) + ")";
        if (kind == 1)
            return "b.g(" + expr(rng, depth - 1) + ", " + expr(rng, depth - 1) + ")";
        if (kind == 2)
            return "-" + expr(rng, depth - 1);
        return expr(rng, depth - 1) + " " + ops[rng.nextInt(ops.length)] + " c";
    }

    public static void main(String[] args) throws Exception {
        File dir = Files.createTempDirectory("jsampled-antlr").toFile();
        File grammar = new File(dir, "Mini.g4");
        Files.writeString(grammar.toPath(), GRAMMAR);
        Random rng = new Random(20240611);
        String[] programs = new String[8];
        for (int i = 0; i < programs.length; i++) programs[i] = program(rng, 40);
        int[] round = {0};
        AppLoop.run(args, "statements parsed", () -> {
            File out = new File(dir, "gen" + round[0] % 4);
            Tool tool = new Tool(new String[] {"-o", out.getPath(), "-visitor", grammar.getPath()});
            tool.processGrammarsOnCommandLine();
            if (tool.getNumErrors() != 0 || !new File(out, "MiniParser.java").exists())
                throw new IllegalStateException("antlr4 failed: " + tool.getNumErrors() + " errors");
            Grammar g = tool.loadGrammar(grammar.getPath());
            long statements = 0;
            for (int i = 0; i < 2; i++) {
                String text = programs[(round[0] + i) % programs.length];
                LexerInterpreter lex = g.createLexerInterpreter(CharStreams.fromString(text));
                ParserInterpreter p = g.createParserInterpreter(new CommonTokenStream(lex));
                ParseTree tree = p.parse(g.getRule("prog").index);
                if (p.getNumberOfSyntaxErrors() != 0 || tree.getChildCount() < 40)
                    throw new IllegalStateException("parse failed: " + p.getNumberOfSyntaxErrors() + " errors");
                statements += text.chars().filter(c -> c == ';').count();
            }
            round[0]++;
            return statements;
        });
    }
}
