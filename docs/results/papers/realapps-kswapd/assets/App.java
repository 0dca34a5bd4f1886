// A JVM app of the realapps scenario: loads its records (JSON lines) into objects, as an app
// loads its data at start, says `ready`, then serves returns to it.
//
//   java -cp DIR App DATA.jsonl
//
// Each `visit N` on its input is a return: it reads the hot head (the first 5 % of records)
// and a window of 4 % that varies by visit, writes a field in that window, and answers `ok`.
// `exit` ends it. Records are parsed by hand (no library): the fields an app would keep.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

public class App {
    static final class Record {
        final long id;
        final String user;
        final String title;
        final String body;
        final String blob;
        int n;
        long seen;

        Record(long id, String user, String title, String body, String blob, int n) {
            this.id = id;
            this.user = user;
            this.title = title;
            this.body = body;
            this.blob = blob;
            this.n = n;
        }
    }

    /** The string value of "key":"…" in a JSON line (the generator writes no escapes but \"). */
    static String str(String line, String key) {
        int at = line.indexOf("\"" + key + "\":\"");
        if (at < 0) return "";
        int from = at + key.length() + 4;
        int to = from;
        while (line.charAt(to) != '"' || line.charAt(to - 1) == '\\') to++;
        return line.substring(from, to);
    }

    static long num(String line, String key) {
        int at = line.indexOf("\"" + key + "\":");
        if (at < 0) return 0;
        int from = at + key.length() + 3;
        int to = from;
        while (to < line.length() && Character.isDigit(line.charAt(to))) to++;
        return Long.parseLong(line.substring(from, to));
    }

    public static void main(String[] args) throws Exception {
        List<Record> records = new ArrayList<>();
        Map<String, List<Record>> byUser = new HashMap<>();
        try (BufferedReader in = Files.newBufferedReader(Paths.get(args[0]), StandardCharsets.UTF_8)) {
            for (String line; (line = in.readLine()) != null; ) {
                Record r = new Record(num(line, "id"), str(line, "user"), str(line, "title"), str(line, "body"), str(line, "blob"), (int) num(line, "n"));
                records.add(r);
                byUser.computeIfAbsent(r.user, k -> new ArrayList<>()).add(r);
            }
        }
        int hot = Math.max(1, records.size() / 20);
        int window = Math.max(1, records.size() / 25);
        System.out.println("ready " + records.size());
        System.out.flush();
        BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = stdin.readLine()) != null; ) {
            String[] words = line.trim().split("\\s+");
            if (words[0].equals("exit")) break;
            if (!words[0].equals("visit")) continue;
            long n = words.length > 1 ? Long.parseLong(words[1]) : 0;
            long acc = 0;
            for (int i = 0; i < hot; i++) acc += records.get(i).body.length() + records.get(i).n;
            int start = new Random(n).nextInt(records.size());
            for (int i = 0; i < window; i++) {
                Record r = records.get((start + i) % records.size());
                acc += r.title.length() + byUser.get(r.user).size() + r.blob.length();
                r.seen = n;
            }
            System.out.println("ok " + acc);
            System.out.flush();
        }
    }
}
