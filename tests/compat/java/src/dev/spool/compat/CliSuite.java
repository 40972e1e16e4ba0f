package dev.spool.compat;

import static dev.spool.compat.CheckRunner.expect;
import static dev.spool.compat.CheckRunner.eventually;
import static dev.spool.compat.CheckRunner.expectEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Kafka's own command-line tools against the broker: kafka-topics, kafka-configs,
 * kafka-console-producer (every codec, idempotent) and kafka-console-consumer (assigned partition,
 * no group), each invoked through its main class by {@link ToolRunner}.
 *
 * <p>Checks parse the tools' human-readable output, so they also pin that our responses render the
 * way operators expect (partition counts, config sources). Single-threaded.
 */
final class CliSuite {
    private static final String TOPICS = "org.apache.kafka.tools.TopicCommand";
    private static final String CONFIGS = "kafka.admin.ConfigCommand";
    private static final String PRODUCER = "org.apache.kafka.tools.ConsoleProducer";
    private static final String CONSUMER = "org.apache.kafka.tools.consumer.ConsoleConsumer";
    private static final List<String> CODECS = List.of("none", "gzip", "snappy", "lz4", "zstd");
    private static final int PER_CODEC = 20;

    private final String bootstrap;
    private final String adminTopic;
    private final String dataTopic;
    private final CheckRunner runner;
    private final ToolRunner tools = new ToolRunner();
    /** "key\tvalue" lines in the order they were produced to the data topic's only partition. */
    private final List<String> produced = new ArrayList<>();

    CliSuite(String bootstrap, String runId, CheckRunner runner) {
        this.bootstrap = bootstrap;
        this.adminTopic = "compat-cli-" + runId + "-admin";
        this.dataTopic = "compat-cli-" + runId + "-data";
        this.runner = runner;
    }

    void run() {
        runner.check("cli_topics_create", () -> {
            String out = ok(TOPICS, "", "--create", "--topic", adminTopic, "--partitions", "2",
                    "--replication-factor", "1", "--config", "retention.ms=3600000");
            expect(out.contains("Created topic " + adminTopic), "unexpected output: %s", out);
        });
        runner.check("cli_topics_list", List.of("cli_topics_create"), () -> {
            List<String> names = ok(TOPICS, "", "--list").lines().toList();
            expect(names.contains(adminTopic), "--list lacks %s: %s", adminTopic, names);
        });
        runner.check("cli_topics_describe", List.of("cli_topics_create"), () -> {
            String out = ok(TOPICS, "", "--describe", "--topic", adminTopic);
            expect(out.contains("PartitionCount: 2"), "no 'PartitionCount: 2' in: %s", out);
            expect(out.contains("ReplicationFactor: 1"), "no 'ReplicationFactor: 1' in: %s", out);
            expect(out.contains("retention.ms=3600000"), "no retention.ms override in: %s", out);
            expect(out.contains("Partition: 0") && out.contains("Partition: 1"),
                    "partition lines missing in: %s", out);
            expect(!out.contains("Leader: none") && !out.contains("Leader: -1"),
                    "a partition has no leader: %s", out);
        });
        runner.check("cli_topics_alter_partitions", List.of("cli_topics_describe"), () -> {
            ok(TOPICS, "", "--alter", "--topic", adminTopic, "--partitions", "3");
            eventually(() -> {
                String out = ok(TOPICS, "", "--describe", "--topic", adminTopic);
                expect(out.contains("PartitionCount: 3"), "no 'PartitionCount: 3' after alter: %s",
                        out);
            });
        });
        runner.check("cli_configs_alter", List.of("cli_topics_create"), () -> {
            ok(CONFIGS, "", "--entity-type", "topics", "--entity-name", adminTopic, "--alter",
                    "--add-config", "retention.ms=7200000,max.message.bytes=2000000");
            eventually(() -> {
                String out = ok(CONFIGS, "", "--entity-type", "topics", "--entity-name", adminTopic,
                        "--describe");
                expect(out.contains("retention.ms=7200000"), "retention.ms not altered: %s", out);
                expect(out.contains("max.message.bytes=2000000"), "max.message.bytes not set: %s",
                        out);
            });
        });
        runner.check("cli_configs_delete", List.of("cli_configs_alter"), () -> {
            ok(CONFIGS, "", "--entity-type", "topics", "--entity-name", adminTopic, "--alter",
                    "--delete-config", "max.message.bytes");
            eventually(() -> {
                String out = ok(CONFIGS, "", "--entity-type", "topics", "--entity-name", adminTopic,
                        "--describe");
                expect(!out.contains("max.message.bytes="), "max.message.bytes still set: %s", out);
                expect(out.contains("retention.ms=7200000"), "retention.ms lost: %s", out);
            });
        });
        runner.check("cli_configs_describe_broker", List.of("cli_topics_describe"), () -> {
            String describe = ok(TOPICS, "", "--describe", "--topic", adminTopic);
            Matcher leader = Pattern.compile("Leader: (\\d+)").matcher(describe);
            expect(leader.find(), "no leader id in: %s", describe);
            String out = ok(CONFIGS, "", "--entity-type", "brokers", "--entity-name",
                    leader.group(1), "--describe", "--all");
            expect(out.contains("num.partitions="), "broker configs lack num.partitions: %s", out);
            expect(out.contains("log.retention.hours=") || out.contains("log.retention.ms="),
                    "broker configs lack log retention: %s", out);
        });

        runner.check("cli_topics_create_data", () -> {
            ok(TOPICS, "", "--create", "--topic", dataTopic, "--partitions", "1",
                    "--replication-factor", "1");
            // Produce only once the partition has a leader (see ClientSuite.awaitTopicReady).
            eventually(() -> {
                String out = ok(TOPICS, "", "--describe", "--topic", dataTopic);
                expect(Pattern.compile("Leader: \\d+").matcher(out).find(), "no leader yet: %s",
                        out);
            });
        });
        List<String> produceChecks = new ArrayList<>();
        for (String codec : CODECS) {
            String name = "cli_console_producer_" + codec;
            produceChecks.add(name);
            runner.check(name, List.of("cli_topics_create_data"), () -> produce(codec));
        }
        runner.check("cli_console_consumer", produceChecks, () -> {
            List<String[]> lines = consume("earliest", produced.size());
            for (int i = 0; i < produced.size(); i++) {
                String[] line = lines.get(i);
                expectEquals("Partition:0", line[0], "line " + i + " partition");
                expectEquals("Offset:" + i, line[1], "line " + i + " offset");
                expectEquals(produced.get(i), line[2] + "\t" + line[3], "line " + i + " key/value");
            }
        });
        runner.check("cli_console_consumer_from_offset", produceChecks, () -> {
            int from = PER_CODEC * 2 + 3;
            List<String[]> lines = consume(Integer.toString(from), 5);
            for (int i = 0; i < 5; i++) {
                expectEquals("Offset:" + (from + i), lines.get(i)[1], "offset of line " + i);
                expectEquals(produced.get(from + i), lines.get(i)[2] + "\t" + lines.get(i)[3],
                        "key/value of line " + i);
            }
        });

        runner.check("cli_topics_delete", List.of("cli_topics_create"), () -> {
            ok(TOPICS, "", "--delete", "--topic", adminTopic);
            tools.run(TOPICS, "", "--bootstrap-server", bootstrap, "--delete", "--topic", dataTopic);
            long deadline = System.nanoTime() + 10_000_000_000L;
            List<String> names;
            do {
                names = ok(TOPICS, "", "--list").lines().toList();
            } while ((names.contains(adminTopic) || names.contains(dataTopic))
                    && System.nanoTime() < deadline);
            expect(!names.contains(adminTopic) && !names.contains(dataTopic),
                    "topics still listed after --delete: %s", names);
        });
    }

