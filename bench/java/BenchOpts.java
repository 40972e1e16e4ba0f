import java.util.HashMap;
import java.util.Map;

/**
 * The command line of the Java bench drivers (bench/java_bench.sh compiles it with each):
 * "--key value" pairs, read with a default. Every driver takes --bootstrap, --topic, --group,
 * --members, --partitions and --timeout-s.
 */
final class BenchOpts {
    private final Map<String, String> opts = new HashMap<>();
    final String bootstrap, topic, group;
    final int members, partitions;
    final long timeoutNs;

    BenchOpts(String[] args, String name, int members, int partitions, int timeoutS) {
        for (int i = 0; i + 1 < args.length; i += 2) {
            opts.put(args[i].replaceFirst("^--", ""), args[i + 1]);
        }
        bootstrap = get("bootstrap", "localhost:9092");
        topic = get("topic", name);
        group = get("group", name + "-bench");
        this.members = Integer.parseInt(get("members", String.valueOf(members)));
        this.partitions = Integer.parseInt(get("partitions", String.valueOf(partitions)));
        timeoutNs = Long.parseLong(get("timeout-s", String.valueOf(timeoutS))) * 1_000_000_000L;
    }

    String get(String key, String dflt) {
        return opts.getOrDefault(key, dflt);
    }

    boolean has(String key) {
        return opts.containsKey(key);
    }
}
