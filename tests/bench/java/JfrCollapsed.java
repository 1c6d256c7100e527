// SPDX-License-Identifier: GPL-2.0-only
// Prints a JFR recording's execution and native-method samples as collapsed
// stacks ("root;...;leaf count"), identical stacks merged. Reads the file with
// the JDK's own jdk.jfr.consumer API: `jfr print --json` of 2000-frame stacks
// at 1 kHz would be gigabytes.
//
//   java JfrCollapsed <recording.jfr>
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordingFile;

public class JfrCollapsed {
    public static void main(String[] args) throws Exception {
        Map<String, Long> counts = new HashMap<>();
        try (RecordingFile f = new RecordingFile(Path.of(args[0]))) {
            while (f.hasMoreEvents()) {
                RecordedEvent e = f.readEvent();
                String type = e.getEventType().getName();
                if (!type.equals("jdk.ExecutionSample") && !type.equals("jdk.NativeMethodSample")) continue;
                if (e.getStackTrace() == null) continue;
                List<RecordedFrame> frames = e.getStackTrace().getFrames();
                if (frames.isEmpty()) continue;
                StringBuilder sb = new StringBuilder();
                for (int i = frames.size() - 1; i >= 0; i--) { // JFR lists the leaf first
                    RecordedFrame fr = frames.get(i);
                    if (sb.length() > 0) sb.append(';');
                    sb.append(fr.getMethod().getType().getName()).append('.').append(fr.getMethod().getName());
                }
                counts.merge(sb.toString(), 1L, Long::sum);
            }
        }
        StringBuilder out = new StringBuilder();
        for (Map.Entry<String, Long> c : counts.entrySet())
            out.append(c.getKey()).append(' ').append(c.getValue()).append('\n');
        System.out.print(out);
    }
}
