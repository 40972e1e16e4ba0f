// One direction of a MirrorMaker 2 migration as an application sees it (tests/compat/mm2/mm2_compat.py):
// records produced to the source cluster, a consumer group that reads part of them there, and the
// same group resuming on the target cluster from the offsets MirrorMaker translated for it.
//
//   Mm2Probe --source HOST:PORT --target HOST:PORT --topic T --remote-topic R --group G
//            [--partitions 3] [--first 2000] [--total 3000] [--group-protocol classic|consumer]
//            [--timeout-s 90]
//
// Steps (each prints one "step ..." line; the first failed expectation ends the run with exit 1):
//   1. T is created on the source with --partitions partitions; records 0 .. first-1 are produced,
//      record i to partition i % partitions, value "<T>-<i>".
//   2. Group G (--group-protocol, classic by default) reads all of them on the source and commits:
//      its committed offsets are at the end of each partition, where MirrorMaker's offset syncs
//      translate exactly (docs/migration.md, Limits).
//   3. MirrorMaker copies T to R on the target and translates G's offsets: wait until G's committed
//      offsets on R equal the positions of the same records there (R's offset of each partition's
//      last consumed record, plus one).
//   4. Records first .. total-1 are produced to the source; wait until R holds all of them.
//   5. G resumes on the target: it reads exactly records first .. total-1, each once, in order per
//      partition, and commits.
//   6. R read from the beginning equals T record for record, partition by partition.
// No timing bound is asserted: --timeout-s only ends a wait that would otherwise never end.

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

public final class Mm2Probe {
    private final Map<String, String> opts = new HashMap<>();
    private final long started = System.nanoTime();

    private Mm2Probe(String[] args) {
        for (int i = 0; i + 1 < args.length; i += 2) {
            opts.put(args[i].replaceFirst("^--", ""), args[i + 1]);
        }
    }

    private String opt(String name) {
        String v = opts.get(name);
        if (v == null) throw new IllegalArgumentException("--" + name + " is required");
        return v;
    }

    private int intOpt(String name, int dflt) {
        return opts.containsKey(name) ? Integer.parseInt(opts.get(name)) : dflt;
    }

    private void step(String what) {
        System.out.printf("step %s (%.1f s)%n", what, (System.nanoTime() - started) / 1e9);
        System.out.flush();
    }

    private static void expect(boolean ok, String message) {
        if (!ok) throw new AssertionError(message);
    }

    private static Properties common(String bootstrap) {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        return p;
    }