    private void produce(String codec) throws Exception {
        StringBuilder stdin = new StringBuilder();
        List<String> lines = new ArrayList<>();
        for (int i = 0; i < PER_CODEC; i++) {
            String line = "key-" + (i % 3) + "\t" + codec + "-" + i + "-" + "c".repeat(i * 10);
            lines.add(line);
            stdin.append(line).append('\n');
        }
        ok(PRODUCER, stdin.toString(), "--topic", dataTopic, "--compression-codec", codec,
                "--property", "parse.key=true", "--producer-property", "enable.idempotence=true",
                "--producer-property", "acks=all", "--request-timeout-ms", "10000");
        produced.addAll(lines);
    }

    /** Runs the console consumer on partition 0 and splits each output line on tabs. */
    private List<String[]> consume(String offset, int count) throws Exception {
        String out = ok(CONSUMER, "", "--topic", dataTopic, "--partition", "0", "--offset", offset,
                "--max-messages", Integer.toString(count), "--timeout-ms", "20000",
                "--property", "print.partition=true", "--property", "print.offset=true",
                "--property", "print.key=true");
        List<String[]> lines = new ArrayList<>();
        for (String line : out.lines().toList()) {
            lines.add(line.split("\t", 4));
        }
        expectEquals(count, lines.size(), "console consumer lines (output: " + out + ")");
        return lines;
    }

    /** Runs a tool with --bootstrap-server and returns its stdout; a non-zero status fails. */
    private String ok(String tool, String stdin, String... args) throws Exception {
        String[] full = new String[args.length + 2];
        full[0] = "--bootstrap-server";
        full[1] = bootstrap;
        System.arraycopy(args, 0, full, 2, args.length);
        ToolRunner.Result r = tools.run(tool, stdin, full);
        expect(r.status() == 0, "%s %s exited %d: %s%s", tool, String.join(" ", args), r.status(),
                r.out(), r.err());
        return r.out();
    }
}
