package dev.spool.compat;

import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;

/**
 * Runs named checks in order and reports each as a PASS/FAIL line, then one summary line.
 *
 * <p>A check that depends on an earlier one (e.g. "consume" after "produce") is skipped, not failed,
 * when its dependency failed, so the report names the first real failure. After a failure the
 * runner checks that the broker still accepts connections; if it does not (it crashed), the
 * remaining checks are skipped instead of each waiting for its timeout. Single-threaded; owned by
 * {@link Main}.
 */
final class CheckRunner {
    /** A check body; any exception fails the check. */
    interface Body {
        void run() throws Exception;
    }

    /** Thrown by {@link #expect} and friends: a failed expectation with a readable message. */
    static final class CheckFailed extends RuntimeException {
        CheckFailed(String message) {
            super(message);
        }
    }

    private final List<String> failed = new ArrayList<>();
    private final List<String> skipped = new ArrayList<>();
    private int passed;
    private final String bootstrap;
    private boolean brokerDown;

    CheckRunner(String bootstrap) {
        this.bootstrap = bootstrap;
    }

    /** Runs {@code body} unless one of {@code dependsOn} failed or was skipped. */
    boolean check(String name, List<String> dependsOn, Body body) {
        if (brokerDown) {
            skipped.add(name);
            System.out.printf("SKIP %s (broker unreachable)%n", name);
            return false;
        }
        for (String dependency : dependsOn) {
            if (failed.contains(dependency) || skipped.contains(dependency)) {
                skipped.add(name);
                System.out.printf("SKIP %s (needs %s)%n", name, dependency);
                return false;
            }
        }
        long start = System.nanoTime();
        try {
            body.run();
            passed++;
            System.out.printf("PASS %s (%d ms)%n", name, (System.nanoTime() - start) / 1_000_000);
            return true;
        } catch (Throwable t) {
            failed.add(name);
            String message = t instanceof CheckFailed ? t.getMessage() : t.toString();
            System.out.printf("FAIL %s (%d ms): %s%n", name, (System.nanoTime() - start) / 1_000_000,
                    message);
            if (!(t instanceof CheckFailed)) {
                t.printStackTrace(System.out);
            }
            if (!brokerReachable()) {
                brokerDown = true;
                System.out.printf("broker at %s no longer accepts connections: skipping the rest%n",
                        bootstrap);
            }
            return false;
        } finally {
            System.out.flush();
        }
    }

    private boolean brokerReachable() {
        int colon = bootstrap.lastIndexOf(':');
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(bootstrap.substring(0, colon),
                    Integer.parseInt(bootstrap.substring(colon + 1))), 2000);
            return true;
        } catch (Exception e) {
            return false;
        }
    }

    boolean check(String name, Body body) {
        return check(name, List.of(), body);
    }

    boolean allPassed() {
        return failed.isEmpty() && skipped.isEmpty();
    }

    void printSummary(String suite) {
        System.out.printf("%s: %d passed, %d failed, %d skipped%n", suite, passed, failed.size(),
                skipped.size());
        if (!failed.isEmpty()) {
            System.out.println("failed: " + String.join(", ", failed));
        }
    }

    static void expect(boolean condition, String message, Object... args) {
        if (!condition) {
            throw new CheckFailed(String.format(message, args));
        }
    }

    static void expectEquals(Object expected, Object actual, String what) {
        if (expected == null ? actual != null : !expected.equals(actual)) {
            throw new CheckFailed(what + ": expected <" + expected + "> but got <" + actual + ">");
        }
    }

    /**
     * Retries a read-back for a few seconds: Kafka applies config and partition changes to the
     * broker's view asynchronously (KRaft metadata log), so a read right after a write may be stale.
     */
    static void eventually(Body body) throws Exception {
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (true) {
            try {
                body.run();
                return;
            } catch (CheckFailed e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(50);
            }
        }
    }
}
