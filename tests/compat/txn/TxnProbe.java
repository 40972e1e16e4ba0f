// Transactions as applications use them, through Apache Kafka's own Java client and Kafka
// Streams: each subcommand does one thing against a bootstrap server and either prints what it
// saw or fails (exit 1) naming the first violated rule. tests/compat/txn/txn_compat.py runs them
// against Spool and, with --target kafka, against Apache Kafka itself, which is the reference.
//
//   setup       --bootstrap B [--rf N]
//   txns        --bootstrap B --id ID --txns N --per-txn R --journal F
//                 transactions of R records over tx-a (3 partitions) and tx-b (2); every third
//                 aborted; the journal records each outcome once its call returned
//   check-txns  --bootstrap B --id ID --journal F
//                 read_committed: every committed transaction whole and once, nothing aborted;
//                 read_uncommitted: the aborted records are in the log (so hiding them is work)
//   dirty-read  --bootstrap B
//                 an open transaction's records stay below the last stable offset and out of a
//                 read_committed consumer until the commit, then appear
//   fence       --bootstrap B
//                 a second producer with the same transactional.id fences the first, whose open
//                 transaction is aborted
//   open-txn    --bootstrap B --id ID
//                 begins a transaction, writes 3 records to tx-cli-0, prints "open at <offset>"
//                 and waits (for kafka-transactions to find; the driver kills it)
//   lso         --bootstrap B    prints tx-cli-0's read_committed end offset (its LSO)
//   tv          --bootstrap B --id ID
//                 prints the finalized transaction.version (Admin.describeFeatures, what
//                 kafka-features describe shows), then commits, aborts and commits one record
//                 to tx-tv-0 and prints the producer epoch the coordinator holds
//                 (describeTransactions) after initTransactions and after each end, and the one
//                 tx-tv-0 holds (describeProducers) once each marker is written. KIP-890 part 2
//                 bumps the epoch at every end; transactions v1 keeps it.
//   ctp-input   --bootstrap B --n N
//   ctp-worker  --bootstrap B --group G --txn-id ID [--crash-after K]
//                 consume-transform-produce with sendOffsetsToTransaction; --crash-after halts
//                 the JVM in the middle of transaction K+1 (records sent, nothing committed)
//   ctp-check   --bootstrap B --group G --n N
//                 ctp-out holds every input exactly once; the group committed the whole input
//   streams-input --bootstrap B --n N --keys K
//   streams     --bootstrap B --app-id A --state-dir D --n N --keys K [--max-seconds S]
//               [--slow-ms M]
//                 Kafka Streams with exactly_once_v2 counting st-in by key into st-out; exits 0
//                 once the counts add up to N (the driver may kill -9 it before that)
//   streams-check --bootstrap B --n N --keys K
//                 the last count of each key in st-out equals the input records of that key

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.FinalizedVersionRange;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.state.Stores;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;

public final class TxnProbe {
    static final List<String> TXN_TOPICS = List.of("tx-a", "tx-b");

    private final Map<String, String> opts = new HashMap<>();

    public static void main(String[] args) throws Exception {
        if (args.length == 0) {
            throw new IllegalArgumentException("usage: TxnProbe <subcommand> [--key value]...");
        }
        TxnProbe p = new TxnProbe();
        for (int i = 1; i + 1 < args.length; i += 2) {
            p.opts.put(args[i].replaceFirst("^--", ""), args[i + 1]);
        }
        try {
            switch (args[0]) {
                case "setup" -> p.setup();
                case "txns" -> p.txns();
                case "check-txns" -> p.checkTxns();
                case "dirty-read" -> p.dirtyRead();
                case "fence" -> p.fence();
                case "open-txn" -> p.openTxn();
                case "lso" -> p.lso();
                case "tv" -> p.transactionVersion();
                case "ctp-input" -> p.ctpInput();
                case "ctp-worker" -> p.ctpWorker();
                case "ctp-check" -> p.ctpCheck();
                case "streams-input" -> p.streamsInput();
                case "streams" -> p.streams();
                case "streams-check" -> p.streamsCheck();
                default -> throw new IllegalArgumentException("unknown subcommand " + args[0]);
            }
        } catch (Violation v) {
            System.out.println("VIOLATION " + args[0] + ": " + v.getMessage());
            System.out.flush();
            Runtime.getRuntime().halt(1);
        }
        System.out.flush();
        Runtime.getRuntime().halt(0);  // no lingering client threads
    }

