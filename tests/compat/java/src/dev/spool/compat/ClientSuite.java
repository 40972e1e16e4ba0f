package dev.spool.compat;

import static dev.spool.compat.CheckRunner.expect;
import static dev.spool.compat.CheckRunner.eventually;
import static dev.spool.compat.CheckRunner.expectEquals;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.CreateTopicsResult;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The Java client (kafka-clients) checks: Admin topic lifecycle and configs, an idempotent producer
 * per compression codec, and an assigned-partition consumer reading everything back.
 *
 * <p>Owns one Admin for its lifetime; producers and consumers live for one check. Single-threaded
 * apart from the producer callbacks, which only write into {@link Workload}.
 */
final class ClientSuite {
    private static final List<String> CODECS = List.of("none", "gzip", "snappy", "lz4", "zstd");
    private static final int PARTITIONS = 3;
    private static final int MESSAGES = 200;
    private static final long TIMEOUT_S = 30;

    private final String bootstrap;
    private final String prefix;
    private final CheckRunner runner;
    private Admin admin;

    ClientSuite(String bootstrap, String runId, CheckRunner runner) {
        this.bootstrap = bootstrap;
        this.prefix = "compat-java-" + runId;
        this.runner = runner;
    }

    void run() {
        Properties adminProps = new Properties();
        adminProps.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        adminProps.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
        adminProps.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 30_000);
        admin = Admin.create(adminProps);
        try {
            runAdminChecks();
            for (String codec : CODECS) {
                runCodecChecks(codec);
            }
            runner.check("consume_read_committed", List.of("produce_none"), () -> {
                Workload w = workloads.get("none");
                w.verifyConsumed(consumeAll(topic("none"), w, "read_committed"));
            });
            runner.check("delete_records", List.of("consume_none"), this::deleteRecords);
            runner.check("admin_delete_topics", List.of("admin_create_topic"), this::deleteTopics);
        } finally {
            admin.close(Duration.ofSeconds(5));
        }
    }

    private final Map<String, Workload> workloads = new HashMap<>();
    private Uuid adminTopicId;

    private String topic(String suffix) {
        return prefix + "-" + suffix;
    }

    private void runAdminChecks() {
        String t = topic("admin");
        runner.check("admin_describe_cluster", () -> {
            DescribeClusterResult cluster = admin.describeCluster();
            Collection<Node> nodes = cluster.nodes().get(TIMEOUT_S, TimeUnit.SECONDS);
            expectEquals(1, nodes.size(), "cluster nodes");
            expect(cluster.clusterId().get(TIMEOUT_S, TimeUnit.SECONDS) != null, "cluster id is null");
            expect(cluster.controller().get(TIMEOUT_S, TimeUnit.SECONDS) != null, "no controller");
        });
        runner.check("admin_create_topic", () -> {
            NewTopic nt = new NewTopic(t, PARTITIONS, (short) 1)
                    .configs(Map.of("retention.ms", "86400000"));
            CreateTopicsResult result = admin.createTopics(List.of(nt));
            result.all().get(TIMEOUT_S, TimeUnit.SECONDS);
            expectEquals(PARTITIONS, result.numPartitions(t).get(), "created partitions");
            expectEquals(1, result.replicationFactor(t).get(), "created replication factor");
            adminTopicId = result.topicId(t).get();
            expect(adminTopicId != null && !adminTopicId.equals(Uuid.ZERO_UUID),
                    "CreateTopics returned no topic id");
            Set<String> names = admin.listTopics().names().get(TIMEOUT_S, TimeUnit.SECONDS);
            expect(names.contains(t), "listTopics does not show %s: %s", t, names);
        });
        runner.check("admin_create_existing_topic_fails", List.of("admin_create_topic"), () -> {
            try {
                admin.createTopics(List.of(new NewTopic(t, 1, (short) 1))).all()
                        .get(TIMEOUT_S, TimeUnit.SECONDS);
                expect(false, "creating %s twice succeeded", t);
            } catch (java.util.concurrent.ExecutionException e) {
                expect(e.getCause() instanceof org.apache.kafka.common.errors.TopicExistsException,
                        "expected TopicExistsException, got %s", e.getCause());
            }
        });
        runner.check("admin_describe_topic", List.of("admin_create_topic"), () -> {
            TopicDescription d = describeTopic(t);
            expectEquals(PARTITIONS, d.partitions().size(), "described partitions");
            expectEquals(adminTopicId, d.topicId(), "topic id in describe");
            for (TopicPartitionInfo p : d.partitions()) {
                expect(p.leader() != null && p.leader().id() >= 0, "partition %d has no leader",
                        p.partition());
                expectEquals(1, p.replicas().size(), "replicas of partition " + p.partition());
                expectEquals(1, p.isr().size(), "ISR of partition " + p.partition());
            }
        });
        runner.check("admin_describe_configs", List.of("admin_create_topic"), () -> {
            Map<String, ConfigEntry> c = topicConfig(t);
            ConfigEntry retention = c.get("retention.ms");
            expect(retention != null, "retention.ms missing from DescribeConfigs");
            expectEquals("86400000", retention.value(), "retention.ms");
            expectEquals(ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG, retention.source(),
                    "retention.ms source");
            ConfigEntry cleanup = c.get("cleanup.policy");
            expect(cleanup != null, "cleanup.policy missing from DescribeConfigs");
            expectEquals("delete", cleanup.value(), "default cleanup.policy");
            expect(cleanup.source() != ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG,
                    "cleanup.policy reported as a topic override");
            expect(c.containsKey("segment.bytes") && c.containsKey("max.message.bytes"),
                    "DescribeConfigs lacks segment.bytes or max.message.bytes: %s", c.keySet());
        });
        runner.check("admin_alter_configs", List.of("admin_describe_configs"), () -> {
            ConfigResource r = new ConfigResource(ConfigResource.Type.TOPIC, t);
            admin.incrementalAlterConfigs(Map.of(r, List.of(
                    new AlterConfigOp(new ConfigEntry("retention.ms", "172800000"),
                            AlterConfigOp.OpType.SET),
                    new AlterConfigOp(new ConfigEntry("cleanup.policy", "compact"),
                            AlterConfigOp.OpType.SET))))
                    .all().get(TIMEOUT_S, TimeUnit.SECONDS);
            eventually(() -> {
                Map<String, ConfigEntry> c = topicConfig(t);
                expectEquals("172800000", c.get("retention.ms").value(), "retention.ms after SET");
                expectEquals("compact", c.get("cleanup.policy").value(), "cleanup.policy after SET");
                expectEquals(ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG,
                        c.get("cleanup.policy").source(), "cleanup.policy source after SET");
            });
            admin.incrementalAlterConfigs(Map.of(r, List.of(
                    new AlterConfigOp(new ConfigEntry("cleanup.policy", ""),
                            AlterConfigOp.OpType.DELETE))))
                    .all().get(TIMEOUT_S, TimeUnit.SECONDS);
            eventually(() -> {
                Map<String, ConfigEntry> c = topicConfig(t);
                expectEquals("delete", c.get("cleanup.policy").value(), "cleanup.policy after DELETE");
                expectEquals("172800000", c.get("retention.ms").value(), "retention.ms kept");
            });
        });
        runner.check("admin_alter_configs_rejects_bad_value", List.of("admin_create_topic"), () -> {
            ConfigResource r = new ConfigResource(ConfigResource.Type.TOPIC, t);
            try {
                admin.incrementalAlterConfigs(Map.of(r, List.of(new AlterConfigOp(
                        new ConfigEntry("retention.ms", "not-a-number"), AlterConfigOp.OpType.SET))))
                        .all().get(TIMEOUT_S, TimeUnit.SECONDS);
                expect(false, "retention.ms=not-a-number was accepted");
            } catch (java.util.concurrent.ExecutionException e) {
                expect(e.getCause() instanceof org.apache.kafka.common.errors.InvalidConfigurationException
                                || e.getCause() instanceof org.apache.kafka.common.errors.InvalidRequestException,
                        "expected InvalidConfigurationException, got %s", e.getCause());
            }
        });
        runner.check("admin_broker_configs", () -> {
            int nodeId = admin.describeCluster().nodes().get(TIMEOUT_S, TimeUnit.SECONDS)
                    .iterator().next().id();
            ConfigResource r = new ConfigResource(ConfigResource.Type.BROKER, Integer.toString(nodeId));
            Config config = admin.describeConfigs(List.of(r)).all().get(TIMEOUT_S, TimeUnit.SECONDS)
                    .get(r);
            ConfigEntry partitions = config.get("num.partitions");
            expect(partitions != null, "broker config lacks num.partitions");
            expect(partitions.value() != null && Integer.parseInt(partitions.value()) >= 1,
                    "num.partitions = %s", partitions.value());
            expect(config.get("auto.create.topics.enable") != null,
                    "broker config lacks auto.create.topics.enable");
        });
        runner.check("admin_create_partitions", List.of("admin_describe_topic"), () -> {
            admin.createPartitions(Map.of(t, NewPartitions.increaseTo(PARTITIONS + 1)))
                    .all().get(TIMEOUT_S, TimeUnit.SECONDS);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            int seen;
            do {
                seen = describeTopic(t).partitions().size();
            } while (seen != PARTITIONS + 1 && System.nanoTime() < deadline);
            expectEquals(PARTITIONS + 1, seen, "partitions after CreatePartitions");
        });
    }

    private void runCodecChecks(String codec) {
        String t = topic(codec);
        Workload w = new Workload("java-" + codec, MESSAGES);
        workloads.put(codec, w);
        runner.check("produce_" + codec, List.of("admin_create_topic"), () -> {
            admin.createTopics(List.of(new NewTopic(t, PARTITIONS, (short) 1))).all()
                    .get(TIMEOUT_S, TimeUnit.SECONDS);
            awaitTopicReady(admin, t, PARTITIONS);
            produce(t, codec, w);
            w.verifyAcks();
        });
        runner.check("consume_" + codec, List.of("produce_" + codec), () -> {
            w.verifyConsumed(consumeAll(t, w, "read_uncommitted"));
        });
        runner.check("offsets_" + codec, List.of("produce_" + codec), () -> {
            List<TopicPartition> tps = partitions(t);
            Map<Integer, Long> want = new HashMap<>();
            for (TopicPartition tp : tps) {
                want.put(tp.partition(), w.endOffsets().getOrDefault(tp.partition(), 0L));
            }
            Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
            Map<TopicPartition, OffsetSpec> earliest = new HashMap<>();
            for (TopicPartition tp : tps) {
                latest.put(tp, OffsetSpec.latest());
                earliest.put(tp, OffsetSpec.earliest());
            }
            var end = admin.listOffsets(latest).all().get(TIMEOUT_S, TimeUnit.SECONDS);
            var begin = admin.listOffsets(earliest).all().get(TIMEOUT_S, TimeUnit.SECONDS);
            for (TopicPartition tp : tps) {
                expectEquals(want.get(tp.partition()), end.get(tp).offset(), "latest offset of " + tp);
                expectEquals(0L, begin.get(tp).offset(), "earliest offset of " + tp);
            }
            try (KafkaConsumer<byte[], byte[]> consumer = consumer("read_uncommitted")) {
                Map<TopicPartition, Long> ends = consumer.endOffsets(tps, Duration.ofSeconds(TIMEOUT_S));
                for (TopicPartition tp : tps) {
                    expectEquals(want.get(tp.partition()), ends.get(tp), "consumer endOffsets of " + tp);
                }
            }
        });
    }

    private void produce(String topic, String codec, Workload w) throws Exception {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, codec);
        p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 5);
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 30_000);
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 15_000);
        List<Future<RecordMetadata>> futures = new ArrayList<>();
        try (KafkaProducer<byte[], byte[]> producer =
                     new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
            for (Workload.Message m : w.messages) {
                ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(topic,
                        Workload.bytes(m.key()), Workload.bytes(m.value()));
                record.headers().add("seq", Workload.bytes(Integer.toString(m.seq())));
                futures.add(producer.send(record, (md, e) -> {
                    if (e == null) {
                        w.recordAck(m.seq(), md.partition(), md.offset());
                    }
                }));
                if (futures.size() == 1) {
                    // The first record alone: Kafka may still be creating the partition, and a
                    // NOT_LEADER first batch with batches pipelined behind it can leave the
                    // idempotent producer retrying OUT_OF_ORDER_SEQUENCE_NUMBER until it times out.
                    futures.get(0).get(TIMEOUT_S, TimeUnit.SECONDS);
                }
            }
            producer.flush();
            for (Future<RecordMetadata> f : futures) {
                f.get(TIMEOUT_S, TimeUnit.SECONDS);  // rethrows the first send error
            }
        }
    }

    private KafkaConsumer<byte[], byte[]> consumer(String isolation) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
        p.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 200);
        p.put(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
        p.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 30_000);
        p.put(ConsumerConfig.CHECK_CRCS_CONFIG, true);
        return new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    private List<Workload.Consumed> consumeAll(String topic, Workload w, String isolation)
            throws Exception {
        List<TopicPartition> tps = partitions(topic);
        Map<Integer, Long> want = w.endOffsets();
        long total = want.values().stream().mapToLong(Long::longValue).sum();
        List<Workload.Consumed> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = consumer(isolation)) {
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIMEOUT_S);
            while (out.size() < total && System.nanoTime() < deadline) {
                collect(consumer.poll(Duration.ofMillis(500)), out);
            }
            // One more short poll: anything beyond the produced records (duplicates) must show up.
            collect(consumer.poll(Duration.ofMillis(300)), out);
            for (TopicPartition tp : tps) {
                long expected = want.getOrDefault(tp.partition(), 0L);
                expectEquals(expected, consumer.position(tp), "position after reading " + tp);
            }
        }
        expect(out.size() >= total, "%s: consumed %d of %d records within %ds", w.label, out.size(),
                total, TIMEOUT_S);
        return out;
    }

    private static void collect(Iterable<ConsumerRecord<byte[], byte[]>> records,
                                List<Workload.Consumed> out) {
        for (ConsumerRecord<byte[], byte[]> r : records) {
            Header seq = r.headers().lastHeader("seq");
            out.add(new Workload.Consumed(r.partition(), r.offset(), Workload.string(r.key()),
                    Workload.string(r.value()), seq == null ? "<missing>" : Workload.string(seq.value())));
        }
    }

    private void deleteRecords() throws Exception {
        String t = topic("none");
        Workload w = workloads.get("none");
        int partition = w.endOffsets().keySet().iterator().next();
        TopicPartition tp = new TopicPartition(t, partition);
        var result = admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(2)))
                .lowWatermarks().get(tp).get(TIMEOUT_S, TimeUnit.SECONDS);
        expectEquals(2L, result.lowWatermark(), "low watermark after DeleteRecords");
        var earliest = admin.listOffsets(Map.of(tp, OffsetSpec.earliest())).all()
                .get(TIMEOUT_S, TimeUnit.SECONDS).get(tp).offset();
        expectEquals(2L, earliest, "earliest offset after DeleteRecords");
        try (KafkaConsumer<byte[], byte[]> consumer = consumer("read_uncommitted")) {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            expectEquals(2L, consumer.position(tp, Duration.ofSeconds(TIMEOUT_S)),
                    "consumer position at beginning after DeleteRecords");
            List<Workload.Consumed> out = new ArrayList<>();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIMEOUT_S);
            while (out.isEmpty() && System.nanoTime() < deadline) {
                collect(consumer.poll(Duration.ofMillis(500)), out);
            }
            expect(!out.isEmpty(), "nothing to read after DeleteRecords");
            expectEquals(2L, out.get(0).offset(), "first offset read after DeleteRecords");
            expectEquals(w.byPartition().get(partition).get(2).value(), out.get(0).value(),
                    "first value read after DeleteRecords");
        }
    }

    private void deleteTopics() throws Exception {
        List<String> topics = new ArrayList<>(List.of(topic("admin")));
        for (String codec : CODECS) {
            topics.add(topic(codec));
        }
        Set<String> existing = admin.listTopics().names().get(TIMEOUT_S, TimeUnit.SECONDS);
        topics.removeIf(name -> !existing.contains(name));
        admin.deleteTopics(topics).all().get(TIMEOUT_S, TimeUnit.SECONDS);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        Set<String> names;
        do {
            names = admin.listTopics().names().get(TIMEOUT_S, TimeUnit.SECONDS);
        } while (topics.stream().anyMatch(names::contains) && System.nanoTime() < deadline);
        for (String name : topics) {
            expect(!names.contains(name), "%s still listed after DeleteTopics", name);
        }
    }

    /**
     * Waits until metadata shows every partition of a new topic with a leader. Kafka answers
     * CreateTopics before its broker has created the partitions; an idempotent producer that
     * starts at once can see NOT_LEADER_OR_FOLLOWER for its first batch and then
     * OUT_OF_ORDER_SEQUENCE_NUMBER for the batches behind it until delivery times out.
     */
    static void awaitTopicReady(Admin admin, String topic, int partitions) throws Exception {
        eventually(() -> {
            TopicDescription d;
            try {
                d = admin.describeTopics(List.of(topic)).allTopicNames()
                        .get(TIMEOUT_S, TimeUnit.SECONDS).get(topic);
            } catch (java.util.concurrent.ExecutionException e) {
                throw new CheckRunner.CheckFailed(topic + " not described yet: " + e.getCause());
            }
            expectEquals(partitions, d.partitions().size(), "partitions of " + topic);
            for (TopicPartitionInfo p : d.partitions()) {
                expect(p.leader() != null && p.leader().id() >= 0, "%s-%d has no leader yet", topic,
                        p.partition());
            }
        });
    }

    private TopicDescription describeTopic(String t) throws Exception {
        return admin.describeTopics(List.of(t)).allTopicNames().get(TIMEOUT_S, TimeUnit.SECONDS).get(t);
    }

    private List<TopicPartition> partitions(String t) throws Exception {
        List<TopicPartition> tps = new ArrayList<>();
        for (TopicPartitionInfo p : describeTopic(t).partitions()) {
            tps.add(new TopicPartition(t, p.partition()));
        }
        return tps;
    }

    private Map<String, ConfigEntry> topicConfig(String t) throws Exception {
        ConfigResource r = new ConfigResource(ConfigResource.Type.TOPIC, t);
        Config config = admin.describeConfigs(List.of(r)).all().get(TIMEOUT_S, TimeUnit.SECONDS).get(r);
        Map<String, ConfigEntry> result = new HashMap<>();
        for (ConfigEntry e : config.entries()) {
            result.put(e.name(), e);
        }
        return result;
    }
}
