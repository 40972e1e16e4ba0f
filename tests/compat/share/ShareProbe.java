// KIP-932 share groups through Apache Kafka's Java KafkaShareConsumer (explicit acknowledgement
// mode), against one broker: spool-broker, or Apache Kafka itself (share_compat.py --target kafka,
// the reference). Each check prints PASS or FAIL with what it saw; the exit status is the number
// of failures. The broker runs with group.share.record.lock.duration.ms=3000 and
// group.share.delivery.count.limit=3 (share_compat.py).
//
//   ShareProbe --bootstrap HOST:PORT [--only check,...]

import java.time.Duration;
import java.util.*;
import java.util.concurrent.*;
import java.util.concurrent.atomic.*;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.*;

public class ShareProbe {
    static String bootstrap;
    static final long LOCK_MS = 3000;
    static final int DELIVERY_LIMIT = 3;

    static class Fail extends RuntimeException {
        Fail(String m) { super(m); }
    }

    static void expect(boolean ok, String what) {
        if (!ok) throw new Fail(what);
    }

    static Admin admin() {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        return Admin.create(p);
    }

    static void createTopic(String name, int partitions) throws Exception {
        try (Admin a = admin()) {
            a.createTopics(List.of(new NewTopic(name, partitions, (short) 1))).all().get();
        }
    }

    // share.auto.offset.reset=earliest as a group config, on both targets (a refusal fails the
    // check that asked for it). Returns what set it, for the checks' messages.
    static String earliest(String group) throws Exception {
        setGroupConfig(group, "share.auto.offset.reset", "earliest");
        return "group config";
    }

    static void setGroupConfig(String group, String key, String value) throws Exception {
        try (Admin a = admin()) {
            ConfigResource r = new ConfigResource(ConfigResource.Type.GROUP, group);
            AlterConfigOp op = new AlterConfigOp(new ConfigEntry(key, value), AlterConfigOp.OpType.SET);
            a.incrementalAlterConfigs(Map.of(r, List.of(op))).all().get();
        }
    }

