package dev.spool.compat;

/**
 * Entry point of the Java compatibility checker: one JVM runs every check of one suite against the
 * broker at --bootstrap, prints a PASS/FAIL/SKIP line per check and a summary, and exits 1 if any
 * check did not pass.
 *
 * <pre>
 *   java -cp compat-classes:libs/* dev.spool.compat.Main --bootstrap HOST:PORT --suite clients|cli|groups
 * </pre>
 */
public final class Main {
    public static void main(String[] args) {
        String bootstrap = null;
        String suite = "clients";
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--bootstrap" -> bootstrap = args[i + 1];
                case "--suite" -> suite = args[i + 1];
                default -> usage("unknown argument " + args[i]);
            }
        }
        if (bootstrap == null) {
            usage("--bootstrap is required");
        }
        // Initialise logging now, while System.err is the real one: the console appender keeps
        // the stream it first sees, and ToolRunner swaps System.err during tool runs.
        org.slf4j.LoggerFactory.getLogger(Main.class).debug("java compatibility checker");
        // Unique per run so that re-runs against a long-lived broker never meet old topics.
        String runId = Long.toString(System.currentTimeMillis(), 36);
        CheckRunner runner = new CheckRunner(bootstrap);
        switch (suite) {
            case "clients" -> new ClientSuite(bootstrap, runId, runner).run();
            case "cli" -> new CliSuite(bootstrap, runId, runner).run();
            case "groups" -> new GroupSuite(bootstrap, runId, runner).run();
            default -> usage("unknown suite " + suite);
        }
        runner.printSummary("java-" + suite);
        System.exit(runner.allPassed() ? 0 : 1);
    }

    private static void usage(String problem) {
        System.err.println(problem);
        System.err.println("usage: Main --bootstrap HOST:PORT [--suite clients|cli|groups]");
        System.exit(2);
    }
}
