// KIP-932 share groups across a partition leader's and then the group coordinator's kill -9
// (issue #35), with Apache Kafka's Java KafkaShareConsumer in explicit acknowledgement mode against a Spool cluster of three brokers
// (share_failover.py starts it and does the killing).
//
// A producer (acks=all, idempotent) writes N records (the first --burst at once, so the members
// have a backlog when the leader dies, then ~300/s) to a topic of 3 partitions with replication
// factor 3 while three members of one share group consume it: each record delivered is ACCEPTed
// and committed with commitSync. Once a quarter of the records are acknowledged the probe prints
//   KILL <node id of partition 0's leader>
// and keeps consuming; the driver kills that broker with SIGKILL, restarts it and writes
//   RESTARTED
// on the probe's stdin. Then, while the producer still writes, the probe prints
//   KILL <node id of the share group's coordinator>
// (Admin.describeShareGroups: the broker that holds the group's members and assignment) and the
// driver does the same to it. The probe ends once every produced record is acknowledged and both
// brokers are back, then polls a little longer for late redeliveries, and prints the counts:
//   produced       records the producer got acks=all for
//   processed      distinct produced records delivered to a member at least once
//   acked          distinct records whose ACCEPT commitSync reported done (no error)
//   redelivered_after_ack  deliveries of a record after its ACCEPT was reported done
//   lost           produced records never delivered
// and exits 1 unless redelivered_after_ack == 0, lost == 0 and acked covers produced, or the
// records outside acked were never redelivered and the group's lag is 0 (their ACCEPT was in
// flight to a broker as it was killed, and the broker made it durable first).
//
//   ShareFailoverProbe --bootstrap HOST:PORT,... [--records N] [--burst N] [--wait-s S]

import java.time.Duration;
import java.util.*;
import java.util.concurrent.*;
import java.util.concurrent.atomic.*;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.*;

public class ShareFailoverProbe extends FailoverSupport {
    static final String TOPIC = "share-failover", GROUP = "g-share-failover";
    static final int PARTITIONS = 3, MEMBERS = 3;

    static final Set<String> delivered = ConcurrentHashMap.newKeySet();
    static final Set<String> acked = ConcurrentHashMap.newKeySet();
    static final AtomicInteger deliveries = new AtomicInteger();
    static final AtomicInteger redeliveredAfterAck = new AtomicInteger();
    static final AtomicInteger ackFailed = new AtomicInteger();
    static final AtomicInteger commitErrors = new AtomicInteger();
    static final AtomicInteger pollErrors = new AtomicInteger();
    static final List<String> violations = Collections.synchronizedList(new ArrayList<>());
    static volatile boolean stop = false;

