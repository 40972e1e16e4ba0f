// KIP-848 consumer groups (group.protocol=consumer) through Apache Kafka's own Java client: each
// subcommand does one thing against a bootstrap server and either prints what it saw or fails
// (exit 1) naming the first violated rule. tests/compat/groups848/kip848_compat.py runs them
// against Spool and, with --target kafka, against Apache Kafka itself (the reference).
//
//   join-leave --bootstrap B --group G --topic T
//       three consumers join; the six partitions of T are owned exactly once; the third
//       consumer leaves and its partitions move to the other two (again exactly once)
//   commit-resume --bootstrap B --group G --topic T
//       two consumers read 600 records and commit; all close; 300 more are written; a new
//       consumer of the group reads exactly those 300 (it resumed from the commits)
//   regex --bootstrap B --group G --prefix P
//       a consumer subscribed to the broker-side regex P-.* owns P-1; P-2 created later is
//       assigned to it too
//   static --bootstrap B --group G --topic T
//       two static members (group.instance.id); the first closes and comes back within the
//       session timeout: both keep the partitions they had
//   hold --bootstrap B --group G --topic T --n N --seconds S [--protocol classic|consumer]
//       N consumers join and commit; prints "stable" once all partitions are owned, then holds
//       for S seconds (for kafka-consumer-groups --describe)

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.SubscriptionPattern;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

public class Kip848Probe {
    static String bootstrap;

    static void fail(String why) {
        System.out.println("FAIL " + why);
        System.out.flush();
        Runtime.getRuntime().halt(1);
    }

    static Map<String, String> args(String[] a) {
        Map<String, String> m = new HashMap<>();
        for (int i = 1; i + 1 < a.length; i += 2) {
            m.put(a[i].replaceFirst("^--", ""), a[i + 1]);
        }
        return m;
    }

    static Admin admin() {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        return Admin.create(p);
    }

    static void createTopic(String name, int partitions) throws Exception {
        try (Admin a = admin()) {
            a.createTopics(List.of(new NewTopic(name, partitions, (short) 1))).all().get();
        }
    }

    static void produce(String topic, int partitions, int perPartition, String tag) throws Exception {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        try (KafkaProducer<String, String> prod = new KafkaProducer<>(p)) {
            for (int part = 0; part < partitions; ++part) {
                for (int i = 0; i < perPartition; ++i) {
                    prod.send(new ProducerRecord<>(topic, part, null, tag + "-" + part + "-" + i));
                }
            }
            prod.flush();
        }
    }

    // One consumer polling in its own thread; the test reads its assignment and what it read.
    static final class Member implements AutoCloseable {
        final String name;
        final KafkaConsumer<String, String> consumer;
        final Thread thread;
        final AtomicBoolean stop = new AtomicBoolean();
        final AtomicBoolean commit = new AtomicBoolean();
        final AtomicLong committedAt = new AtomicLong();
        volatile Set<TopicPartition> assignment = Set.of();
        final List<String> values = java.util.Collections.synchronizedList(new ArrayList<>());
        volatile Throwable error;

        Member(String name, String group, String instanceId, Object subscription) {
            this(name, group, instanceId, subscription, "consumer");
        }

