// SPDX-License-Identifier: GPL-2.0-only
import clojure.java.api.Clojure;
import clojure.lang.IFn;

/** Clojure (clojure): a Lisp compiled to JVM bytecode, dynamically typed,
 * on persistent data structures; each round runs recursive functions,
 * lazy sequences, reductions over persistent maps and vectors, and a small
 * recursive evaluator of nested lists. */
public final class AppClojure {
    static final String CODE = String.join("\n",
        "(ns bench)",
        "(defn fib [n] (if (< n 2) n (+ (fib (- n 1)) (fib (- n 2)))))",
        "(defn deep [n] (if (zero? n) 0 (inc (deep (dec n)))))",
        "(defn ev [e] (cond (number? e) e",
        "  (= (first e) '+) (reduce + (map ev (rest e)))",
        "  (= (first e) '*) (reduce * (map ev (rest e)))",
        "  :else 0))",
        "(defn nest [n] (if (zero? n) 1 (list '+ n (list '* 2 (nest (dec n))))))",
        "(defn words [] (->> (range 3000) (map #(str \"w\" (mod (* % 7919) 613)))",
        "  (frequencies) (sort-by (fn [[k v]] [(- v) k])) (take 10)))",
        "(defn shapes [] (->> (range 1 500) (map (fn [i] (if (even? i) {:k :sq :s i} {:k :c :r i})))",
        "  (map (fn [m] (case (:k m) :sq (* (:s m) (:s m)) :c (* 3 (:r m) (:r m))))) (reduce +)))",
        "(defn round [] (+ (fib 20) (deep 300) (mod (ev (nest 60)) 1000) (count (words)) (mod (shapes) 7)))");

    public static void main(String[] args) throws Exception {
        Clojure.var("clojure.core", "load-string").invoke(CODE);
        IFn round = Clojure.var("bench", "round");
        AppLoop.run(args, "script rounds", () -> {
            ((Number) round.invoke()).longValue();
            return 1;
        });
    }
}