    static KafkaShareConsumer<String, String> consumer(String client) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, GROUP);
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, client);
        p.put("share.acknowledgement.mode", "explicit");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        KafkaShareConsumer<String, String> c = new KafkaShareConsumer<>(p);
        c.subscribe(List.of(TOPIC));
        return c;
    }

    static void member(String name) {
        KafkaShareConsumer<String, String> c = null;
        try {
            c = consumer(name);
            while (!stop) {
                ConsumerRecords<String, String> recs;
                try {
                    recs = c.poll(Duration.ofMillis(500));
                } catch (Exception e) {
                    pollErrors.incrementAndGet();
                    log(name + " poll: " + e);
                    continue;
                }
                List<ConsumerRecord<String, String>> batch = new ArrayList<>();
                for (ConsumerRecord<String, String> r : recs) {
                    deliveries.incrementAndGet();
                    delivered.add(r.key());
                    if (acked.contains(r.key())) {
                        redeliveredAfterAck.incrementAndGet();
                        violations.add(r.key() + " (" + r.partition() + "@" + r.offset() + ", delivery "
                                       + r.deliveryCount().orElse((short) -1) + ", to " + name
                                       + ") delivered after its ACCEPT was committed");
                    }
                    c.acknowledge(r, AcknowledgeType.ACCEPT);
                    batch.add(r);
                }
                if (batch.isEmpty()) continue;
                try {
                    Thread.sleep(50);  // "processing": the batch is in flight (acquired) meanwhile
                } catch (InterruptedException e) {
                    return;
                }
                Map<TopicIdPartition, Optional<KafkaException>> result;
                try {
                    result = c.commitSync(Duration.ofSeconds(30));
                } catch (Exception e) {
                    commitErrors.incrementAndGet();
                    log(name + " commitSync: " + e);
                    continue;
                }
                Map<TopicPartition, Optional<KafkaException>> byPartition = new HashMap<>();
                result.forEach((tip, err) -> byPartition.put(tip.topicPartition(), err));
                for (ConsumerRecord<String, String> r : batch) {
                    Optional<KafkaException> err = byPartition.get(new TopicPartition(r.topic(), r.partition()));
                    if (err != null && err.isEmpty()) {
                        if (!acked.add(r.key())) {
                            violations.add(r.key() + " ACCEPTed twice successfully");
                        }
                    } else {
                        if (ackFailed.incrementAndGet() <= 5) {
                            log(name + " ACCEPT of " + r.partition() + "@" + r.offset() + " not done: "
                                + (err == null ? "no result for the partition" : err.get()));
                        }
                    }
                }
            }
        } catch (Exception e) {
            log(name + ": " + e);
        } finally {
            if (c != null) {
                try {
                    c.close(Duration.ofSeconds(5));  // not the default 30 s when a request hangs
                } catch (Exception e) {
                    log(name + " close: " + e);
                }
            }
        }
    }

    // Counts of keys by partition (key k<i> is in partition i % 3).
    static List<Integer> perPartition(Set<String> keys) {
        Integer[] c = {0, 0, 0};
        for (String k : keys) c[Integer.parseInt(k.substring(1)) % PARTITIONS]++;
        return Arrays.asList(c);
    }

    static int leaderOf(int partition) throws Exception {
        try (Admin a = admin()) {
            TopicDescription d = a.describeTopics(List.of(TOPIC)).allTopicNames().get().get(TOPIC);
            return d.partitions().get(partition).leader().id();
        }
    }

    // The group's lag over the topic's partitions (ListShareGroupOffsets): records neither
    // acknowledged nor archived; -1 when the admin call fails (a broker restarting) or a
    // partition's lag is unknown.
    static long groupLag() {
        try (Admin a = admin()) {
            long total = 0;
            for (SharePartitionOffsetInfo o : a.listShareGroupOffsets(
                     Map.of(GROUP, new ListShareGroupOffsetsSpec())).partitionsToOffsetInfo(GROUP)
                     .get(10, TimeUnit.SECONDS).values()) {
                if (o.lag().isEmpty()) return -1;
                total += o.lag().get();
            }
            return total;
        } catch (Exception e) {
            return -1;
        }
    }

    static int coordinatorOf() throws Exception {
        try (Admin a = admin()) {
            return a.describeShareGroups(List.of(GROUP)).all().get().get(GROUP).coordinator().id();
        }
    }

    public static void main(String[] args) throws Exception {
        bootstrap = option(args, "--bootstrap", null);
        int n = option(args, "--records", 3000), waitS = option(args, "--wait-s", 60);
        int burst = option(args, "--burst", 1500);
        createTopic(TOPIC, PARTITIONS);
        watchForRestarted();

        ExecutorService pool = Executors.newFixedThreadPool(MEMBERS + 1);
        List<Future<?>> members = new ArrayList<>();
        for (int m = 0; m < MEMBERS; m++) {
            final String name = "member-" + m;
            members.add(pool.submit(() -> member(name)));
        }
        final int records = n, first = burst;
        Future<?> producer = pool.submit(() -> produce(TOPIC, PARTITIONS, records, first));

        // The ending is a hang guard, not a check: what is missing then is reported as lost.
        long deadline = System.currentTimeMillis() + waitS * 1000L;
        boolean killed = false, coordinatorKilled = false;
        long nextProgress = 0, nextLagCheck = 0;
        while (System.currentTimeMillis() < deadline) {
            if (!killed && acked.size() >= n / 4) {
                int leader = leaderOf(0);
                log("KILL " + leader + " (partition 0's leader; " + produced.size() + " produced, "
                    + acked.size() + " acknowledged so far)");
                killed = true;
            }
            if (killed && restarts.get() == 1 && !coordinatorKilled) {
                int coordinator = coordinatorOf();
                log("KILL " + coordinator + " (the group's coordinator; " + produced.size()
                    + " produced, " + acked.size() + " acknowledged so far)");
                coordinatorKilled = true;
            }
            if (System.currentTimeMillis() >= nextProgress) {
                nextProgress = System.currentTimeMillis() + 2000;
                log("progress: produced " + perPartition(produced) + " delivered " + perPartition(delivered)
                    + " acked " + perPartition(acked) + " ack_failed " + ackFailed.get());
            }
            if (killed && restarts.get() == 2 && producerDone && delivered.containsAll(produced)) {
                if (acked.containsAll(produced)) break;
                // Some ACCEPTs failed and their records have not come back: done if the broker
                // took those ACCEPTs after all (see groupLag).
                if (System.currentTimeMillis() >= nextLagCheck) {
                    nextLagCheck = System.currentTimeMillis() + 2000;
                    if (groupLag() == 0) break;
                }
            }
            Thread.sleep(100);
        }
        // Late redeliveries of acknowledged records would show up now.
        Thread.sleep(3000);
        stop = true;
        for (Future<?> f : members) f.get();
        producer.get();
        pool.shutdown();

        Set<String> lost = new TreeSet<>(produced);
        lost.removeAll(delivered);
        Set<String> unacked = new TreeSet<>(produced);
        unacked.removeAll(acked);
        int processed = 0;
        for (String k : produced) if (delivered.contains(k)) processed++;
        log("counts: produced=" + produced.size() + " processed=" + processed
            + " redelivered_after_ack=" + redeliveredAfterAck.get() + " lost=" + lost.size()
            + " | acked=" + acked.size() + " unacked=" + unacked.size() + " deliveries="
            + deliveries.get() + " ack_failed=" + ackFailed.get() + " commit_errors="
            + commitErrors.get() + " poll_errors=" + pollErrors.get() + " produce_failed="
            + produceFailed.size() + " killed=" + killed + " coordinator_killed="
            + coordinatorKilled + " restarts=" + restarts.get());
        int failures = 0;
        if (!killed) { log("FAIL the leader was never killed"); failures++; }
        if (!coordinatorKilled) { log("FAIL the coordinator was never killed"); failures++; }
        if (restarts.get() != 2) { log("FAIL " + restarts.get() + " of the 2 killed brokers restarted"); failures++; }
        if (produced.size() < n / 2) { log("FAIL only " + produced.size() + " of " + n + " produced"); failures++; }
        failures += failIfAny("violations:", violations);
        failures += failIfAny("lost (by partition " + perPartition(lost) + "):", lost);
        // A record whose ACCEPT failed is redelivered unless the broker took the ACCEPT after
        // all: a request in flight to a broker killed at that moment fails in the client (it
        // reports UnknownServerException for the disconnect) though the broker may have made
        // it durable first; Kafka cannot tell the client either. Such records are fine when
        // the group's lag is 0 at the end: the broker holds every record as acknowledged.
        long lag = unacked.isEmpty() ? 0 : groupLag();
        if (!unacked.isEmpty() && lag == 0) {
            log("note: " + unacked.size() + " ACCEPTs the client saw fail took effect at the broker"
                + " (never redelivered, group lag 0), first: "
                + new ArrayList<>(unacked).subList(0, Math.min(10, unacked.size())));
        } else {
            failures += failIfAny("never acknowledged (group lag " + lag + "):", unacked);
        }
        if (!produceFailed.isEmpty()) {
            log("note: " + produceFailed.size() + " sends failed, first: " + produceFailed.iterator().next());
        }
        if (failures == 0) log("PASS every produced record processed, none lost, none redelivered after its ACCEPT");
        System.exit(failures == 0 ? 0 : 1);
    }
}
