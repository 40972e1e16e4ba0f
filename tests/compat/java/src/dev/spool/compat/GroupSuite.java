package dev.spool.compat;

import static dev.spool.compat.CheckRunner.eventually;
import static dev.spool.compat.CheckRunner.expect;
import static dev.spool.compat.CheckRunner.expectEquals;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Classic consumer groups with the Java client and kafka-consumer-groups: two members of one group
 * split a topic's partitions, consume everything once, commit; a restarted member resumes from the
 * committed offsets; Admin and the CLI list and describe the group and its lag.
 *
 * <p>Single-threaded: the two members are polled alternately from this thread. Owns one Admin.
 */
final class GroupSuite {
    private static final int PARTITIONS = 4;
    private static final int MESSAGES = 400;
    private static final long TIMEOUT_S = 60;
    private static final String GROUPS_TOOL = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand";

    private final String bootstrap;
    private final String topic;
    private final String group;
    private final CheckRunner runner;

    GroupSuite(String bootstrap, String runId, CheckRunner runner) {
        this.bootstrap = bootstrap;
        this.topic = "compat-groups-" + runId;
        this.group = "compat-group-" + runId;
        this.runner = runner;
    }

    void run() {
        Properties adminProps = new Properties();
        adminProps.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(adminProps)) {
            runner.check("groups_produce", () -> {
                admin.createTopics(List.of(new NewTopic(topic, PARTITIONS, (short) 1))).all()
                        .get(TIMEOUT_S, TimeUnit.SECONDS);
                ClientSuite.awaitTopicReady(admin, topic, PARTITIONS);
                produce(0, MESSAGES);
            });
            runner.check("groups_two_members_split_and_commit", List.of("groups_produce"),
                    this::consumeWithTwoMembers);
            runner.check("groups_admin_describe", List.of("groups_two_members_split_and_commit"),
                    () -> describe(admin));
            runner.check("groups_cli_list_and_describe",
                    List.of("groups_two_members_split_and_commit"), this::cli);
            runner.check("groups_resume_from_committed",
                    List.of("groups_two_members_split_and_commit"), this::resume);
            runner.check("groups_admin_delete", List.of("groups_resume_from_committed"), () -> {
                admin.deleteConsumerGroups(List.of(group)).all().get(TIMEOUT_S, TimeUnit.SECONDS);
                eventually(() -> {
                    Collection<GroupListing> groups = admin.listGroups().all()
                            .get(TIMEOUT_S, TimeUnit.SECONDS);
                    expect(groups.stream().noneMatch(g -> g.groupId().equals(group)),
                            "group %s still listed after deleteConsumerGroups", group);
                });
                admin.deleteTopics(List.of(topic)).all().get(TIMEOUT_S, TimeUnit.SECONDS);
            });
        }
    }

    private void produce(int from, int to) throws Exception {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        try (KafkaProducer<String, String> producer =
                     new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
            for (int i = from; i < to; i++) {
                producer.send(new ProducerRecord<>(topic, "key-" + (i % 13), "value-" + i));
            }
            producer.flush();
        }
    }

    private KafkaConsumer<String, String> member(String instance) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, "compat-" + instance);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, 10_000);
        p.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, 1_000);
        return new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer());
    }

    /** Two members poll alternately until every record is seen exactly once; each commits. */
    private void consumeWithTwoMembers() throws Exception {
        Map<String, Integer> seen = new HashMap<>();
        try (KafkaConsumer<String, String> a = member("a"); KafkaConsumer<String, String> b = member("b")) {
            a.subscribe(List.of(topic));
            b.subscribe(List.of(topic));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIMEOUT_S);
            // Poll until both hold a share of the partitions and everything was read once.
            while ((seen.size() < MESSAGES || a.assignment().isEmpty() || b.assignment().isEmpty())
                    && System.nanoTime() < deadline) {
                for (KafkaConsumer<String, String> c : List.of(a, b)) {
                    for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                        seen.merge(r.value(), 1, Integer::sum);
                    }
                    c.commitSync();
                }
            }
            Set<TopicPartition> union = new HashSet<>(a.assignment());
            union.addAll(b.assignment());
            expect(!a.assignment().isEmpty() && !b.assignment().isEmpty(),
                    "partitions not split between members: a=%s b=%s", a.assignment(), b.assignment());
            expectEquals(PARTITIONS, union.size(), "partitions assigned in total");
            expect(a.assignment().stream().noneMatch(b.assignment()::contains),
                    "a partition is assigned to both members");
        }
        expectEquals(MESSAGES, seen.size(), "distinct records consumed by the group");
        // A rebalance may legitimately redeliver uncommitted records; none may be lost.
    }

    private Map<TopicPartition, Long> endOffsets() {
        try (KafkaConsumer<String, String> c = member("probe")) {
            List<TopicPartition> tps = new ArrayList<>();
            for (int p = 0; p < PARTITIONS; p++) {
                tps.add(new TopicPartition(topic, p));
            }
            return c.endOffsets(tps);
        }
    }

    private void describe(Admin admin) throws Exception {
        Collection<GroupListing> groups = admin.listGroups().all().get(TIMEOUT_S, TimeUnit.SECONDS);
        expect(groups.stream().anyMatch(g -> g.groupId().equals(group)), "listGroups lacks %s: %s",
                group, groups);
        ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(group)).all()
                .get(TIMEOUT_S, TimeUnit.SECONDS).get(group);
        expectEquals(GroupState.EMPTY, d.groupState(), "state of the group with no members");
        Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(group)
                .partitionsToOffsetAndMetadata().get(TIMEOUT_S, TimeUnit.SECONDS);
        Map<TopicPartition, Long> ends = endOffsets();
        for (var e : ends.entrySet()) {
            OffsetAndMetadata c = committed.get(e.getKey());
            expect(c != null, "no committed offset for %s", e.getKey());
            expectEquals(e.getValue(), c.offset(), "committed offset of " + e.getKey());
        }
    }

    private void cli() throws Exception {
        ToolRunner tools = new ToolRunner();
        ToolRunner.Result list = tools.run(GROUPS_TOOL, "", "--bootstrap-server", bootstrap, "--list");
        expectEquals(0, list.status(), "kafka-consumer-groups --list status (" + list.err() + ")");
        expect(list.out().lines().anyMatch(group::equals), "--list lacks %s: %s", group, list.out());
        ToolRunner.Result describe = tools.run(GROUPS_TOOL, "", "--bootstrap-server", bootstrap,
                "--describe", "--group", group);
        expectEquals(0, describe.status(), "--describe status (" + describe.err() + ")");
        long rows = describe.out().lines().filter(l -> l.contains(topic)).count();
        expectEquals((long) PARTITIONS, rows, "partition rows in --describe: " + describe.out());
        for (String line : describe.out().lines().filter(l -> l.contains(topic)).toList()) {
            String[] cols = line.trim().split("\\s+");
            // GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG ...
            expectEquals("0", cols[5], "lag in: " + line);
        }
    }

    /** New records after the commit: a fresh member of the group reads exactly those. */
    private void resume() throws Exception {
        produce(MESSAGES, MESSAGES + 40);
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<String, String> c = member("c")) {
            c.subscribe(List.of(topic));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIMEOUT_S);
            while (values.size() < 40 && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(300))) {
                    values.add(r.value());
                }
            }
            c.commitSync();
        }
        Set<String> expected = new HashSet<>();
        for (int i = MESSAGES; i < MESSAGES + 40; i++) {
            expected.add("value-" + i);
        }
        expectEquals(expected, new HashSet<>(values), "records read after resuming");
        expectEquals(40, values.size(), "records read after resuming (duplicates?)");
    }
}