    private KafkaConsumer<String, String> consumer(String bootstrap, String group) {
        Properties p = common(bootstrap);
        if (group != null) {
            p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
            p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, opts.getOrDefault("group-protocol", "classic"));
        }
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        return new KafkaConsumer<>(p);
    }

    private void produce(String bootstrap, String topic, int partitions, int from, int to) throws Exception {
        Properties p = common(bootstrap);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            for (int i = from; i < to; i++) {
                producer.send(new ProducerRecord<>(topic, i % partitions, "k" + i, topic + "-" + i));
            }
            producer.flush();
        }
    }

    /** Every record of the topic from the beginning, by partition, read without a group. */
    private Map<Integer, List<String>> readAll(String bootstrap, String topic, int partitions,
                                                      long deadline) {
        Map<Integer, List<String>> out = new TreeMap<>();
        try (KafkaConsumer<String, String> c = consumer(bootstrap, null)) {
            List<TopicPartition> tps = new ArrayList<>();
            for (int p = 0; p < partitions; p++) tps.add(new TopicPartition(topic, p));
            c.assign(tps);
            c.seekToBeginning(tps);
            Map<TopicPartition, Long> end = c.endOffsets(tps);
            while (tps.stream().anyMatch(tp -> c.position(tp) < end.get(tp))) {
                expect(System.nanoTime() < deadline, "reading " + topic + " back did not reach " + end);
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(500))) {
                    out.computeIfAbsent(r.partition(), k -> new ArrayList<>()).add(r.value());
                }
            }
        }
        return out;
    }

    private Map<TopicPartition, OffsetAndMetadata> committed(Admin admin, String group, String topic)
            throws Exception {
        Map<TopicPartition, OffsetAndMetadata> out = new TreeMap<>(
            (a, b) -> Integer.compare(a.partition(), b.partition()));
        admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get()
            .forEach((tp, o) -> { if (tp.topic().equals(topic) && o != null) out.put(tp, o); });
        return out;
    }

    private static String show(Map<TopicPartition, OffsetAndMetadata> offsets) {
        StringBuilder sb = new StringBuilder("{");
        offsets.forEach((tp, o) -> sb.append(sb.length() > 1 ? ", " : "").append(tp.partition())
            .append('=').append(o.offset()));
        return sb.append('}').toString();
    }

    private int run() throws Exception {
        String source = opt("source"), target = opt("target");
        String topic = opt("topic"), remote = opt("remote-topic"), group = opt("group");
        int partitions = intOpt("partitions", 3), first = intOpt("first", 2000);
        int total = intOpt("total", 3000);
        long deadline = System.nanoTime() + intOpt("timeout-s", 90) * 1_000_000_000L;

        try (Admin src = Admin.create(common(source)); Admin dst = Admin.create(common(target))) {
            // 1. The topic and the first records on the source.
            src.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get();
            produce(source, topic, partitions, 0, first);
            step("produced " + first + " records to " + topic + " on the source");

            // 2. The group reads all of them on the source and commits.
            Map<Integer, Long> consumedUpTo = new TreeMap<>();
            try (KafkaConsumer<String, String> c = consumer(source, group)) {
                c.subscribe(List.of(topic));
                int read = 0;
                while (read < first) {
                    expect(System.nanoTime() < deadline, group + " read only " + read + " of " + first
                        + " records on the source");
                    for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(500))) {
                        read++;
                        consumedUpTo.put(r.partition(), r.offset() + 1);
                    }
                }
                expect(read == first, group + " read " + read + " records on the source, expected " + first);
                c.commitSync();
            }
            Map<TopicPartition, OffsetAndMetadata> sourceCommitted = committed(src, group, topic);
            expect(sourceCommitted.size() == partitions, "committed on the source: " + show(sourceCommitted));
            step("group " + group + " read " + first + " records on the source and committed "
                + show(sourceCommitted));

            // 3. MirrorMaker translates the group's offsets: the target position of each partition
            // is one past the copy of the last record the group consumed there.
            Map<Integer, List<String>> sourceRecords = readAll(source, topic, partitions, deadline);
            Map<TopicPartition, OffsetAndMetadata> targetCommitted = Map.of();
            Map<Integer, Long> expected = new TreeMap<>();
            while (true) {
                // The remote topic appears once MirrorMaker created it (a consumer would wait for
                // a missing topic's metadata until its own timeout).
                if (dst.listTopics().names().get().contains(remote)) {
                    Map<Integer, List<String>> copied =
                        readAll(target, remote, partitions, System.nanoTime() + 30_000_000_000L);
                    for (var e : consumedUpTo.entrySet()) {
                        String last = sourceRecords.get(e.getKey()).get((int) (e.getValue() - 1));
                        int at = copied.getOrDefault(e.getKey(), List.of()).indexOf(last);
                        if (at >= 0) expected.put(e.getKey(), (long) at + 1);
                    }
                    targetCommitted = committed(dst, group, remote);
                }
                boolean done = expected.size() == partitions && targetCommitted.size() == partitions
                    && targetCommitted.entrySet().stream()
                        .allMatch(e -> e.getValue().offset() == expected.get(e.getKey().partition()));
                if (done) break;
                if (System.nanoTime() > deadline) {
                    long translated = targetCommitted.entrySet().stream()
                        .filter(e -> expected.containsKey(e.getKey().partition()))
                        .mapToLong(e -> Math.min(e.getValue().offset(), expected.get(e.getKey().partition())))
                        .sum();
                    throw new AssertionError("group " + group + " on the target: committed "
                        + show(targetCommitted) + ", expected " + expected + " (" + translated + " of "
                        + first + " consumed records covered by translated offsets)");
                }
                Thread.sleep(500);
            }
            step("group " + group + " translated on the target: " + show(targetCommitted));

            // 4. The rest of the records, copied while the group is away.
            produce(source, topic, partitions, first, total);
            while (true) {
                Map<Integer, Long> ends = new TreeMap<>();
                try (KafkaConsumer<String, String> c = consumer(target, null)) {
                    List<TopicPartition> tps = new ArrayList<>();
                    for (int p = 0; p < partitions; p++) tps.add(new TopicPartition(remote, p));
                    c.endOffsets(tps).forEach((tp, o) -> ends.put(tp.partition(), o));
                }
                long sum = ends.values().stream().mapToLong(Long::longValue).sum();
                if (sum >= total) break;
                expect(System.nanoTime() < deadline, remote + " on the target holds " + sum + " of "
                    + total + " records: " + ends);
                Thread.sleep(500);
            }
            step("produced records " + first + ".." + (total - 1) + "; " + remote + " holds " + total);

            // 5. The group resumes on the target: the remaining records, each once, in order.
            Map<Integer, List<Integer>> resumed = new TreeMap<>();
            int read = 0;
            try (KafkaConsumer<String, String> c = consumer(target, group)) {
                c.subscribe(List.of(remote));
                long quietSince = System.nanoTime();
                // Reads until every remaining record came and a quiet second passed (a duplicate
                // would arrive within it).
                while (read < total - first || System.nanoTime() - quietSince < 1_000_000_000L) {
                    expect(System.nanoTime() < deadline, group + " read " + read + " of "
                        + (total - first) + " remaining records on the target");
                    for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(300))) {
                        read++;
                        quietSince = System.nanoTime();
                        int i = Integer.parseInt(r.value().substring(r.value().lastIndexOf('-') + 1));
                        resumed.computeIfAbsent(r.partition(), k -> new ArrayList<>()).add(i);
                    }
                }
                c.commitSync();
            }
            expect(read == total - first, group + " read " + read + " records on the target, expected "
                + (total - first) + " (" + (read - (total - first)) + " read twice or before its offset)");
            for (var e : resumed.entrySet()) {
                List<Integer> got = e.getValue();
                for (int k = 0; k < got.size(); k++) {
                    expect(got.get(k) >= first, "record " + got.get(k) + " read again on the target");
                    expect(k == 0 || got.get(k) > got.get(k - 1), "partition " + e.getKey()
                        + " out of order on the target: " + got.subList(Math.max(k - 1, 0), k + 1));
                }
            }
            step("group " + group + " resumed on the target and read exactly the " + read
                + " remaining records, in order");

            // 6. The copy equals the source, partition by partition.
            Map<Integer, List<String>> all = readAll(source, topic, partitions, deadline);
            Map<Integer, List<String>> copy = readAll(target, remote, partitions, deadline);
            expect(all.values().stream().mapToInt(List::size).sum() == total,
                "the source holds " + all.values().stream().mapToInt(List::size).sum() + " records");
            for (int p = 0; p < partitions; p++) {
                List<String> a = all.getOrDefault(p, List.of()), b = copy.getOrDefault(p, List.of());
                expect(a.equals(b), "partition " + p + ": the source has " + a.size() + " records, the "
                    + "target " + b.size() + (a.size() == b.size() ? " in another order" : ""));
            }
            step("all " + total + " records on the target once each, in source order per partition");
        }
        return 0;
    }

    public static void main(String[] args) throws Exception {
        try {
            System.exit(new Mm2Probe(args).run());
        } catch (AssertionError e) {
            System.out.println("FAIL " + e.getMessage());
            System.exit(1);
        }
    }
}
