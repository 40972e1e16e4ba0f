import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Issue #35's rebalance bench: MEMBERS consumers of one group (threads of this JVM) over a topic of
 * PARTITIONS partitions, with group.protocol classic (the Java client's default assignors) or
 * consumer (KIP-848, the broker's default assignor). Three phases, each timed from its event until
 * the group is settled again: every partition owned by exactly one member, and every member owning
 * at least PARTITIONS / members of them (what the assignors give once they are done):
 *   join   MEMBERS consumers start at once
 *   leave  one of them closes (leaves the group)
 *   add    a new one starts
 * Each phase prints one JSON line: {"protocol", "phase", "seconds", "members"}; a phase that does
 * not settle within --timeout-s prints "seconds": null and "timed_out": true.
 *
 *   java RebalanceBench --bootstrap HOST:PORT --topic T --group G --protocol classic|consumer
 *                       [--members 20] [--partitions 200] [--timeout-s 120]
 */
public class RebalanceBench {
    static final class Member implements Runnable {
        final KafkaConsumer<byte[], byte[]> consumer;
        final String topic;
        final AtomicReference<Set<TopicPartition>> owned = new AtomicReference<>(Set.of());
        volatile boolean stop;
        final Thread thread;

        Member(Properties props, String topic, int id) {
            this.consumer = new KafkaConsumer<>(props);
            this.topic = topic;
            this.thread = new Thread(this, "member-" + id);
        }

        @Override
        public void run() {
            try {
                consumer.subscribe(List.of(topic));
                while (!stop) {
                    consumer.poll(Duration.ofMillis(50));
                    owned.set(Set.copyOf(consumer.assignment()));
                }
            } finally {
                // Gone from the count before the close (which leaves the group) starts.
                owned.set(Set.of());
                consumer.close(Duration.ofSeconds(10));
            }
        }
    }

    public static void main(String[] args) throws Exception {
        BenchOpts o = new BenchOpts(args, "rebalance", 20, 200, 120);
        String bootstrap = o.bootstrap, topic = o.topic, group = o.group;
        String protocol = o.get("protocol", "classic");
        int members = o.members, partitions = o.partitions;
        long timeoutNs = o.timeoutNs;

        Properties ap = new Properties();
        ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(ap)) {
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get();
        } catch (ExecutionException e) {
            if (!(e.getCause() instanceof TopicExistsException)) {
                throw e;
            }
        }

        Properties cp = new Properties();
        cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        cp.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        cp.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol);
        cp.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        cp.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        cp.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "latest");

        List<Member> live = new ArrayList<>();
        int next = 0;
        boolean ok = true;

        long t0 = System.nanoTime();
        for (int i = 0; i < members; i++) {
            live.add(start(cp, topic, next++));
        }
        ok &= report(protocol, "join", live, partitions, t0, timeoutNs);

        Member gone = live.remove(0);
        t0 = System.nanoTime();
        gone.stop = true;
        ok &= report(protocol, "leave", live, partitions, t0, timeoutNs);
        gone.thread.join();

        t0 = System.nanoTime();
        live.add(start(cp, topic, next++));
        ok &= report(protocol, "add", live, partitions, t0, timeoutNs);

        for (Member m : live) {
            m.stop = true;
        }
        for (Member m : live) {
            m.thread.join();
        }
        System.exit(ok ? 0 : 1);
    }

    static Member start(Properties cp, String topic, int id) {
        Properties p = new Properties();
        p.putAll(cp);
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, "member-" + id);
        Member m = new Member(p, topic, id);
        m.thread.start();
        return m;
    }

    // Waits until the group is settled (see the class comment) and prints the phase's line.
    static boolean report(String protocol, String phase, List<Member> live, int partitions, long t0,
                          long timeoutNs) throws InterruptedException {
        int fair = partitions / live.size();
        while (System.nanoTime() - t0 < timeoutNs) {
            if (settled(live, partitions, fair)) {
                double s = (System.nanoTime() - t0) / 1e9;
                System.out.printf("{\"protocol\": \"%s\", \"phase\": \"%s\", \"seconds\": %.3f, "
                    + "\"members\": %d}%n", protocol, phase, s, live.size());
                System.out.flush();
                return true;
            }
            Thread.sleep(5);
        }
        System.out.printf("{\"protocol\": \"%s\", \"phase\": \"%s\", \"seconds\": null, "
            + "\"timed_out\": true, \"members\": %d}%n", protocol, phase, live.size());
        System.out.flush();
        return false;
    }

    static boolean settled(List<Member> live, int partitions, int fair) {
        Map<TopicPartition, Integer> owners = new HashMap<>();
        for (Member m : live) {
            Set<TopicPartition> mine = m.owned.get();
            if (mine.size() < fair) {
                return false;
            }
            for (TopicPartition tp : mine) {
                if (owners.merge(tp, 1, Integer::sum) > 1) {
                    return false;
                }
            }
        }
        return owners.size() == partitions;
    }
}