    static void produce(String topic, int partitions, int from, int n) throws Exception {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> prod = new KafkaProducer<>(p)) {
            List<Future<RecordMetadata>> sent = new ArrayList<>();
            for (int i = from; i < from + n; i++) {
                sent.add(prod.send(new ProducerRecord<>(topic, i % partitions, "k" + i, "v" + i)));
            }
            for (Future<RecordMetadata> f : sent) f.get();
        }
    }

    static KafkaShareConsumer<String, String> consumer(String group, String topic, String client) {
        return consumer(group, topic, client, "explicit");
    }

    // `mode`: share.acknowledgement.mode, "explicit" or the client's default "implicit" (a poll
    // accepts what the previous one returned).
    static KafkaShareConsumer<String, String> consumer(String group, String topic, String client,
                                                       String mode) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, client);
        p.put("share.acknowledgement.mode", mode);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        KafkaShareConsumer<String, String> c = new KafkaShareConsumer<>(p);
        c.subscribe(List.of(topic));
        return c;
    }

    static String id(ConsumerRecord<String, String> r) {
        return r.partition() + "@" + r.offset();
    }

    static short count(ConsumerRecord<String, String> r) {
        return r.deliveryCount().orElse((short) -1);
    }

    // Three members share 300 records of 3 partitions: each accepted exactly once overall, and
    // no record is held by two members at once.
    static String exactlyOnce() throws Exception {
        final String topic = "share-eo", group = "g-share-eo";
        final int n = 300;
        createTopic(topic, 3);
        String reset = earliest(group);
        produce(topic, 3, 0, n);
        ConcurrentHashMap<String, String> held = new ConcurrentHashMap<>();
        ConcurrentHashMap<String, Integer> accepted = new ConcurrentHashMap<>();
        AtomicInteger total = new AtomicInteger();
        List<String> problems = Collections.synchronizedList(new ArrayList<>());
        ConcurrentHashMap<String, Integer> perMember = new ConcurrentHashMap<>();
        ExecutorService pool = Executors.newFixedThreadPool(3);
        long deadline = System.currentTimeMillis() + 40000;
        List<Future<?>> futures = new ArrayList<>();
        for (int m = 0; m < 3; m++) {
            final String name = "member-" + m;
            futures.add(pool.submit(() -> {
                try (KafkaShareConsumer<String, String> c = consumer(group, topic, name)) {
                    while (total.get() < n && System.currentTimeMillis() < deadline) {
                        ConsumerRecords<String, String> recs = c.poll(Duration.ofMillis(500));
                        List<ConsumerRecord<String, String>> mine = new ArrayList<>();
                        for (ConsumerRecord<String, String> r : recs) {
                            String other = held.putIfAbsent(id(r), name);
                            if (other != null) {
                                problems.add(id(r) + " held by " + other + " and " + name);
                            }
                            mine.add(r);
                            c.acknowledge(r, AcknowledgeType.ACCEPT);
                        }
                        if (mine.isEmpty()) continue;
                        c.commitSync();
                        for (ConsumerRecord<String, String> r : mine) {
                            held.remove(id(r), name);
                            if (accepted.merge(r.key(), 1, Integer::sum) > 1) {
                                problems.add(r.key() + " accepted twice");
                            }
                            total.incrementAndGet();
                            perMember.merge(name, 1, Integer::sum);
                        }
                    }
                }
                return null;
            }));
        }
        for (Future<?> f : futures) f.get();
        pool.shutdown();
        expect(problems.isEmpty(), "violations: " + problems.subList(0, Math.min(5, problems.size())));
        expect(accepted.size() == n, "accepted " + accepted.size() + " distinct records of " + n);
        return n + " records accepted exactly once by 3 members " + new TreeMap<>(perMember)
            + ", none held twice (reset: " + reset + ")";
    }

    // A group that grows while it consumes (what bench/share.sh found broken once): one member
    // starts on a 12,000-record backlog of 6 partitions with the client's implicit
    // acknowledgement, spending 1 ms per record; three more join one by one once it has seen
    // 1,500, and all commit before they close. The group's lock (share.record.lock.duration.ms=30000, a GROUP config) outlasts
    // any poll's processing, so no record may reach the application twice and the broker may
    // refuse no acknowledgement, however the partitions move between members. Records a member
    // fetched but had not yet returned when it lost their partition may come back to another
    // with delivery count 2 (the client releases them); the application never saw them twice.
    static String growingGroup() throws Exception {
        final String topic = "share-grow", group = "g-share-grow";
        final int n = 12000, partitions = 6, members = 4;
        createTopic(topic, partitions);
        earliest(group);
        setGroupConfig(group, "share.record.lock.duration.ms", "30000");
        produce(topic, partitions, 0, n);
        ConcurrentHashMap<String, String> firstSeenBy = new ConcurrentHashMap<>();
        ConcurrentHashMap<String, Integer> perMember = new ConcurrentHashMap<>();
        List<String> duplicates = Collections.synchronizedList(new ArrayList<>());
        List<String> refused = Collections.synchronizedList(new ArrayList<>());
        AtomicInteger redelivered = new AtomicInteger();
        AtomicBoolean done = new AtomicBoolean();
        long deadline = System.currentTimeMillis() + 90000;
        ExecutorService pool = Executors.newFixedThreadPool(members);
        List<Future<?>> futures = new ArrayList<>();
        for (int m = 0; m < members; m++) {
            while (m == 1 && firstSeenBy.size() < 1500 && System.currentTimeMillis() < deadline) {
                Thread.sleep(50);
            }
            if (m > 1) Thread.sleep(1000);
            final String name = "member-" + m;
            futures.add(pool.submit(() -> {
                try (KafkaShareConsumer<String, String> c = consumer(group, topic, name, "implicit")) {
                    c.setAcknowledgementCommitCallback((offsets, e) -> {
                        if (e != null) refused.add(name + " " + offsets + ": " + e);
                    });
                    while (!done.get() && System.currentTimeMillis() < deadline) {
                        ConsumerRecords<String, String> recs = c.poll(Duration.ofMillis(100));
                        for (ConsumerRecord<String, String> r : recs) {
                            String other = firstSeenBy.putIfAbsent(id(r), name);
                            if (other != null) {
                                duplicates.add(id(r) + " to " + name + " (delivery count " + count(r)
                                               + "), first to " + other);
                            }
                            if (count(r) > 1) redelivered.incrementAndGet();
                            perMember.merge(name, 1, Integer::sum);
                        }
                        if (firstSeenBy.size() >= n) done.set(true);
                        if (!recs.isEmpty()) Thread.sleep(recs.count());
                    }
                    // Implicit mode accepts the last poll's records only on a commit: close()
                    // alone would release them (Kafka's client does the same).
                    c.commitSync();
                }
                return null;
            }));
        }
        for (Future<?> f : futures) f.get();
        pool.shutdown();
        expect(duplicates.isEmpty(), duplicates.size() + " records seen twice: "
               + duplicates.subList(0, Math.min(5, duplicates.size())));
        expect(refused.isEmpty(), refused.size() + " acknowledgements refused: "
               + refused.subList(0, Math.min(3, refused.size())));
        expect(firstSeenBy.size() == n, "saw " + firstSeenBy.size() + " distinct records of " + n);
        expect(perMember.size() == members, "members that got records: " + new TreeMap<>(perMember));
        // Everything was accepted: every share-partition's lag is 0. (The start offset it
        // reports is the persisted one, which Kafka writes behind the acknowledgements: 993 of
        // 2000 in one run, so it is printed, not compared.)
        Map<String, Long> lags = new TreeMap<>();
        Map<String, Long> starts = new TreeMap<>();
        try (Admin a = admin()) {
            var info = a.listShareGroupOffsets(Map.of(group, new ListShareGroupOffsetsSpec()))
                .partitionsToOffsetInfo(group).get();
            info.forEach((tp, o) -> {
                lags.put(tp.toString(), o.lag().orElse(-1L));
                starts.put(tp.toString(), o.startOffset());
            });
        }
        Map<String, Long> want = new TreeMap<>();
        for (int p = 0; p < partitions; p++) want.put(topic + "-" + p, 0L);
        expect(lags.equals(want), "lag per partition " + lags + ", expected 0 for each");
        return n + " records seen once each by a group that grew from 1 to " + members
            + " members while consuming " + new TreeMap<>(perMember) + ", all accepted (lag 0;"
            + " start offsets " + starts.values() + "), no acknowledgement refused, "
            + redelivered.get() + " released by a member before it saw them and redelivered";
    }

    // RELEASE'd records come back with delivery count 2.
    static String releaseRedeliver() throws Exception {
        final String topic = "share-rel", group = "g-share-rel";
        createTopic(topic, 1);
        String reset = earliest(group);
        produce(topic, 1, 0, 10);
        Map<Long, List<Short>> deliveries = new TreeMap<>();
        try (KafkaShareConsumer<String, String> c = consumer(group, topic, "rel")) {
            long deadline = System.currentTimeMillis() + 20000;
            int acceptedCount = 0;
            while (acceptedCount < 10 && System.currentTimeMillis() < deadline) {
                ConsumerRecords<String, String> recs = c.poll(Duration.ofMillis(500));
                for (ConsumerRecord<String, String> r : recs) {
                    deliveries.computeIfAbsent(r.offset(), k -> new ArrayList<>()).add(count(r));
                    if (deliveries.get(r.offset()).size() == 1) {
                        c.acknowledge(r, AcknowledgeType.RELEASE);
                    } else {
                        c.acknowledge(r, AcknowledgeType.ACCEPT);
                        acceptedCount++;
                    }
                }
                if (!recs.isEmpty()) c.commitSync();
            }
        }
        for (Map.Entry<Long, List<Short>> e : deliveries.entrySet()) {
            expect(e.getValue().equals(List.of((short) 1, (short) 2)),
                   "offset " + e.getKey() + " delivered with counts " + e.getValue());
        }
        expect(deliveries.size() == 10, "saw " + deliveries.size() + " of 10 offsets");
        return "10 records released once, redelivered with delivery count 2, then accepted (reset: "
            + reset + ")";
    }

    // REJECT'ed records are never delivered again; later records still are.
    static String rejectArchives() throws Exception {
        final String topic = "share-rej", group = "g-share-rej";
        createTopic(topic, 1);
        earliest(group);
        produce(topic, 1, 0, 10);
        Set<Long> rejected = new TreeSet<>();
        List<Long> again = new ArrayList<>();
        int later = 0;
        try (KafkaShareConsumer<String, String> c = consumer(group, topic, "rej")) {
            long deadline = System.currentTimeMillis() + 20000;
            Set<Long> seen = new HashSet<>();
            while (seen.size() < 10 && System.currentTimeMillis() < deadline) {
                ConsumerRecords<String, String> recs = c.poll(Duration.ofMillis(500));
                for (ConsumerRecord<String, String> r : recs) {
                    seen.add(r.offset());
                    if (r.offset() < 5) {
                        rejected.add(r.offset());
                        c.acknowledge(r, AcknowledgeType.REJECT);
                    } else {
                        c.acknowledge(r, AcknowledgeType.ACCEPT);
                    }
                }
                if (!recs.isEmpty()) c.commitSync();
            }
            expect(seen.size() == 10, "saw " + seen.size() + " of 10 records");
            produce(topic, 1, 10, 3);
            deadline = System.currentTimeMillis() + 8000;
            while (later < 3 && System.currentTimeMillis() < deadline) {
                ConsumerRecords<String, String> recs = c.poll(Duration.ofMillis(500));
                for (ConsumerRecord<String, String> r : recs) {
                    if (r.offset() < 10) again.add(r.offset()); else later++;
                    c.acknowledge(r, AcknowledgeType.ACCEPT);
                }
                if (!recs.isEmpty()) c.commitSync();
            }
        }
        expect(rejected.size() == 5, "rejected " + rejected);
        expect(again.isEmpty(), "delivered again: " + again);
        expect(later == 3, "records produced after the rejects: " + later + " of 3");
        return "offsets " + rejected + " rejected and never redelivered; 3 later records delivered";
    }

    // A record one member holds without acknowledging goes to another after the lock duration,
    // with delivery count 2; not before (the member still holds it meanwhile).
    static String lockTimeout() throws Exception {
        final String topic = "share-lock", group = "g-share-lock";
        createTopic(topic, 1);
        earliest(group);
        produce(topic, 1, 0, 5);
        KafkaShareConsumer<String, String> a = consumer(group, topic, "holder");
        Set<Long> heldByA = new TreeSet<>();
        long acquiredAt = 0;
        long deadline = System.currentTimeMillis() + 20000;
        while (heldByA.isEmpty() && System.currentTimeMillis() < deadline) {
            for (ConsumerRecord<String, String> r : a.poll(Duration.ofMillis(500))) {
                heldByA.add(r.offset());
                expect(count(r) == 1, "first delivery count " + count(r));
            }
            acquiredAt = System.currentTimeMillis();
        }
        expect(!heldByA.isEmpty(), "the holder got nothing");
        Set<Long> gotByB = new TreeSet<>();
        Set<Short> countsB = new TreeSet<>();
        long firstB = 0;
        try (KafkaShareConsumer<String, String> b = consumer(group, topic, "taker")) {
            deadline = System.currentTimeMillis() + 20000;
            while (gotByB.size() < heldByA.size() && System.currentTimeMillis() < deadline) {
                ConsumerRecords<String, String> recs = b.poll(Duration.ofMillis(500));
                for (ConsumerRecord<String, String> r : recs) {
                    if (firstB == 0) firstB = System.currentTimeMillis();
                    gotByB.add(r.offset());
                    countsB.add(count(r));
                    b.acknowledge(r, AcknowledgeType.ACCEPT);
                }
                if (!recs.isEmpty()) b.commitSync();
            }
        } finally {
            try {
                a.close(Duration.ofSeconds(5));
            } catch (Exception e) {
                // explicit mode with unacknowledged records: closing may complain; nothing to check
            }
        }
        expect(gotByB.equals(heldByA), "taker got " + gotByB + ", holder had " + heldByA);
        expect(countsB.equals(Set.of((short) 2)), "taker's delivery counts " + countsB);
        return heldByA.size() + " unacknowledged records redelivered to another member with delivery"
            + " count 2, " + (firstB - acquiredAt) + " ms after the holder got them (lock "
            + LOCK_MS + " ms)";
    }

    // A record released every time is delivered group.share.delivery.count.limit times, then
    // archived.
    static String deliveryLimit() throws Exception {
        final String topic = "share-lim", group = "g-share-lim";
        createTopic(topic, 1);
        earliest(group);
        produce(topic, 1, 0, 1);
        List<Short> counts = new ArrayList<>();
        try (KafkaShareConsumer<String, String> c = consumer(group, topic, "lim")) {
            long deadline = System.currentTimeMillis() + 20000;
            long lastDelivery = System.currentTimeMillis();
            // Until the first delivery, then until 5 s pass without one.
            while (System.currentTimeMillis() < deadline
                   && (counts.isEmpty() || System.currentTimeMillis() - lastDelivery < 5000)) {
                ConsumerRecords<String, String> recs = c.poll(Duration.ofMillis(500));
                for (ConsumerRecord<String, String> r : recs) {
                    counts.add(count(r));
                    lastDelivery = System.currentTimeMillis();
                    c.acknowledge(r, AcknowledgeType.RELEASE);
                }
                if (!recs.isEmpty()) c.commitSync();
            }
        }
        List<Short> want = new ArrayList<>();
        for (short i = 1; i <= DELIVERY_LIMIT; i++) want.add(i);
        expect(counts.equals(want), "delivery counts " + counts + ", expected " + want);
        return "a record released every time was delivered " + counts.size()
            + " times (counts " + counts + "), then no more";
    }

    // The admin client sees share groups: ListGroups filtered by type "share", and
    // ShareGroupDescribe of a group with one live member that owns the topic's 3 partitions.
    static String adminListDescribe() throws Exception {
        final String topic = "share-adm", group = "g-share-adm";
        createTopic(topic, 3);
        try (KafkaShareConsumer<String, String> c = consumer(group, topic, "adm");
             Admin a = admin()) {
            ShareGroupDescription d = null;
            long deadline = System.currentTimeMillis() + 20000;
            while (System.currentTimeMillis() < deadline) {
                c.poll(Duration.ofMillis(300));
                d = a.describeShareGroups(List.of(group)).all().get().get(group);
                if (d.members().size() == 1
                    && d.members().iterator().next().assignment().topicPartitions().size() == 3) {
                    break;
                }
            }
            expect(d != null && d.members().size() == 1, "described " + d);
            expect(d.groupState() == org.apache.kafka.common.GroupState.STABLE,
                   "state " + d.groupState());
            int owned = d.members().iterator().next().assignment().topicPartitions().size();
            expect(owned == 3, "the member owns " + owned + " partitions");
            Set<String> listed = new TreeSet<>();
            for (GroupListing l : a.listGroups(ListGroupsOptions.forShareGroups()).all().get()) {
                listed.add(l.groupId());
                expect(l.type().map(t -> t == org.apache.kafka.common.GroupType.SHARE).orElse(false),
                       l.groupId() + " listed with type " + l.type());
            }
            expect(listed.contains(group), "share groups listed: " + listed);
            return "listed as share groups " + listed + "; " + group + " " + d.groupState()
                + " with 1 member owning " + owned + " partitions";
        }
    }

    interface Check {
        String run() throws Exception;
    }

    public static void main(String[] args) throws Exception {
        Set<String> only = new HashSet<>();
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--bootstrap")) bootstrap = args[++i];
            else if (args[i].equals("--only")) only.addAll(Arrays.asList(args[++i].split(",")));
        }
        LinkedHashMap<String, Check> checks = new LinkedHashMap<>();
        checks.put("exactly_once", ShareProbe::exactlyOnce);
        checks.put("release_redeliver", ShareProbe::releaseRedeliver);
        checks.put("reject_archives", ShareProbe::rejectArchives);
        checks.put("lock_timeout", ShareProbe::lockTimeout);
        checks.put("delivery_limit", ShareProbe::deliveryLimit);
        checks.put("admin_list_describe", ShareProbe::adminListDescribe);
        checks.put("growing_group", ShareProbe::growingGroup);
        int failures = 0;
        for (Map.Entry<String, Check> e : checks.entrySet()) {
            if (!only.isEmpty() && !only.contains(e.getKey())) continue;
            long t0 = System.currentTimeMillis();
            try {
                String what = e.getValue().run();
                System.out.printf("PASS %s: %s (%.1f s)%n", e.getKey(), what,
                                  (System.currentTimeMillis() - t0) / 1000.0);
            } catch (Throwable t) {
                failures++;
                System.out.printf("FAIL %s: %s (%.1f s)%n", e.getKey(), t,
                                  (System.currentTimeMillis() - t0) / 1000.0);
            }
            System.out.flush();
        }
        System.exit(failures);
    }
}
