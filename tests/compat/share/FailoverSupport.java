// What the failover probes (ShareFailoverProbe, groups848/Kip848FailoverProbe) share: the topic,
// the producer they kill a broker under, and the driver's RESTARTED line. A probe extends this
// class for its static members; share_failover.run_failover compiles it with the probe.

import java.io.*;
import java.util.*;
import java.util.concurrent.*;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.serialization.*;

public class FailoverSupport {
    static String bootstrap;
    static final Set<String> produced = ConcurrentHashMap.newKeySet();
    static final Set<String> produceFailed = ConcurrentHashMap.newKeySet();
    static volatile boolean producerDone = false, restarted = false;
    static final java.util.concurrent.atomic.AtomicInteger restarts =
        new java.util.concurrent.atomic.AtomicInteger();

    static void log(String s) {
        synchronized (System.out) {
            System.out.println(s);
            System.out.flush();
        }
    }

    static Admin admin() {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        return Admin.create(p);
    }

    // The value after `name` in args, or dflt.
    static String option(String[] args, String name, String dflt) {
        for (int i = 0; i + 1 < args.length; i++) {
            if (args[i].equals(name)) return args[i + 1];
        }
        return dflt;
    }

    static int option(String[] args, String name, int dflt) {
        return Integer.parseInt(option(args, name, String.valueOf(dflt)));
    }

    // Replication factor 3 and min.insync.replicas=2: an acks=all record is on two brokers, so
    // the kill of one cannot take it.
    static void createTopic(String topic, int partitions) throws Exception {
        try (Admin a = admin()) {
            a.createTopics(List.of(new NewTopic(topic, partitions, (short) 3)
                    .configs(Map.of("min.insync.replicas", "2")))).all().get();
        }
    }

    // Sets restarted once the driver writes RESTARTED on stdin; restarts counts them.
    static void watchForRestarted() {
        Thread stdin = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in))) {
                String line;
                while ((line = in.readLine()) != null) {
                    if (line.trim().equals("RESTARTED")) {
                        restarts.incrementAndGet();
                        restarted = true;
                    }
                }
            } catch (IOException ignored) {
            }
        });
        stdin.setDaemon(true);
        stdin.start();
    }

    // n records keyed k<i> to partition i % partitions with acks=all and idempotence; produced
    // gets the acknowledged keys. The first `burst` at once, so the consumers have a backlog when
    // the broker dies, then ~300/s, so the kill lands mid-stream.
    static void produce(String topic, int partitions, int n, int burst) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "60000");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> prod = new KafkaProducer<>(p)) {
            for (int i = 0; i < n; i++) {
                final String key = "k" + i;
                prod.send(new ProducerRecord<>(topic, i % partitions, key, "v" + i), (md, e) -> {
                    if (e == null) produced.add(key);
                    else produceFailed.add(key + ": " + e);
                });
                if (i >= burst && i % 30 == 29) Thread.sleep(100);
            }
            prod.flush();
        } catch (Exception e) {
            log("producer: " + e);
        }
        producerDone = true;
    }

    // A FAIL line with the count and the first ten of keys unless it is empty; 1 if it was not.
    static int failIfAny(String what, Collection<String> keys) {
        if (keys.isEmpty()) return 0;
        List<String> first;
        synchronized (keys) {
            first = new ArrayList<>(keys).subList(0, Math.min(10, keys.size()));
        }
        log("FAIL " + what + " " + keys.size() + ", first: " + first);
        return 1;
    }
}