    static final class Violation extends Exception {
        Violation(String m) { super(m); }
    }

    static void require(boolean ok, String what) throws Violation {
        if (!ok) throw new Violation(what);
    }

    String opt(String k) {
        String v = opts.get(k);
        if (v == null) throw new IllegalArgumentException("--" + k + " is required");
        return v;
    }

    int num(String k, int dflt) { return opts.containsKey(k) ? Integer.parseInt(opts.get(k)) : dflt; }

    Properties base() {
        Properties p = new Properties();
        p.put("bootstrap.servers", opt("bootstrap"));
        return p;
    }

    KafkaProducer<String, String> txnProducer(String txnId) {
        return txnProducer(txnId, 20000);
    }

    KafkaProducer<String, String> txnProducer(String txnId, int timeoutMs) {
        Properties p = base();
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, txnId);
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, String.valueOf(timeoutMs));
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        return new KafkaProducer<>(p);
    }

    KafkaConsumer<String, String> consumer(IsolationLevel iso, String group) {
        Properties p = base();
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, iso.toString().toLowerCase());
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        if (group != null) {
            p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
            // A halted worker leaves the group after this, not Kafka's default 45 s.
            p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "6000");
        }
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        return new KafkaConsumer<>(p);
    }

    static List<TopicPartition> partitions(KafkaConsumer<?, ?> c, List<String> topics) {
        List<TopicPartition> out = new ArrayList<>();
        for (String t : topics) {
            c.partitionsFor(t, Duration.ofSeconds(30)).forEach(i -> out.add(new TopicPartition(t, i.partition())));
        }
        return out;
    }

    // Every record of `topics` from the start up to the end offsets the consumer's isolation level
    // gives (the last stable offset for read_committed), within 60 s.
    static List<ConsumerRecord<String, String>> readAll(KafkaConsumer<String, String> c, List<String> topics)
            throws Violation {
        List<TopicPartition> tps = partitions(c, topics);
        c.assign(tps);
        c.seekToBeginning(tps);
        Map<TopicPartition, Long> end = c.endOffsets(tps, Duration.ofSeconds(30));
        List<ConsumerRecord<String, String>> out = new ArrayList<>();
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (true) {
            boolean done = true;
            for (TopicPartition tp : tps) done &= c.position(tp, Duration.ofSeconds(30)) >= end.get(tp);
            if (done) return out;
            require(System.nanoTime() < deadline, "did not reach the end offsets " + end + " in 60 s");
            for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(500))) out.add(r);
        }
    }

    void createTopics(Map<String, Integer> topics) throws Exception {
        short rf = (short) num("rf", 1);
        try (Admin admin = Admin.create(base())) {
            Set<String> existing = admin.listTopics().names().get();
            List<NewTopic> fresh = new ArrayList<>();
            topics.forEach((t, n) -> { if (!existing.contains(t)) fresh.add(new NewTopic(t, n, rf)); });
            admin.createTopics(fresh).all().get();
        }
    }

    void setup() throws Exception {
        Map<String, Integer> topics = new TreeMap<>(Map.of("tx-a", 3, "tx-b", 2, "tx-open", 1, "tx-cli", 1,
                "ctp-in", 3, "ctp-out", 3, "st-in", 3, "st-out", 3, "tx-tv", 1));
        createTopics(topics);
        System.out.println("topics " + topics.keySet());
    }

    void txns() throws Exception {
        String id = opt("id");
        int txns = num("txns", 30), per = num("per-txn", 5);
        Path journal = Path.of(opt("journal"));
        Files.deleteIfExists(journal);
        try (KafkaProducer<String, String> p = txnProducer("probe-" + id)) {
            p.initTransactions();
            for (int t = 0; t < txns; t++) {
                p.beginTransaction();
                for (int j = 0; j < per; j++) {
                    String topic = TXN_TOPICS.get(j % 2);
                    int partition = (t + j) % (topic.equals("tx-a") ? 3 : 2);
                    p.send(new ProducerRecord<>(topic, partition, id + "-" + t, id + ":" + t + ":" + j + ":" + per));
                }
                boolean abort = t % 3 == 2;
                // Flushed first, so an aborted transaction's records are in the log (an abort
                // drops what the producer has not sent yet) and hiding them is the broker's work.
                p.flush();
                if (abort) p.abortTransaction(); else p.commitTransaction();
                Files.writeString(journal, (abort ? "abort " : "commit ") + t + "\n", StandardCharsets.UTF_8,
                        StandardOpenOption.CREATE, StandardOpenOption.APPEND);
            }
        }
        System.out.println("txns " + txns + " of " + per + " records");
    }

    void checkTxns() throws Exception {
        String id = opt("id");
        Set<Integer> committed = new HashSet<>(), aborted = new HashSet<>();
        int per = -1;
        for (String line : Files.readAllLines(Path.of(opt("journal")))) {
            String[] f = line.split(" ");
            (f[0].equals("commit") ? committed : aborted).add(Integer.parseInt(f[1]));
        }
        Map<Integer, Set<Integer>> seen = new TreeMap<>();
        try (KafkaConsumer<String, String> c = consumer(IsolationLevel.READ_COMMITTED, null)) {
            for (ConsumerRecord<String, String> r : readAll(c, TXN_TOPICS)) {
                String[] f = r.value().split(":");
                if (!f[0].equals(id)) continue;
                int t = Integer.parseInt(f[1]), j = Integer.parseInt(f[2]);
                per = Integer.parseInt(f[3]);
                require(!aborted.contains(t), "aborted transaction " + t + " read: " + r);
                require(committed.contains(t), "transaction " + t + " read but never committed: " + r);
                require(seen.computeIfAbsent(t, k -> new HashSet<>()).add(j), "record read twice: " + r);
            }
        }
        for (int t : committed) {
            Set<Integer> got = seen.getOrDefault(t, Set.of());
            require(!got.isEmpty(), "committed transaction " + t + " lost");
            require(got.size() == per, "transaction " + t + " torn: " + got.size() + " of " + per + " records");
        }
        int abortedRecords = 0;
        try (KafkaConsumer<String, String> c = consumer(IsolationLevel.READ_UNCOMMITTED, null)) {
            for (ConsumerRecord<String, String> r : readAll(c, TXN_TOPICS)) {
                String[] f = r.value().split(":");
                if (f[0].equals(id) && aborted.contains(Integer.parseInt(f[1]))) abortedRecords++;
            }
        }
        require(aborted.isEmpty() || abortedRecords > 0, "read_uncommitted saw no aborted record");
        System.out.println("committed " + committed.size() + " transactions whole and once, " + aborted.size()
                + " aborted hidden; read_uncommitted saw " + abortedRecords + " aborted records");
    }

    void dirtyRead() throws Exception {
        TopicPartition tp = new TopicPartition("tx-open", 0);
        try (KafkaProducer<String, String> p = txnProducer("probe-dirty");
             KafkaConsumer<String, String> committed = consumer(IsolationLevel.READ_COMMITTED, null);
             KafkaConsumer<String, String> uncommitted = consumer(IsolationLevel.READ_UNCOMMITTED, null)) {
            p.initTransactions();
            long lsoBefore = committed.endOffsets(List.of(tp)).get(tp);
            committed.assign(List.of(tp));
            committed.seek(tp, lsoBefore);
            p.beginTransaction();
            for (int i = 0; i < 10; i++) p.send(new ProducerRecord<>("tx-open", 0, "k", "open-" + i));
            p.flush();
            long hw = uncommitted.endOffsets(List.of(tp)).get(tp);
            long lso = committed.endOffsets(List.of(tp)).get(tp);
            require(hw >= lsoBefore + 10, "read_uncommitted end offset " + hw + " below " + (lsoBefore + 10));
            require(lso == lsoBefore, "last stable offset moved past an open transaction: " + lsoBefore + " -> " + lso);
            int dirty = 0;
            for (long until = System.nanoTime() + Duration.ofSeconds(2).toNanos(); System.nanoTime() < until; ) {
                dirty += committed.poll(Duration.ofMillis(200)).count();
            }
            require(dirty == 0, "read_committed read " + dirty + " records of an open transaction");
            p.commitTransaction();
            int read = 0;
            for (long until = System.nanoTime() + Duration.ofSeconds(30).toNanos(); read < 10 && System.nanoTime() < until; ) {
                read += committed.poll(Duration.ofMillis(200)).count();
            }
            require(read == 10, "after the commit read_committed read " + read + " of 10");
            long lsoAfter = committed.endOffsets(List.of(tp)).get(tp);
            require(lsoAfter >= hw + 1, "last stable offset " + lsoAfter + " after the commit, end " + hw + " + marker");
            System.out.println("open transaction hidden (LSO " + lso + ", end " + hw + "), visible after commit (LSO " + lsoAfter + ")");
        }
    }

    void fence() throws Exception {
        KafkaProducer<String, String> zombie = txnProducer("probe-fence");
        zombie.initTransactions();
        zombie.beginTransaction();
        zombie.send(new ProducerRecord<>("tx-open", 0, "zombie", "zombie")).get();
        try (KafkaProducer<String, String> fresh = txnProducer("probe-fence")) {
            fresh.initTransactions();  // aborts the zombie's open transaction, bumps the epoch
            fresh.beginTransaction();
            fresh.send(new ProducerRecord<>("tx-open", 0, "fresh", "fresh"));
            fresh.commitTransaction();
        }
        String outcome;
        try {
            zombie.send(new ProducerRecord<>("tx-open", 0, "zombie", "zombie-2")).get();
            zombie.commitTransaction();
            outcome = "committed";
        } catch (ProducerFencedException | InvalidProducerEpochException e) {
            outcome = e.getClass().getSimpleName();
        } catch (ExecutionException | KafkaException e) {
            Throwable c = e instanceof ExecutionException ? e.getCause() : e;
            outcome = c.getClass().getSimpleName();
        }
        zombie.close(Duration.ZERO);
        require(outcome.equals("ProducerFencedException") || outcome.equals("InvalidProducerEpochException"),
                "the fenced producer's commit ended with " + outcome);
        int zombies = 0, fresh = 0;
        try (KafkaConsumer<String, String> c = consumer(IsolationLevel.READ_COMMITTED, null)) {
            for (ConsumerRecord<String, String> r : readAll(c, List.of("tx-open"))) {
                if (r.key().equals("zombie")) zombies++;
                if (r.key().equals("fresh")) fresh++;
            }
        }
        require(zombies == 0, "read_committed read " + zombies + " records of the fenced producer");
        require(fresh == 1, "the new producer's committed record read " + fresh + " times");
        System.out.println("zombie fenced with " + outcome + "; its records hidden, the new producer's visible");
    }

    void transactionVersion() throws Exception {
        String id = opt("id");
        TopicPartition tp = new TopicPartition("tx-tv", 0);
        try (Admin admin = Admin.create(base()); KafkaProducer<String, String> p = txnProducer(id)) {
            FinalizedVersionRange level = admin.describeFeatures().featureMetadata().get()
                    .finalizedFeatures().get("transaction.version");
            System.out.println("finalized transaction.version " + (level == null ? 0 : level.maxVersionLevel()));
            p.initTransactions();
            List<Short> coordinator = new ArrayList<>(), partition = new ArrayList<>();
            coordinator.add(coordinatorEpoch(admin, id));
            for (int t = 0; t < 3; t++) {
                p.beginTransaction();
                p.send(new ProducerRecord<>(tp.topic(), tp.partition(), id, "tv-" + t)).get();
                if (t == 1) p.abortTransaction(); else p.commitTransaction();
                coordinator.add(coordinatorEpoch(admin, id));
                partition.add(partitionEpoch(admin, tp));
            }
            System.out.println("coordinator epochs " + coordinator);
            System.out.println("partition epochs " + partition);
        }
    }

    static short coordinatorEpoch(Admin admin, String id) throws Exception {
        return (short) admin.describeTransactions(List.of(id)).description(id).get().producerEpoch();
    }

    // The epoch of tx-tv-0's one producer once its marker is written (no transaction open there).
    static short partitionEpoch(Admin admin, TopicPartition tp) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (true) {
            List<ProducerState> states = admin.describeProducers(List.of(tp)).partitionResult(tp).get().activeProducers();
            require(states.size() == 1, tp + " has " + states.size() + " active producers: " + states);
            ProducerState s = states.get(0);
            if (s.currentTransactionStartOffset().isEmpty()) return (short) s.producerEpoch();
            require(System.nanoTime() < deadline, tp + " kept a transaction open for 30 s: " + s);
            Thread.sleep(100);
        }
    }

    void openTxn() throws Exception {
        // A minute: within the check only kafka-transactions abort can end it.
        KafkaProducer<String, String> p = txnProducer(opt("id"), 60000);
        p.initTransactions();
        p.beginTransaction();
        long first = p.send(new ProducerRecord<>("tx-cli", 0, "k", "open-0")).get().offset();
        p.send(new ProducerRecord<>("tx-cli", 0, "k", "open-1"));
        p.send(new ProducerRecord<>("tx-cli", 0, "k", "open-2"));
        p.flush();
        System.out.println("open at " + first);
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }

    void lso() throws Exception {
        TopicPartition tp = new TopicPartition("tx-cli", 0);
        try (KafkaConsumer<String, String> c = consumer(IsolationLevel.READ_COMMITTED, null)) {
            System.out.println("lso " + c.endOffsets(List.of(tp)).get(tp));
        }
    }

    void ctpInput() throws Exception {
        int n = num("n", 1000);
        Properties p = base();
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> prod = new KafkaProducer<>(p)) {
            for (int i = 0; i < n; i++) prod.send(new ProducerRecord<>("ctp-in", i % 3, "k" + i, "in-" + i));
            prod.flush();
        }
        System.out.println("ctp-in " + n);
    }

    void ctpWorker() throws Exception {
        int crashAfter = num("crash-after", -1);
        int txns = 0, moved = 0, idle = 0;
        try (KafkaConsumer<String, String> c = consumer(IsolationLevel.READ_COMMITTED, opt("group"));
             KafkaProducer<String, String> p = txnProducer(opt("txn-id"))) {
            p.initTransactions();
            c.subscribe(List.of("ctp-in"));
            while (idle < 10) {
                ConsumerRecords<String, String> rs = c.poll(Duration.ofMillis(500));
                if (rs.isEmpty()) {
                    idle = c.assignment().isEmpty() ? 0 : idle + 1;
                    continue;
                }
                idle = 0;
                p.beginTransaction();
                Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
                for (ConsumerRecord<String, String> r : rs) {
                    p.send(new ProducerRecord<>("ctp-out", r.partition(), r.key(), "out-" + r.value()));
                    offsets.put(new TopicPartition(r.topic(), r.partition()), new OffsetAndMetadata(r.offset() + 1));
                }
                if (txns == crashAfter) {
                    p.flush();
                    System.out.println("halting inside transaction " + (txns + 1) + " after " + moved + " records");
                    System.out.flush();
                    Runtime.getRuntime().halt(3);
                }
                p.sendOffsetsToTransaction(offsets, c.groupMetadata());
                p.commitTransaction();
                txns++;
                moved += rs.count();
            }
        }
        System.out.println("moved " + moved + " records in " + txns + " transactions");
    }

    void ctpCheck() throws Exception {
        int n = num("n", 1000);
        Map<String, Integer> count = new HashMap<>();
        try (KafkaConsumer<String, String> c = consumer(IsolationLevel.READ_COMMITTED, null)) {
            for (ConsumerRecord<String, String> r : readAll(c, List.of("ctp-out"))) count.merge(r.value(), 1, Integer::sum);
        }
        for (int i = 0; i < n; i++) {
            int k = count.getOrDefault("out-in-" + i, 0);
            require(k == 1, "input in-" + i + " is in ctp-out " + k + " times");
        }
        require(count.size() == n, "ctp-out holds " + count.size() + " distinct records for " + n + " inputs");
        long committedSum = 0;
        try (Admin admin = Admin.create(base())) {
            for (var e : admin.listConsumerGroupOffsets(opt("group")).partitionsToOffsetAndMetadata().get().entrySet()) {
                committedSum += e.getValue().offset();
            }
            Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
            for (int i = 0; i < 3; i++) latest.put(new TopicPartition("ctp-in", i), OffsetSpec.latest());
            long end = 0;
            for (var e : admin.listOffsets(latest).all().get().values()) end += e.offset();
            require(committedSum == end, "the group committed " + committedSum + " of " + end + " input offsets");
        }
        System.out.println("ctp-out holds each of " + n + " inputs once; the group committed all " + committedSum + " offsets");
    }

    void streamsInput() throws Exception {
        int n = num("n", 1000), keys = num("keys", 10);
        Properties p = base();
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> prod = new KafkaProducer<>(p)) {
            for (int i = 0; i < n; i++) prod.send(new ProducerRecord<>("st-in", "key-" + (i % keys), "v" + i));
            prod.flush();
        }
        System.out.println("st-in " + n + " over " + keys + " keys");
    }

    // The last count per key in st-out (read_committed), and how many records that took.
    Map<String, Long> lastCounts() throws Violation {
        Properties p = base();
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, LongDeserializer.class.getName());
        Map<String, Long> last = new TreeMap<>();
        try (KafkaConsumer<String, Long> c = new KafkaConsumer<>(p)) {
            List<TopicPartition> tps = new ArrayList<>();
            c.partitionsFor("st-out", Duration.ofSeconds(30)).forEach(i -> tps.add(new TopicPartition("st-out", i.partition())));
            c.assign(tps);
            c.seekToBeginning(tps);
            Map<TopicPartition, Long> end = c.endOffsets(tps);
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (true) {
                boolean done = true;
                for (TopicPartition tp : tps) done &= c.position(tp) >= end.get(tp);
                if (done) break;
                require(System.nanoTime() < deadline, "st-out not read to its end in 60 s");
                for (ConsumerRecord<String, Long> r : c.poll(Duration.ofMillis(500))) last.put(r.key(), r.value());
            }
        }
        return last;
    }

    void streams() throws Exception {
        int n = num("n", 1000), keys = num("keys", 10), maxSeconds = num("max-seconds", 120);
        Properties p = base();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, opt("app-id"));
        p.put(StreamsConfig.STATE_DIR_CONFIG, opt("state-dir"));
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, "200");
        p.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, num("rf", 1));
        p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG), 6000);
        final int slowMs = num("slow-ms", 0);
        StreamsBuilder b = new StreamsBuilder();
        b.stream("st-in", Consumed.with(Serdes.String(), Serdes.String()))
                // --slow-ms: time per record, so that a kill -9 lands in the middle of the input.
                .peek((k, v) -> { if (slowMs > 0) { try { Thread.sleep(slowMs); } catch (InterruptedException e) { Thread.currentThread().interrupt(); } } })
                .groupByKey(Grouped.with(Serdes.String(), Serdes.String()))
                .count(Materialized.<String, Long>as(Stores.inMemoryKeyValueStore("counts")))
                .toStream()
                .to("st-out", Produced.with(Serdes.String(), Serdes.Long()));
        KafkaStreams app = new KafkaStreams(b.build(), p);
        app.start();
        long deadline = System.nanoTime() + Duration.ofSeconds(maxSeconds).toNanos();
        long total = 0;
        while (System.nanoTime() < deadline) {
            Thread.sleep(1000);
            require(app.state() != KafkaStreams.State.ERROR, "the Streams application failed");
            total = lastCounts().values().stream().mapToLong(Long::longValue).sum();
            System.out.println("counted " + total + " of " + n);
            System.out.flush();
            if (total >= n) break;
        }
        app.close(Duration.ofSeconds(30));
        require(total == n, "counts add up to " + total + " of " + n + " after " + maxSeconds + " s");
        System.out.println("streams counted " + n + " over " + keys + " keys");
    }

    void streamsCheck() throws Exception {
        int n = num("n", 1000), keys = num("keys", 10);
        Map<String, Long> last = lastCounts();
        for (int k = 0; k < keys; k++) {
            long expected = n / keys + (k < n % keys ? 1 : 0);
            Long got = last.get("key-" + k);
            require(got != null && got == expected, "key-" + k + " counted " + got + ", input has " + expected);
        }
        System.out.println("every key counted exactly its " + n + " inputs: " + last);
    }
}
