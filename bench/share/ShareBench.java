import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.FinalizedVersionRange;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Issue #35's share-group throughput bench (bench/share.sh): MEMBERS KafkaShareConsumers (threads
 * of this JVM) of one new share group read a new topic of PARTITIONS partitions that holds RECORDS
 * records of SIZE bytes, written beforehand by this JVM's KafkaProducer.
 *   produce  creates the topic and writes the records (acks=all, linger.ms=5, batch.size=64 KiB)
 *   consume  the members start at once, with the client's defaults (implicit acknowledgement:
 *            a poll accepts what the previous poll returned); timed from the start until every
 *            record (partition, offset) below the end offsets has been seen by some member.
 *            The members then close (which acknowledges their last records).
 * Each phase prints one JSON line, its scenario the phase (LABEL_phase with --label LABEL).
 * consume's: records (distinct), seconds, records_per_s and mb_per_s (values' bytes, 1 MB = 1e6 B)
 * over that whole time, first_record_s (start until a member has its first record: the group's
 * join), steady_records_per_s (first record to last), stalls, stall_s and max_gap_s (gaps of
 * 100 ms or more between new records after the first, each printed to stderr), per_member
 * counts, duplicates (deliveries of a record some member had already seen), redelivered (records
 * whose deliveryCount was above 1), ack_failures (records whose acknowledgement the broker
 * refused, from the acknowledgement commit callback) and close_s. The first duplicates and
 * refused acknowledgements go to stderr. A consume that does not finish within --timeout-s prints
 * "timed_out": true with what it had.
 *
 * The group starts at the earliest offset: --reset group sets the GROUP config
 * share.auto.offset.reset=earliest through the Admin API before any member joins (Kafka; what
 * kafka-configs --entity-type groups does); --reset broker relies on the broker (Spool's
 * group.share.auto.offset.reset=earliest).
 *
 *   java ShareBench --bootstrap HOST:PORT --topic T --group G [--members 4] [--partitions 8]
 *                   [--records 500000] [--size 100] [--reset group|broker] [--timeout-s 300]
 *                   [--label LABEL]
 */
public class ShareBench {
    static String label = "";

    public static void main(String[] args) throws Exception {
        BenchOpts o = new BenchOpts(args, "share", 4, 8, 300);
        String bootstrap = o.bootstrap, topic = o.topic, group = o.group;
        int members = o.members, partitions = o.partitions;
        long timeoutNs = o.timeoutNs;
        long records = Long.parseLong(o.get("records", "500000"));
        int size = Integer.parseInt(o.get("size", "100"));
        String reset = o.get("reset", "broker");
        label = o.has("label") ? o.get("label", "") + "_" : "";

        Properties ap = new Properties();
        ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        Map<TopicPartition, Long> start = new HashMap<>();
        Map<TopicPartition, Long> end = new HashMap<>();
        String shareVersion;
        try (Admin admin = Admin.create(ap)) {
            FinalizedVersionRange v = admin.describeFeatures().featureMetadata().get()
                .finalizedFeatures().get("share.version");
            shareVersion = v == null ? "none" : String.valueOf(v.maxVersionLevel());
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get();
            produce(bootstrap, topic, records, size);
            if (reset.equals("group")) {
                ConfigResource r = new ConfigResource(ConfigResource.Type.GROUP, group);
                AlterConfigOp op = new AlterConfigOp(
                    new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET);
                admin.incrementalAlterConfigs(Map.of(r, List.of(op))).all().get();
                String got = admin.describeConfigs(List.of(r)).all().get().get(r)
                    .get("share.auto.offset.reset").value();
                if (!got.equals("earliest")) {
                    throw new IllegalStateException("share.auto.offset.reset of " + group + " is " + got);
                }
            }
            Map<TopicPartition, OffsetSpec> earliest = new HashMap<>(), latest = new HashMap<>();
            for (int p = 0; p < partitions; p++) {
                earliest.put(new TopicPartition(topic, p), OffsetSpec.earliest());
                latest.put(new TopicPartition(topic, p), OffsetSpec.latest());
            }
            admin.listOffsets(earliest).all().get().forEach((tp, i) -> start.put(tp, i.offset()));
            admin.listOffsets(latest).all().get().forEach((tp, i) -> end.put(tp, i.offset()));
        }
        long expected = 0;
        for (TopicPartition tp : end.keySet()) {
            expected += end.get(tp) - start.get(tp);
        }
        System.err.printf("share.version %s; %d records in %d partitions %s%n", shareVersion, expected,
                          partitions, end);
        boolean ok = consume(bootstrap, topic, group, members, partitions, start, end, expected, size,
                             shareVersion, timeoutNs);
        System.exit(ok ? 0 : 1);
    }

