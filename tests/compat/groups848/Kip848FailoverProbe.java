// A KIP-848 consumer group across a kill -9 of its group coordinator, with Apache Kafka's Java
// KafkaConsumer (group.protocol=consumer) against a Spool cluster of three brokers
// (kip848_failover.py starts it and does the killing).
//
// Three members of one group subscribe to a topic of 6 partitions with replication factor 3,
// commit by hand (commitSync of what each poll returned, after processing it) and record their
// rebalance callbacks. Once Admin shows the group STABLE with each partition owned once, a
// producer (acks=all, idempotent) writes N records with unique keys k<i> (the first --burst at
// once, then ~300/s, so it still writes when the coordinator dies). Once a quarter of them are
// committed the probe notes each member's epoch (groupMetadata().generationId(), the member
// epoch under KIP-848), its assignment and the group epoch, and prints
//   KILL <node id of the group's coordinator>
// The driver kills that broker with SIGKILL, restarts it and writes
//   RESTARTED
// on the probe's stdin. The probe ends once every produced record is committed and the broker
// is back, polls a little longer for late redeliveries, and exits 1 on any of:
//   not stable           the group never showed STABLE with each partition owned once before
//   lost                 a produced (acknowledged) record never delivered
//   never committed      a produced record no successful commitSync covered by the end
//   redelivered_after_commit  a record delivered again after a commitSync covering it returned
//                        (duplicates of records not committed yet are at-least-once, counted only)
//   lost_after_kill      onPartitionsLost on a member after the kill: it was fenced
//   epoch went down      a member's epoch below its value before the kill at any poll after it,
//                        or the group epoch lower afterwards: the group was rebuilt, not reloaded
//   final describe       not type CONSUMER, state STABLE, 3 members, 6 partitions owned once
// commitSync and poll errors are counted and printed, not failures: while the coordinator moves
// the client may surface retriable ones.
//
//   Kip848FailoverProbe --bootstrap HOST:PORT,... [--records N] [--burst N] [--wait-s S]

import java.time.Duration;
import java.util.*;
import java.util.concurrent.*;
import java.util.concurrent.atomic.*;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.serialization.*;

public class Kip848FailoverProbe extends FailoverSupport {
    static final String TOPIC = "kip848-failover", GROUP = "g-kip848-failover";
    static final int PARTITIONS = 6, MEMBERS = 3;
    static final long T0 = System.currentTimeMillis();

    static final Set<String> delivered = ConcurrentHashMap.newKeySet();
    static final Set<String> committed = ConcurrentHashMap.newKeySet();
    static final AtomicInteger deliveries = new AtomicInteger();
    static final AtomicInteger duplicates = new AtomicInteger();
    static final AtomicInteger redeliveredAfterCommit = new AtomicInteger();
    static final AtomicInteger commits = new AtomicInteger();
    static final AtomicInteger pollErrors = new AtomicInteger();
    static final Map<String, AtomicInteger> commitErrors = new ConcurrentSkipListMap<>();
    static final List<String> violations = Collections.synchronizedList(new ArrayList<>());
    static volatile boolean stop = false;
    // 0 until the probe prints KILL; the members compare their epochs from then on.
    static volatile long killedAt = 0;

    static long now() {
        return System.currentTimeMillis() - T0;
    }

    static String parts(Collection<TopicPartition> tps) {
        TreeSet<Integer> s = new TreeSet<>();
        for (TopicPartition tp : tps) s.add(tp.partition());
        return s.toString();
    }

    // One consumer in its own thread. KafkaConsumer is single-threaded, so the poll loop copies
    // what the main thread reads (assignment, epoch) into volatile fields after each poll.
    static final class Member implements ConsumerRebalanceListener, Runnable {
        final String name;
        volatile Set<TopicPartition> assignment = Set.of();
        volatile int epoch = -1;
        volatile String memberId = "";
        volatile int epochAtKill = -1;
        volatile int minEpochAfterKill = Integer.MAX_VALUE;
        // The client's count of heartbeats sent: those after the kill went to the next coordinator.
        volatile double heartbeats = -1, heartbeatsAtKill = -1;
        final AtomicInteger lostAfterKill = new AtomicInteger();
        final AtomicInteger revokedAfterKill = new AtomicInteger();
        final List<String> callbacks = Collections.synchronizedList(new ArrayList<>());
        // Offsets delivered but not committed yet (a failed commitSync is tried again after the
        // next poll), with the keys they cover.
        final Map<TopicPartition, OffsetAndMetadata> pending = new HashMap<>();
        final Map<TopicPartition, List<String>> pendingKeys = new HashMap<>();
        KafkaConsumer<String, String> consumer;

        Member(String name) {
            this.name = name;
        }

