package dev.spool.compat;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.utils.Exit;

/**
 * Runs one of Kafka's command-line tools in this JVM by calling its main class, exactly the class
 * bin/kafka-*.sh would start, with stdin fed from a string and stdout/stderr captured.
 *
 * <p>Why in-process: a JVM start per tool invocation would make the CLI suite take minutes. The
 * tools end through org.apache.kafka.common.utils.Exit, which lets a caller replace exit and
 * shutdown hooks; here exit becomes an exception carrying the status and shutdown hooks (e.g. the
 * console producer's close-and-flush) run when the tool returns, as they would at JVM exit.
 * Not thread-safe: it swaps System.in/out/err for the duration of a call.
 */
final class ToolRunner {
    /** What one tool invocation produced. */
    record Result(int status, String out, String err) {}

    private static final class ToolExit extends RuntimeException {
        ToolExit(int status) {
            super("tool exited with status " + status, null, false, false);
        }
    }

    private final List<Runnable> shutdownHooks = new ArrayList<>();
    /** The status of the first Exit.exit of the current run: some tools call Exit.exit inside a
     * catch-all, which would otherwise turn "exit 0" into "error, exit 1". */
    private Integer firstExit;

    ToolRunner() {
        Exit.setExitProcedure((status, message) -> exit(status));
        Exit.setHaltProcedure((status, message) -> exit(status));
        Exit.setShutdownHookAdder((name, hook) -> shutdownHooks.add(hook));
    }

    private void exit(int status) {
        if (firstExit == null) {
            firstExit = status;
        }
        throw new ToolExit(status);
    }

    Result run(String mainClass, String stdin, String... args) throws Exception {
        Method main = Class.forName(mainClass).getMethod("main", String[].class);
        InputStream savedIn = System.in;
        PrintStream savedOut = System.out;
        PrintStream savedErr = System.err;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status = 0;
        firstExit = null;
        try {
            System.setIn(new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8)));
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            try {
                main.invoke(null, (Object) args);
            } catch (InvocationTargetException e) {
                if (!(e.getCause() instanceof ToolExit)) {
                    e.getCause().printStackTrace(System.err);
                    status = -1;
                }
            }
            for (Runnable hook : shutdownHooks) {
                hook.run();
            }
            if (firstExit != null) {
                status = firstExit;
            }
        } finally {
            shutdownHooks.clear();
            System.setIn(savedIn);
            System.setOut(savedOut);
            System.setErr(savedErr);
        }
        return new Result(status, out.toString(StandardCharsets.UTF_8),
                err.toString(StandardCharsets.UTF_8));
    }
}
