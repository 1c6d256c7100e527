// SPDX-License-Identifier: GPL-2.0-only
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * Collection- and string-heavy code: hash maps, tree maps, string
 * building and formatting, streams with lambdas, regular expressions.
 * Deep JDK call chains, megamorphic calls through vtable/itable stubs,
 * allocation slow paths and GC: many top frames in stubs, the runtime and
 * JDK library code.
 */
public class WorkloadCollections {
    static volatile long sink;

    static String word(long seed) {
        char[] c = new char[3 + (int) (seed & 7)];
        for (int i = 0; i < c.length; i++) {
            seed = seed * 6364136223846793005L + 1442695040888963407L;
            c[i] = (char) ('a' + (seed >>> 59) % 12);
        }
        return new String(c);
    }

    static void phaseHashMaps(int words) {
        Map<String, Integer> counts = new HashMap<>();
        for (int i = 0; i < words; i++) counts.merge(word(i * 7919L), 1, Integer::sum);
        sink += counts.size();
    }

    static void phaseTreeMaps(int ops) {
        TreeMap<Integer, String> t = new TreeMap<>();
        long seed = 99;
        for (int i = 0; i < ops; i++) {
            seed = seed * 6364136223846793005L + 1442695040888963407L;
            int k = (int) (seed >>> 44);
            switch (i % 3) {
                case 0: t.put(k, "v"); break;
                case 1: sink += t.ceilingKey(k) == null ? 0 : 1; break;
                default: t.remove(t.isEmpty() ? 0 : t.firstKey());
            }
        }
        sink += t.size();
    }

    static void phaseStrings(int n) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < n; i++) {
            String s = String.format("%05d:%s", i, word(i));
            sb.append(s.toUpperCase()).append(',');
            if (sb.length() > 4096) {
                String[] parts = sb.toString().split(",");
                sink += String.join("|", parts).hashCode();
                sb.setLength(0);
            }
        }
    }

    static void phaseStreams(int n) {
        List<Integer> xs = new ArrayList<>();
        for (int i = 0; i < n; i++) xs.add((i * 37) % 1001);
        List<String> out = xs.stream().map(x -> x * 3).filter(x -> (x & 1) == 0).sorted()
                .map(String::valueOf).collect(Collectors.toList());
        sink += out.size() + xs.stream().mapToInt(Integer::intValue).sum();
    }

    static final Pattern LINE = Pattern.compile("(\\w+)=(\\d+);\\s*(?:tag:([a-z]+))?");

    static void phaseRegex(int lines) {
        for (int i = 0; i < lines; i++) {
            Matcher m = LINE.matcher("key" + i + "=" + (i * 13) + "; tag:" + word(i));
            if (m.find()) sink += m.group(2).length() + (m.group(3) == null ? 0 : m.group(3).length());
        }
    }

    public static void main(String[] args) throws Exception {
        WorkloadSupport w = WorkloadSupport.start(args, 1, "phaseHashMaps", "phaseTreeMaps", "phaseStrings",
                "phaseStreams", "phaseRegex");
        w.runThreads("collections", 0, id -> {
            while (w.running()) {
                WorkloadSupport.measure("phaseHashMaps", () -> phaseHashMaps(30000));
                WorkloadSupport.measure("phaseTreeMaps", () -> phaseTreeMaps(200000));
                WorkloadSupport.measure("phaseStrings", () -> phaseStrings(2200));
                WorkloadSupport.measure("phaseStreams", () -> phaseStreams(40000));
                WorkloadSupport.measure("phaseRegex", () -> phaseRegex(7000));
            }
        });
        w.finish();
    }
}