        void callback(String what, Collection<TopicPartition> tps) {
            callbacks.add("+" + now() + "ms " + what + " " + parts(tps) + (stop ? " (closing)" : ""));
            if (killedAt > 0 && !stop) {
                if (what.equals("lost")) lostAfterKill.incrementAndGet();
                if (what.equals("revoked")) revokedAfterKill.incrementAndGet();
            }
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> tps) {
            callback("assigned", tps);
        }

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> tps) {
            callback("revoked", tps);
            forget(tps);
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> tps) {
            callback("lost", tps);
            forget(tps);
        }

        // Offsets of partitions this member no longer owns are not its to commit: their records
        // go to the next owner again, as uncommitted ones do.
        void forget(Collection<TopicPartition> tps) {
            for (TopicPartition tp : tps) {
                pending.remove(tp);
                pendingKeys.remove(tp);
            }
        }

        KafkaConsumer<String, String> create() {
            Properties p = new Properties();
            p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            p.put(ConsumerConfig.GROUP_ID_CONFIG, GROUP);
            p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "consumer");
            p.put(ConsumerConfig.CLIENT_ID_CONFIG, name);
            p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
            p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
            p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
            p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
            KafkaConsumer<String, String> c = new KafkaConsumer<>(p);
            c.subscribe(List.of(TOPIC), this);
            return c;
        }

        @Override
        public void run() {
            try {
                consumer = create();
                while (!stop) {
                    ConsumerRecords<String, String> recs;
                    try {
                        recs = consumer.poll(Duration.ofMillis(200));
                    } catch (Exception e) {
                        if (pollErrors.incrementAndGet() <= 10) log(name + " poll: " + e);
                        continue;
                    }
                    assignment = new HashSet<>(consumer.assignment());
                    ConsumerGroupMetadata md = consumer.groupMetadata();
                    epoch = md.generationId();
                    memberId = md.memberId();
                    heartbeats = metric(consumer, "heartbeat-total");
                    if (killedAt > 0) minEpochAfterKill = Math.min(minEpochAfterKill, epoch);
                    for (ConsumerRecord<String, String> r : recs) {
                        deliveries.incrementAndGet();
                        if (!delivered.add(r.key())) duplicates.incrementAndGet();
                        if (committed.contains(r.key())) {
                            redeliveredAfterCommit.incrementAndGet();
                            violations.add(r.key() + " (" + r.partition() + "@" + r.offset() + ", to " + name
                                           + ") delivered again after a commit covering it");
                        }
                        TopicPartition tp = new TopicPartition(r.topic(), r.partition());
                        pending.put(tp, new OffsetAndMetadata(r.offset() + 1));
                        pendingKeys.computeIfAbsent(tp, k -> new ArrayList<>()).add(r.key());
                    }
                    if (pending.isEmpty()) continue;
                    try {
                        consumer.commitSync(new HashMap<>(pending), Duration.ofSeconds(30));
                    } catch (Exception e) {
                        String kind = (e instanceof RetriableException ? "retriable " : "")
                                      + e.getClass().getSimpleName();
                        int seen = commitErrors.computeIfAbsent(kind, k -> new AtomicInteger()).incrementAndGet();
                        if (seen <= 3) log(name + " commitSync at +" + now() + "ms: " + e);
                        continue;
                    }
                    commits.incrementAndGet();
                    for (List<String> keys : pendingKeys.values()) committed.addAll(keys);
                    pending.clear();
                    pendingKeys.clear();
                }
            } catch (Exception e) {
                log(name + ": " + e);
                violations.add(name + " ended with " + e);
            } finally {
                if (consumer != null) {
                    try {
                        consumer.close(CloseOptions.timeout(Duration.ofSeconds(5)));  // not the default 30 s when a request hangs
                    } catch (Exception e) {
                        log(name + " close: " + e);
                    }
                }
            }
        }
    }

    static double metric(KafkaConsumer<?, ?> c, String name) {
        for (Map.Entry<MetricName, ? extends Metric> e : c.metrics().entrySet()) {
            if (e.getKey().name().equals(name) && e.getKey().group().equals("consumer-coordinator-metrics")) {
                return ((Number) e.getValue().metricValue()).doubleValue();
            }
        }
        return -1;
    }

    static ConsumerGroupDescription describe(Admin a) throws Exception {
        return a.describeConsumerGroups(List.of(GROUP)).all().get(30, TimeUnit.SECONDS).get(GROUP);
    }

    // Why the description is not a stable group of MEMBERS owning each partition once, or null.
    static String unstable(ConsumerGroupDescription d) {
        if (d.type() != GroupType.CONSUMER) return "type " + d.type();
        if (d.groupState() != GroupState.STABLE) return "state " + d.groupState();
        if (d.members().size() != MEMBERS) return d.members().size() + " members";
        Map<Integer, Integer> owners = new TreeMap<>();
        for (MemberDescription m : d.members()) {
            for (TopicPartition tp : m.assignment().topicPartitions()) owners.merge(tp.partition(), 1, Integer::sum);
        }
        if (owners.size() != PARTITIONS || owners.values().stream().anyMatch(c -> c != 1)) {
            return "owners by partition " + owners;
        }
        return null;
    }

    // Whether the members' own assignments cover the partitions exactly once, none empty.
    static boolean membersOwnOnce(List<Member> members) {
        Map<Integer, Integer> owners = new HashMap<>();
        for (Member m : members) {
            if (m.assignment.isEmpty()) return false;
            for (TopicPartition tp : m.assignment) owners.merge(tp.partition(), 1, Integer::sum);
        }
        return owners.size() == PARTITIONS && owners.values().stream().allMatch(c -> c == 1);
    }

    static String show(ConsumerGroupDescription d) {
        StringBuilder sb = new StringBuilder("type=" + d.type() + " state=" + d.groupState() + " coordinator="
                                             + d.coordinator().id() + " group_epoch="
                                             + d.groupEpoch().map(String::valueOf).orElse("-"));
        for (MemberDescription m : d.members()) {
            sb.append(" | ").append(m.clientId()).append(" epoch=")
              .append(m.memberEpoch().map(String::valueOf).orElse("-")).append(' ')
              .append(parts(m.assignment().topicPartitions()));
        }
        return sb.toString();
    }

    // The group as Admin shows it once it is stable (and the members agree), or after
    // `seconds` (a hang guard) the last description, which the caller reports.
    static ConsumerGroupDescription awaitStable(Admin a, List<Member> members, int seconds) throws Exception {
        long deadline = System.currentTimeMillis() + seconds * 1000L;
        ConsumerGroupDescription d = null;
        while (true) {
            try {
                d = describe(a);
                if (unstable(d) == null && membersOwnOnce(members)) return d;
            } catch (ExecutionException | TimeoutException e) {
                log("describeConsumerGroups: " + e);
            }
            if (System.currentTimeMillis() >= deadline) return d;
            Thread.sleep(200);
        }
    }

    public static void main(String[] args) throws Exception {
        bootstrap = option(args, "--bootstrap", null);
        int n = option(args, "--records", 6000), waitS = option(args, "--wait-s", 90);
        int burst = option(args, "--burst", 2000);
        createTopic(TOPIC, PARTITIONS);
        watchForRestarted();
        Admin admin = admin();

        List<Member> members = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        for (int m = 0; m < MEMBERS; m++) {
            Member member = new Member("member-" + m);
            members.add(member);
            Thread t = new Thread(member, member.name);
            threads.add(t);
            t.start();
        }
        int failures = 0;
        // The producer starts once the group has settled, so the kill finds it still writing.
        ConsumerGroupDescription before = awaitStable(admin, members, waitS);
        String why = before == null ? "no description" : unstable(before);
        if (why != null || !membersOwnOnce(members)) {
            log("FAIL the group did not become stable before the kill: " + why + " ("
                + (before == null ? "-" : show(before)) + ")");
            failures++;
        }
        final int records = n, first = burst;
        Thread producer = new Thread(() -> produce(TOPIC, PARTITIONS, records, first), "producer");
        producer.start();

        // The ending is a hang guard, not a check: what is missing then is reported.
        long deadline = System.currentTimeMillis() + waitS * 1000L;
        Integer groupEpochBefore = null;
        boolean killed = false;
        long nextProgress = 0;
        while (System.currentTimeMillis() < deadline) {
            if (!killed && committed.size() >= n / 4) {
                before = awaitStable(admin, members, 30);
                if (before == null) {
                    log("FAIL no description of the group to find its coordinator by");
                    failures++;
                    break;
                }
                for (Member m : members) {
                    m.epochAtKill = m.epoch;
                    m.heartbeatsAtKill = m.heartbeats;
                }
                killedAt = System.currentTimeMillis();
                groupEpochBefore = before.groupEpoch().orElse(null);
                log("before the kill: " + show(before));
                for (Member m : members) {
                    log("  " + m.name + " generationId=" + m.epochAtKill + " assigned " + parts(m.assignment));
                }
                log("KILL " + before.coordinator().id() + " (the group coordinator; " + produced.size()
                    + " produced, " + committed.size() + " committed so far)");
                killed = true;
            }
            if (System.currentTimeMillis() >= nextProgress) {
                nextProgress = System.currentTimeMillis() + 2000;
                log("progress +" + now() + "ms: produced " + produced.size() + " delivered " + delivered.size()
                    + " committed " + committed.size() + " duplicates " + duplicates.get() + " commit_errors "
                    + commitErrors);
            }
            if (killed && restarted && producerDone && committed.containsAll(produced)) break;
            Thread.sleep(100);
        }
        // Late redeliveries of committed records would show up now.
        Thread.sleep(3000);
        ConsumerGroupDescription after = awaitStable(admin, members, 60);
        stop = true;
        for (Thread t : threads) t.join(30000);
        producer.join(60000);
        admin.close(Duration.ofSeconds(5));

        Set<String> lost = new TreeSet<>(produced);
        lost.removeAll(delivered);
        Set<String> uncommitted = new TreeSet<>(produced);
        uncommitted.removeAll(committed);
        int commitErrorCount = commitErrors.values().stream().mapToInt(AtomicInteger::get).sum();
        log("counts: produced=" + produced.size() + " consumed=" + (produced.size() - lost.size())
            + " lost=" + lost.size() + " duplicates=" + duplicates.get() + " redelivered_after_commit="
            + redeliveredAfterCommit.get() + " | deliveries=" + deliveries.get() + " committed=" + committed.size()
            + " commits=" + commits.get() + " commit_errors=" + commitErrorCount + " " + commitErrors
            + " poll_errors=" + pollErrors.get() + " produce_failed=" + produceFailed.size()
            + " killed=" + killed + " restarted=" + restarted);
        for (Member m : members) {
            log("epochs: " + m.name + " " + m.memberId + " before=" + m.epochAtKill + " min_after="
                + (m.minEpochAfterKill == Integer.MAX_VALUE ? "-" : String.valueOf(m.minEpochAfterKill))
                + " end=" + m.epoch + " heartbeats_after_kill=" + (int) (m.heartbeats - m.heartbeatsAtKill)
                + " lost_after_kill=" + m.lostAfterKill.get() + " revoked_after_kill="
                + m.revokedAfterKill.get() + " assigned " + parts(m.assignment));
            log("  callbacks: " + String.join("; ", m.callbacks));
        }
        log("after: " + (after == null ? "no description" : show(after)));
        Integer groupEpochAfter = after == null ? null : after.groupEpoch().orElse(null);
        log("group epoch: before=" + groupEpochBefore + " after=" + groupEpochAfter);

        if (!killed) { log("FAIL the coordinator was never killed"); failures++; }
        if (!restarted) { log("FAIL the broker was not restarted"); failures++; }
        if (produced.size() < n / 2) { log("FAIL only " + produced.size() + " of " + n + " produced"); failures++; }
        failures += failIfAny("lost:", lost);
        failures += failIfAny("never committed:", uncommitted);
        failures += failIfAny("violations:", violations);
        // Kafka's coordinator persists each member (ConsumerGroupMemberMetadata,
        // ConsumerGroupCurrentMemberAssignment) and the group epoch in __consumer_offsets; the new
        // coordinator replays them and starts each member's session timer afresh
        // (GroupMetadataManager.onLoaded), and the client answers NOT_COORDINATOR or
        // COORDINATOR_NOT_AVAILABLE by finding the coordinator again, keeping its epoch. So no
        // member is fenced: onPartitionsLost is not called and no epoch goes down. A fenced
        // member rejoins at the current group epoch (no lower), which is why the lost callbacks
        // are checked too; a group rebuilt from nothing starts its epochs over, lower.
        if (killed) {
            for (Member m : members) {
                if (m.lostAfterKill.get() > 0) {
                    log("FAIL " + m.name + " lost its partitions after the kill (fenced): " + m.callbacks);
                    failures++;
                }
                if (m.minEpochAfterKill != Integer.MAX_VALUE && m.minEpochAfterKill < m.epochAtKill) {
                    log("FAIL " + m.name + "'s epoch went from " + m.epochAtKill + " down to " + m.minEpochAfterKill
                        + " after the kill: the group was not reloaded");
                    failures++;
                }
            }
            if (groupEpochBefore != null && groupEpochAfter != null && groupEpochAfter < groupEpochBefore) {
                log("FAIL the group epoch went from " + groupEpochBefore + " down to " + groupEpochAfter);
                failures++;
            }
        }
        String finalWhy = after == null ? "no description" : unstable(after);
        if (finalWhy != null) {
            log("FAIL the group at the end is not a stable consumer group of " + MEMBERS + " owning "
                + PARTITIONS + " partitions once: " + finalWhy);
            failures++;
        }
        if (!produceFailed.isEmpty()) {
            log("note: " + produceFailed.size() + " sends failed, first: " + produceFailed.iterator().next());
        }
        if (failures == 0) {
            log("PASS every produced record consumed, none lost, none delivered again after its commit; "
                + "no member fenced, no epoch down; the group stable with its 3 members");
        }
        System.exit(failures == 0 ? 0 : 1);
    }
}