    static void produce(String bootstrap, String topic, long records, int size) throws Exception {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, "65536");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        byte[] value = new byte[size];
        for (int i = 0; i < size; i++) {
            value[i] = (byte) ('a' + i % 26);
        }
        AtomicReference<Exception> failed = new AtomicReference<>();
        long t0 = System.nanoTime();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            for (long i = 0; i < records && failed.get() == null; i++) {
                // Keyless: the default partitioner spreads the batches over the partitions.
                producer.send(new ProducerRecord<>(topic, value), (md, e) -> {
                    if (e != null) {
                        failed.compareAndSet(null, e);
                    }
                });
            }
            producer.flush();
        }
        if (failed.get() != null) {
            throw failed.get();
        }
        double s = (System.nanoTime() - t0) / 1e9;
        System.out.printf("{\"phase\": \"produce\", \"scenario\": \"%sproduce\", \"records\": %d, "
            + "\"seconds\": %.3f, \"records_per_s\": %.0f, \"mb_per_s\": %.2f}%n", label, records, s,
            records / s,
            records * (double) size / 1e6 / s);
        System.out.flush();
    }

    // One share consumer, made, used and closed on its own thread.
    static final class Member implements Runnable {
        final Properties props;
        final Shared shared;
        long seen, duplicates, redelivered, ackFailures;
        volatile boolean stop;

        final int id;

        Member(Properties props, Shared shared, int id) {
            this.props = props;
            this.shared = shared;
            this.id = id;
        }

        @Override
        public void run() {
            KafkaShareConsumer<byte[], byte[]> consumer = new KafkaShareConsumer<>(props);
            // Acknowledgements the broker refused (their records go to another member again).
            consumer.setAcknowledgementCommitCallback((offsets, e) -> {
                if (e == null) {
                    return;
                }
                long n = 0;
                for (var o : offsets.values()) {
                    n += o.size();
                }
                ackFailures += n;
                if (shared.reportedAckFailures.incrementAndGet() <= 10) {
                    System.err.printf("acknowledgement failed: member-%d at %.3f s, %s: %s%n", id,
                        (System.nanoTime() - shared.t0) / 1e9, summary(offsets), e);
                }
            });
            try {
                consumer.subscribe(List.of(shared.topic));
                while (!stop) {
                    for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
                        seen++;
                        if (r.deliveryCount().orElse((short) 1) > 1) {
                            redelivered++;
                        }
                        if (!shared.first(r, r.value() == null ? 0 : r.value().length, id)) {
                            duplicates++;
                        }
                    }
                }
            } finally {
                long t0 = System.nanoTime();
                consumer.close(Duration.ofSeconds(30));
                shared.closeNs.accumulateAndGet(System.nanoTime() - t0, Math::max);
            }
        }
    }

    // "topic-partition@first..last (count)" per partition.
    static String summary(Map<TopicIdPartition, Set<Long>> offsets) {
        StringBuilder b = new StringBuilder();
        offsets.forEach((tp, o) -> b.append(b.length() == 0 ? "" : ", ").append(tp.topicPartition())
            .append('@').append(Collections.min(o)).append("..").append(Collections.max(o))
            .append(" (").append(o.size()).append(')'));
        return b.toString();
    }

    // Which member saw each (partition, offset) first (0: none yet, else member id + 1), from each
    // partition's start offset. The first duplicates are printed to stderr with who saw them when.
    static final class Shared {
        static final long STALL_NS = 100_000_000;  // a gap between new records that counts as a stall
        final String topic;
        final byte[][] seenBy;
        final long[] base;
        final long expected;
        final long t0 = System.nanoTime();
        final AtomicLong distinct = new AtomicLong();
        final AtomicLong bytes = new AtomicLong();
        final AtomicLong firstNs = new AtomicLong();
        final AtomicLong lastNs = new AtomicLong();
        final AtomicLong closeNs = new AtomicLong();
        final AtomicLong lastSeenNs = new AtomicLong();
        final AtomicLong stalls = new AtomicLong();
        final AtomicLong stallNs = new AtomicLong();
        final AtomicLong maxGapNs = new AtomicLong();
        final AtomicLong reportedDuplicates = new AtomicLong();
        final AtomicLong reportedAckFailures = new AtomicLong();

        Shared(String topic, int partitions, Map<TopicPartition, Long> start,
               Map<TopicPartition, Long> end, long expected) {
            this.topic = topic;
            seenBy = new byte[partitions][];
            base = new long[partitions];
            for (TopicPartition tp : start.keySet()) {
                base[tp.partition()] = start.get(tp);
                seenBy[tp.partition()] = new byte[(int) (end.get(tp) - start.get(tp))];
            }
            this.expected = expected;
        }

        // True when this is the first sight of r, which member `id` has.
        boolean first(ConsumerRecord<?, ?> r, int valueBytes, int id) {
            byte[] b = seenBy[r.partition()];
            int i = (int) (r.offset() - base[r.partition()]);
            int before;
            synchronized (b) {
                before = b[i];
                if (before == 0) {
                    b[i] = (byte) (id + 1);
                }
            }
            long now = System.nanoTime();
            if (before != 0) {
                if (reportedDuplicates.incrementAndGet() <= 10) {
                    System.err.printf("duplicate: %s-%d@%d (deliveryCount %d) to member-%d at %.3f s, "
                        + "first seen by member-%d%n", topic, r.partition(), r.offset(),
                        r.deliveryCount().orElse((short) -1), id, (now - t0) / 1e9, before - 1);
                }
                return false;
            }
            firstNs.compareAndSet(0, now);
            long gap = now - lastSeenNs.getAndAccumulate(now, Math::max);
            if (gap >= STALL_NS && gap < now - t0) {
                stalls.incrementAndGet();
                stallNs.addAndGet(gap);
                maxGapNs.accumulateAndGet(gap, Math::max);
                System.err.printf("stall: no new record for %.3f s before %s-%d@%d (member-%d) at "
                    + "%.3f s%n", gap / 1e9, topic, r.partition(), r.offset(), id, (now - t0) / 1e9);
            }
            bytes.addAndGet(valueBytes);
            if (distinct.incrementAndGet() == expected) {
                lastNs.set(now);
            }
            return true;
        }
    }

    static boolean consume(String bootstrap, String topic, String group, int members, int partitions,
                           Map<TopicPartition, Long> start, Map<TopicPartition, Long> end,
                           long expected, int size, String shareVersion, long timeoutNs)
            throws InterruptedException {
        Properties cp = new Properties();
        cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        cp.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        cp.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        cp.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        Shared shared = new Shared(topic, partitions, start, end, expected);
        List<Member> live = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        long t0 = shared.t0;
        for (int i = 0; i < members; i++) {
            Properties p = new Properties();
            p.putAll(cp);
            p.put(ConsumerConfig.CLIENT_ID_CONFIG, "member-" + i);
            live.add(new Member(p, shared, i));
            threads.add(new Thread(live.get(i), "member-" + i));
        }
        for (Thread t : threads) {
            t.start();
        }
        while (shared.lastNs.get() == 0 && System.nanoTime() - t0 < timeoutNs) {
            Thread.sleep(2);
        }
        long t1 = shared.lastNs.get();
        boolean done = t1 != 0;
        if (!done) {
            t1 = System.nanoTime();
        }
        for (Member m : live) {
            m.stop = true;
        }
        for (Thread t : threads) {
            t.join();
        }
        double s = (t1 - t0) / 1e9;
        long got = shared.distinct.get();
        long firstNs = shared.firstNs.get();
        double first = firstNs == 0 ? -1 : (firstNs - t0) / 1e9;
        double steady = firstNs == 0 || t1 == firstNs ? 0 : got / ((t1 - firstNs) / 1e9);
        long duplicates = 0, redelivered = 0, ackFailures = 0;
        StringBuilder per = new StringBuilder();
        for (Member m : live) {
            duplicates += m.duplicates;
            redelivered += m.redelivered;
            ackFailures += m.ackFailures;
            per.append(per.length() == 0 ? "" : ", ").append(m.seen);
        }
        System.out.printf("{\"phase\": \"consume\", \"scenario\": \"%sconsume\", \"records\": %d, "
            + "\"expected\": %d, \"seconds\": %.3f, \"records_per_s\": %.0f, \"mb_per_s\": %.2f, "
            + "\"first_record_s\": %.3f, \"steady_records_per_s\": %.0f, \"stalls\": %d, "
            + "\"stall_s\": %.3f, \"max_gap_s\": %.3f, \"per_member\": [%s], \"duplicates\": %d, "
            + "\"redelivered\": %d, \"ack_failures\": %d, \"close_s\": %.3f, \"members\": %d, "
            + "\"partitions\": %d, \"size\": %d, \"share_version\": \"%s\"%s}%n",
            label, got, expected, s, got / s, shared.bytes.get() / 1e6 / s, first, steady,
            shared.stalls.get(), shared.stallNs.get() / 1e9, shared.maxGapNs.get() / 1e9, per,
            duplicates, redelivered, ackFailures, shared.closeNs.get() / 1e9, members, partitions,
            size, shareVersion, done ? "" : ", \"timed_out\": true");
        System.out.flush();
        return done;
    }
}