        Member(String name, String group, String instanceId, Object subscription, String protocol) {
            this.name = name;
            Properties p = new Properties();
            p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
            p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol);
            p.put(ConsumerConfig.CLIENT_ID_CONFIG, name);
            p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
            p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
            p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
            p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
            if (instanceId != null) {
                p.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, instanceId);
            }
            consumer = new KafkaConsumer<>(p);
            if (subscription instanceof SubscriptionPattern sp) {
                consumer.subscribe(sp);
            } else {
                @SuppressWarnings("unchecked")
                Collection<String> topics = (Collection<String>) subscription;
                consumer.subscribe(topics);
            }
            thread = new Thread(this::loop, name);
            thread.start();
        }

        void loop() {
            try {
                while (!stop.get()) {
                    ConsumerRecords<String, String> recs = consumer.poll(Duration.ofMillis(200));
                    for (ConsumerRecord<String, String> r : recs) {
                        values.add(r.value());
                    }
                    assignment = new HashSet<>(consumer.assignment());
                    if (commit.getAndSet(false)) {
                        consumer.commitSync(Duration.ofSeconds(30));
                        committedAt.incrementAndGet();
                    }
                }
                consumer.close(Duration.ofSeconds(30));
            } catch (Throwable t) {
                error = t;
            }
        }

        @Override
        public void close() throws Exception {
            stop.set(true);
            thread.join(60000);
            if (error != null) {
                fail(name + ": " + error);
            }
        }
    }

    static Set<TopicPartition> partitions(String topic, int n) {
        Set<TopicPartition> s = new HashSet<>();
        for (int i = 0; i < n; ++i) {
            s.add(new TopicPartition(topic, i));
        }
        return s;
    }

    // Waits until the members' assignments cover `all` exactly once and none is empty.
    static void awaitExactlyOnce(List<Member> members, Set<TopicPartition> all, String what)
        throws Exception {
        long deadline = System.currentTimeMillis() + 90000;
        String last = "";
        while (System.currentTimeMillis() < deadline) {
            Map<TopicPartition, Integer> owners = new HashMap<>();
            boolean someEmpty = false;
            StringBuilder sb = new StringBuilder();
            for (Member m : members) {
                if (m.error != null) {
                    fail(m.name + ": " + m.error);
                }
                Set<TopicPartition> a = m.assignment;
                someEmpty |= a.isEmpty();
                for (TopicPartition tp : a) {
                    owners.merge(tp, 1, Integer::sum);
                }
                sb.append(m.name).append('=').append(new TreeSet<>(names(a))).append(' ');
            }
            last = sb.toString();
            boolean once = owners.keySet().equals(all) && owners.values().stream().allMatch(c -> c == 1);
            if (once && !someEmpty) {
                System.out.println(what + ": " + last.trim());
                return;
            }
            Thread.sleep(100);
        }
        fail(what + ": partitions not owned exactly once within 90 s: " + last);
    }

    static List<String> names(Set<TopicPartition> s) {
        List<String> out = new ArrayList<>();
        for (TopicPartition tp : s) {
            out.add(tp.toString());
        }
        return out;
    }

    static void describe(String group, int members) throws Exception {
        try (Admin a = admin()) {
            ConsumerGroupDescription d =
                a.describeConsumerGroups(List.of(group)).all().get().get(group);
            if (d.type() != GroupType.CONSUMER) {
                fail("describeConsumerGroups: type " + d.type() + ", expected CONSUMER");
            }
            if (d.members().size() != members) {
                fail("describeConsumerGroups: " + d.members().size() + " members, expected " + members);
            }
            System.out.println("describe: type=" + d.type() + " state=" + d.groupState() +
                               " members=" + d.members().size() + " assignor=" +
                               d.partitionAssignor());
        }
    }

    static void joinLeave(Map<String, String> a) throws Exception {
        String group = a.get("group"), topic = a.get("topic");
        createTopic(topic, 6);
        Set<TopicPartition> all = partitions(topic, 6);
        Member m1 = new Member("c1", group, null, List.of(topic));
        Member m2 = new Member("c2", group, null, List.of(topic));
        Member m3 = new Member("c3", group, null, List.of(topic));
        awaitExactlyOnce(List.of(m1, m2, m3), all, "three members");
        describe(group, 3);
        m3.close();
        awaitExactlyOnce(List.of(m1, m2), all, "after c3 left");
        m1.close();
        m2.close();
        System.out.println("join-leave ok");
    }

    static void commitResume(Map<String, String> a) throws Exception {
        String group = a.get("group"), topic = a.get("topic");
        createTopic(topic, 4);
        produce(topic, 4, 150, "first");
        Member m1 = new Member("r1", group, null, List.of(topic));
        Member m2 = new Member("r2", group, null, List.of(topic));
        long deadline = System.currentTimeMillis() + 90000;
        while (m1.values.size() + m2.values.size() < 600) {
            if (System.currentTimeMillis() > deadline) {
                fail("read " + (m1.values.size() + m2.values.size()) + " of 600 records in 90 s");
            }
            Thread.sleep(100);
        }
        // Both commit at their current member epoch (OffsetCommit v9+ carries it).
        awaitExactlyOnce(List.of(m1, m2), partitions(topic, 4), "before commit");
        for (Member m : List.of(m1, m2)) {
            m.commit.set(true);
        }
        deadline = System.currentTimeMillis() + 60000;
        while (m1.committedAt.get() == 0 || m2.committedAt.get() == 0) {
            if (System.currentTimeMillis() > deadline || m1.error != null || m2.error != null) {
                fail("commit did not complete: " + m1.error + " " + m2.error);
            }
            Thread.sleep(100);
        }
        m1.close();
        m2.close();
        produce(topic, 4, 75, "second");
        Member m3 = new Member("r3", group, null, List.of(topic));
        deadline = System.currentTimeMillis() + 90000;
        while (m3.values.size() < 300 && System.currentTimeMillis() < deadline) {
            Thread.sleep(100);
        }
        Thread.sleep(2000);  // anything beyond the 300 would show up now
        m3.close();
        long first = m3.values.stream().filter(v -> v.startsWith("first")).count();
        if (m3.values.size() != 300 || first != 0) {
            fail("after restart read " + m3.values.size() + " records (" + first +
                 " already committed ones), expected the 300 new ones");
        }
        System.out.println("commit-resume ok: restarted consumer read 300 new records, 0 old");
    }

    static void regex(Map<String, String> a) throws Exception {
        String group = a.get("group"), prefix = a.get("prefix");
        createTopic(prefix + "-1", 2);
        Member m = new Member("x1", group, null, new SubscriptionPattern(prefix + "-.*"));
        awaitExactlyOnce(List.of(m), partitions(prefix + "-1", 2), "regex before");
        createTopic(prefix + "-2", 3);
        Set<TopicPartition> all = partitions(prefix + "-1", 2);
        all.addAll(partitions(prefix + "-2", 3));
        awaitExactlyOnce(List.of(m), all, "regex after create");
        m.close();
        System.out.println("regex ok");
    }

    static void staticMembers(Map<String, String> a) throws Exception {
        String group = a.get("group"), topic = a.get("topic");
        createTopic(topic, 4);
        Set<TopicPartition> all = partitions(topic, 4);
        Member s1 = new Member("s1", group, "instance-1", List.of(topic));
        Member s2 = new Member("s2", group, "instance-2", List.of(topic));
        awaitExactlyOnce(List.of(s1, s2), all, "static before");
        Set<TopicPartition> had1 = s1.assignment, had2 = s2.assignment;
        s1.close();
        Thread.sleep(3000);
        if (!s2.assignment.equals(had2)) {
            fail("s2's assignment changed while s1 was away: " + had2 + " -> " + s2.assignment);
        }
        Member back = new Member("s1b", group, "instance-1", List.of(topic));
        awaitExactlyOnce(List.of(back, s2), all, "static after rejoin");
        if (!back.assignment.equals(had1) || !s2.assignment.equals(had2)) {
            fail("static rejoin moved partitions: s1 " + had1 + " -> " + back.assignment +
                 ", s2 " + had2 + " -> " + s2.assignment);
        }
        back.close();
        s2.close();
        System.out.println("static ok: instance-1 kept " + new TreeSet<>(names(had1)));
    }

    static void hold(Map<String, String> a) throws Exception {
        String group = a.get("group"), topic = a.get("topic");
        int n = Integer.parseInt(a.getOrDefault("n", "2"));
        int seconds = Integer.parseInt(a.getOrDefault("seconds", "60"));
        createTopic(topic, 4);
        produce(topic, 4, 10, "hold");
        List<Member> ms = new ArrayList<>();
        for (int i = 0; i < n; ++i) {
            ms.add(new Member("h" + i, group, null, List.of(topic),
                              a.getOrDefault("protocol", "consumer")));
        }
        awaitExactlyOnce(ms, partitions(topic, 4), "hold");
        for (Member m : ms) {
            m.commit.set(true);
        }
        Thread.sleep(3000);
        System.out.println("stable");
        System.out.flush();
        Thread.sleep(seconds * 1000L);
        for (Member m : ms) {
            m.close();
        }
    }

    public static void main(String[] argv) throws Exception {
        Map<String, String> a = args(argv);
        bootstrap = a.get("bootstrap");
        switch (argv[0]) {
            case "join-leave" -> joinLeave(a);
            case "commit-resume" -> commitResume(a);
            case "regex" -> regex(a);
            case "static" -> staticMembers(a);
            case "hold" -> hold(a);
            default -> fail("unknown subcommand " + argv[0]);
        }
        System.out.flush();
        Runtime.getRuntime().halt(0);
    }
}
