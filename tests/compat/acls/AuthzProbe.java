// The authorization matrix's probe (tests/compat/acls/authz_matrix.py): Kafka 4.x client jars only,
// compiled by the driver at test time (javac -cp 'KAFKA/libs/*').
//
//   java AuthzProbe setup --admin HOST:PORT --plan PLAN
//       as the admin (PLAINTEXT, a super user): creates the plan's topics, writes one record to
//       each, commits an offset for each group so that the groups exist.
//       With a "hang-txn" line it also leaves that transaction open (sent, never ended).
//   java AuthzProbe probe --sasl HOST:PORT [--admin HOST:PORT] --plan PLAN --out CELLS
//       for each principal of the plan, logged in over SASL_PLAINTEXT/PLAIN with its password,
//       runs every operation against every resource and writes one line per cell:
//       "principal api resource -> OUTCOME", OUTCOME being OK, LISTED/HIDDEN (listings) or the
//       Kafka error name (Errors.forException). Destructive cells (DeleteTopics, DeleteGroups,
//       OffsetDelete) run last, principal after principal, in the same order on every target.
//       Before them, with --admin, transaction.version goes down to 1 and every principal's
//       transactions run again (AddPartitionsToTxn, AddOffsetsToTxn, EndTxn v4).
//
// PLAN: a text file of lines "principal NAME PASSWORD", "topic NAME", "missing-topic NAME",
// "group NAME", "open-topic NAME" (the topic the group cells commit on), "txn-id NAME" (the
// transactional ids probed), "txn-flow PRINCIPAL TXN-ID" (the id a principal's transactions use),
// "hang-txn TXN-ID TOPIC..." (setup leaves this id's transaction open on these topics: what
// DescribeTransactions shows, filtered), "abort-topic NAME" (the Admin.abortTransaction cells).
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.time.Duration;
import java.util.*;
import java.util.concurrent.*;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.*;
import org.apache.kafka.common.acl.*;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.resource.*;
import org.apache.kafka.common.serialization.*;

public class AuthzProbe {
    // No cell waits this long when the broker answers (an unauthorized one fails at once); the
    // margin is for a loaded machine (a full ctest run), where a tight bound could turn a slow
    // answer into a REQUEST_TIMED_OUT cell.
    static final int TIMEOUT_MS = 10000;
    static List<String[]> principals = new ArrayList<>();
    static List<String> topics = new ArrayList<>(), missing = new ArrayList<>(), groups = new ArrayList<>();
    static String openTopic;
    static List<String> txnIds = new ArrayList<>(), abortTopics = new ArrayList<>(), hangTopics = new ArrayList<>();
    static Map<String, String> txnFlow = new HashMap<>();
    static String hangTxn;
    static PrintWriter out;

    public static void main(String[] args) throws Exception {
        String mode = args[0], admin = null, sasl = null, plan = null, outPath = null;
        for (int i = 1; i < args.length; i += 2) {
            switch (args[i]) {
                case "--admin" -> admin = args[i + 1];
                case "--sasl" -> sasl = args[i + 1];
                case "--plan" -> plan = args[i + 1];
                case "--out" -> outPath = args[i + 1];
                default -> throw new IllegalArgumentException(args[i]);
            }
        }
        for (String line : Files.readAllLines(Paths.get(plan))) {
            String[] f = line.trim().split("\\s+");
            if (f.length < 2 || f[0].startsWith("#")) continue;
            switch (f[0]) {
                case "principal" -> principals.add(new String[] {f[1], f[2]});
                case "topic" -> topics.add(f[1]);
                case "missing-topic" -> missing.add(f[1]);
                case "group" -> groups.add(f[1]);
                case "open-topic" -> openTopic = f[1];
                case "txn-id" -> txnIds.add(f[1]);
                case "txn-flow" -> txnFlow.put(f[1], f[2]);
                case "abort-topic" -> abortTopics.add(f[1]);
                case "hang-txn" -> {
                    hangTxn = f[1];
                    hangTopics.addAll(Arrays.asList(f).subList(2, f.length));
                }
                default -> throw new IllegalArgumentException(line);
            }
        }
        if (mode.equals("setup")) setup(admin);
        else probe(sasl, admin, outPath);
        System.exit(0);
    }

    static Properties common(String bootstrap) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("request.timeout.ms", String.valueOf(TIMEOUT_MS));
        p.put("default.api.timeout.ms", String.valueOf(TIMEOUT_MS));
        p.put("retry.backoff.ms", "50");
        p.put("reconnect.backoff.ms", "50");
        p.put("reconnect.backoff.max.ms", "500");
        return p;
    }

    static Properties sasl(String bootstrap, String user, String password) {
        Properties p = common(bootstrap);
        p.put("security.protocol", "SASL_PLAINTEXT");
        p.put("sasl.mechanism", "PLAIN");
        p.put("sasl.jaas.config", "org.apache.kafka.common.security.plain.PlainLoginModule required "
                + "username=\"" + user + "\" password=\"" + password + "\";");
        return p;
    }

    static KafkaProducer<String, String> producer(Properties base, boolean idempotent) {
        Properties p = new Properties();
        p.putAll(base);
        p.remove("default.api.timeout.ms");
        p.put("enable.idempotence", String.valueOf(idempotent));
        p.put("acks", idempotent ? "all" : "1");
        p.put("retries", base.getProperty("retries", idempotent ? "3" : "0"));
        p.put("max.block.ms", String.valueOf(TIMEOUT_MS));
        p.put("delivery.timeout.ms", String.valueOf(Integer.parseInt(p.getProperty("request.timeout.ms")) + 1000));
        p.put("linger.ms", "0");
        p.put("allow.auto.create.topics", "false");
        return new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
    }

    // A transactional producer (transactional.id ID); transaction.timeout.ms long enough that no
    // transaction of the run times out (the setup's open one must stay open to the end).
    static KafkaProducer<String, String> txnProducer(Properties base, String id) {
        Properties p = new Properties();
        p.putAll(base);
        p.remove("default.api.timeout.ms");
        p.put("transactional.id", id);
        p.put("transaction.timeout.ms", "900000");
        p.put("enable.idempotence", "true");
        p.put("acks", "all");
        p.put("max.block.ms", base.getProperty("max.block.ms", String.valueOf(TIMEOUT_MS)));
        p.put("delivery.timeout.ms", String.valueOf(Integer.parseInt(p.getProperty("request.timeout.ms")) + 1000));
        p.put("linger.ms", "0");
        p.put("allow.auto.create.topics", "false");
        return new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
    }

    static KafkaConsumer<String, String> consumer(Properties base, String group) {
        Properties p = new Properties();
        p.putAll(base);
        if (group != null) p.put("group.id", group);
        p.put("enable.auto.commit", "false");
        p.put("auto.offset.reset", "earliest");
        p.put("allow.auto.create.topics", "false");
        return new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer());
    }

    static void setup(String bootstrap) throws Exception {
        Properties base = common(bootstrap);
        base.put("default.api.timeout.ms", "30000");
        base.put("request.timeout.ms", "30000");
        try (Admin a = Admin.create(base)) {
            List<NewTopic> create = new ArrayList<>();
            for (String t : topics) create.add(new NewTopic(t, 1, (short) 1));
            a.createTopics(create).all().get();
            // Wait until every topic has a leader.
            for (int i = 0; i < 100; i++) {
                try {
                    Map<String, TopicDescription> d = a.describeTopics(topics).allTopicNames().get();
                    if (d.values().stream().allMatch(x -> x.partitions().get(0).leader() != null)) break;
                } catch (ExecutionException e) { /* not yet */ }
                Thread.sleep(100);
            }
        }
        Properties pp = common(bootstrap);
        pp.put("max.block.ms", "30000");
        pp.put("request.timeout.ms", "30000");
        pp.put("retries", "20");  // a new topic's leader may still be moving (NOT_LEADER_OR_FOLLOWER)
        try (KafkaProducer<String, String> p = producer(pp, false)) {
            for (String t : topics) p.send(new ProducerRecord<>(t, "k", "v")).get();
        }
        for (String g : groups) {
            try (KafkaConsumer<String, String> c = consumer(pp, g)) {
                TopicPartition tp = new TopicPartition(openTopic, 0);
                c.assign(List.of(tp));
                c.commitSync(Map.of(tp, new OffsetAndMetadata(1)), Duration.ofSeconds(30));
            }
        }
        if (hangTxn != null) {
            // An open transaction: sent, never ended (close(ZERO) skips the abort of a graceful
            // close). The first InitProducerId waits for the transaction state topic's creation.
            Properties tp = new Properties();
            tp.putAll(pp);
            tp.put("max.block.ms", "120000");
            KafkaProducer<String, String> p = txnProducer(tp, hangTxn);
            p.initTransactions();
            p.beginTransaction();
            for (String t : hangTopics) p.send(new ProducerRecord<>(t, "k", "open")).get();
            p.flush();
            p.close(Duration.ZERO);
        }
        System.out.println("setup done: " + topics.size() + " topics, " + groups.size() + " groups");
    }

    interface Op { void run() throws Exception; }

    static String outcome(Op op) {
        try {
            op.run();
            return "OK";
        } catch (Throwable e) {
            Throwable c = e;
            while ((c instanceof ExecutionException || c instanceof CompletionException
                    || (c instanceof KafkaException && !(c instanceof org.apache.kafka.common.errors.ApiException) && c.getCause() != null))
                    && c.getCause() != null) c = c.getCause();
            Errors err = Errors.forException(c);
            if (err == Errors.UNKNOWN_SERVER_ERROR && !(c instanceof org.apache.kafka.common.errors.UnknownServerException))
                return "EXCEPTION:" + c.getClass().getSimpleName();
            return err.name();
        }
    }

    static void cell(String who, String api, String resource, String result) {
        out.println(who + " " + api + " " + resource + " -> " + result);
        out.flush();
    }

    static void cell(String who, String api, String resource, Op op) {
        cell(who, api, resource, outcome(op));
    }

    // The transactional cells of one principal, in an order every target runs alike (each id's
    // state, which DescribeTransactions and ListTransactions show, is what the cells of the
    // principals before left).
    static void transactions(String who, Properties base, Admin a) {
        // InitProducerId with a transactional id (FindCoordinator TRANSACTION first).
        for (String id : txnIds) {
            cell(who, "InitProducerId", "txn:" + id, () -> {
                KafkaProducer<String, String> p = txnProducer(base, id);
                try { p.initTransactions(); } finally { p.close(Duration.ofSeconds(5)); }
            });
        }
        flow(who, base, "InitProducerId", "TxnProduce", "TxnOffsetCommit", "EndTxn");
        // DescribeTransactions (FindCoordinator TRANSACTION first): the open transaction's
        // partitions are shown only for topics the principal may Describe.
        List<String> ids = new ArrayList<>(txnIds);
        if (hangTxn != null) ids.add(hangTxn);
        for (String id : ids) {
            String[] shown = new String[1];
            String o = outcome(() -> {
                TransactionDescription d = a.describeTransactions(List.of(id)).description(id).get();
                if (!id.equals(hangTxn)) return;
                TreeSet<String> ts = new TreeSet<>();
                d.topicPartitions().forEach(tp -> ts.add(tp.topic()));
                shown[0] = d.state() + " topics=" + (ts.isEmpty() ? "-" : String.join(",", ts));
            });
            cell(who, "DescribeTransactions", "txn:" + id, o.equals("OK") && shown[0] != null ? "OK " + shown[0] : o);
        }
        // ListTransactions: every broker's, filtered to the ids the principal may Describe.
        Set<String> listed = new HashSet<>();
        String lt = outcome(() -> a.listTransactions().all().get().forEach(x -> listed.add(x.transactionalId())));
        cell(who, "ListTransactions", "-", lt);
        for (String id : ids)
            cell(who, "ListTransactions", "txn:" + id, lt.equals("OK") ? (listed.contains(id) ? "LISTED" : "HIDDEN") : lt);
        // DescribeProducers (to the partition's leader, after a Metadata lookup).
        for (String t : topics)
            cell(who, "DescribeProducers", "topic:" + t,
                    () -> a.describeProducers(List.of(new TopicPartition(t, 0))).all().get());
        // Admin.abortTransaction: WriteTxnMarkers to the partition's leader (after a Metadata
        // lookup), an abort marker for a producer id no one uses.
        for (String t : abortTopics)
            cell(who, "AbortTransaction", "topic:" + t, () -> a.abortTransaction(
                    new AbortTransactionSpec(new TopicPartition(t, 0), 987654321L, (short) 0, 0)).all().get());
    }

    // Transactions under the principal's flow id: one per topic (a record sent in it, then commit,
    // or abort when the send failed), one per group (offsets sent to it, then commit or abort).
    // Under transaction.version 2 the producer adds the partitions through Produce v12 and
    // TxnOffsetCommit v5; under 1 through AddPartitionsToTxn and AddOffsetsToTxn. The cells are
    // named after the APIs given.
    static void flow(String who, Properties base, String init, String produce, String offsets, String end) {
        String flow = txnFlow.get(who);
        KafkaProducer<String, String> fp = txnProducer(base, flow);
        try {
            String initOutcome = outcome(fp::initTransactions);
            cell(who, init, "flow", initOutcome);
            for (String t : topics) {
                String r = "topic:" + t;
                if (!initOutcome.equals("OK")) {
                    cell(who, produce, r, initOutcome);
                    cell(who, end, r, initOutcome);
                    continue;
                }
                String sent = outcome(() -> {
                    fp.beginTransaction();
                    fp.send(new ProducerRecord<>(t, "k", who)).get(TIMEOUT_MS + 2000, TimeUnit.MILLISECONDS);
                });
                cell(who, produce, r, sent);
                cell(who, end, r, sent.equals("OK") ? outcome(fp::commitTransaction) : "ABORT:" + outcome(fp::abortTransaction));
            }
            TopicPartition open = new TopicPartition(openTopic, 0);
            for (String g : groups) {
                String r = "group:" + g;
                if (!initOutcome.equals("OK")) {
                    cell(who, offsets, r, initOutcome);
                    cell(who, end, r, initOutcome);
                    continue;
                }
                String sent = outcome(() -> {
                    fp.beginTransaction();
                    fp.sendOffsetsToTransaction(Map.of(open, new OffsetAndMetadata(1)), new ConsumerGroupMetadata(g));
                });
                cell(who, offsets, r, sent);
                cell(who, end, r, sent.equals("OK") ? outcome(fp::commitTransaction) : "ABORT:" + outcome(fp::abortTransaction));
            }
        } finally {
            fp.close(Duration.ofSeconds(5));
        }
    }

    // As the admin: transaction.version down to 1, then waits until the broker's finalized
    // features (what ApiVersions tells a new producer) say so.
    static void downgradeTransactionVersion(String bootstrap) throws Exception {
        Properties p = common(bootstrap);
        p.put("default.api.timeout.ms", "30000");
        p.put("request.timeout.ms", "30000");
        try (Admin a = Admin.create(p)) {
            a.updateFeatures(Map.of("transaction.version", new FeatureUpdate((short) 1, FeatureUpdate.UpgradeType.SAFE_DOWNGRADE)),
                    new UpdateFeaturesOptions()).all().get();
            for (int i = 0; i < 300; i++) {
                FinalizedVersionRange r = a.describeFeatures().featureMetadata().get().finalizedFeatures().get("transaction.version");
                if (r != null && r.maxVersionLevel() == 1) return;
                Thread.sleep(100);
            }
            throw new IllegalStateException("transaction.version is not 1 after the downgrade");
        }
    }

    static void probe(String bootstrap, String admin, String outPath) throws Exception {
        out = new PrintWriter(new OutputStreamWriter(new FileOutputStream(outPath), StandardCharsets.UTF_8));
        List<String> allTopics = new ArrayList<>(topics);
        allTopics.addAll(missing);
        for (String[] pr : principals) {
            long started = System.nanoTime();
            String who = pr[0];
            Properties base = sasl(bootstrap, pr[0], pr[1]);
            try (Admin a = Admin.create(base)) {
                // Metadata: listing leaves out what the principal may not describe.
                Set<String> listed = new HashSet<>();
                String listOutcome = outcome(() -> listed.addAll(a.listTopics().names().get()));
                cell(who, "ListTopics", "-", listOutcome);
                for (String t : allTopics)
                    cell(who, "ListTopics", "topic:" + t, listOutcome.equals("OK") ? (listed.contains(t) ? "LISTED" : "HIDDEN") : listOutcome);
                for (String t : allTopics) {
                    String r = "topic:" + t;
                    cell(who, "Metadata", r, () -> a.describeTopics(List.of(t)).allTopicNames().get());
                    cell(who, "CreateTopics", r, () -> a.createTopics(List.of(new NewTopic(t, 1, (short) 1)),
                            new CreateTopicsOptions().validateOnly(true)).all().get());
                    ConfigResource cr = new ConfigResource(ConfigResource.Type.TOPIC, t);
                    cell(who, "DescribeConfigs", r, () -> a.describeConfigs(List.of(cr)).all().get());
                    if (!topics.contains(t)) continue;
                    cell(who, "IncrementalAlterConfigs", r, () -> a.incrementalAlterConfigs(Map.of(cr,
                            List.of(new AlterConfigOp(new ConfigEntry("retention.ms", "86400000"), AlterConfigOp.OpType.SET))))
                            .all().get());
                    cell(who, "CreatePartitions", r, () -> a.createPartitions(Map.of(t, NewPartitions.increaseTo(2)),
                            new CreatePartitionsOptions().validateOnly(true)).all().get());
                    TopicPartition tp = new TopicPartition(t, 0);
                    cell(who, "ListOffsets", r, () -> a.listOffsets(Map.of(tp, OffsetSpec.latest())).all().get());
                    cell(who, "DeleteRecords", r, () -> a.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(0))).all().get());
                    cell(who, "Produce", r, () -> {
                        try (KafkaProducer<String, String> p = producer(base, false)) {
                            try { p.send(new ProducerRecord<>(t, "k", who)).get(TIMEOUT_MS + 2000, TimeUnit.MILLISECONDS); }
                            finally { p.close(Duration.ofMillis(500)); }
                        }
                    });
                    cell(who, "ProduceIdempotent", r, () -> {
                        try (KafkaProducer<String, String> p = producer(base, true)) {
                            try { p.send(new ProducerRecord<>(t, "k", who)).get(TIMEOUT_MS + 2000, TimeUnit.MILLISECONDS); }
                            finally { p.close(Duration.ofMillis(500)); }
                        }
                    });
                    cell(who, "Fetch", r, () -> {
                        try (KafkaConsumer<String, String> c = consumer(base, null)) {
                            c.assign(List.of(tp));
                            c.seek(tp, 0);
                            long deadline = System.currentTimeMillis() + TIMEOUT_MS;
                            while (true) {
                                if (!c.poll(Duration.ofMillis(200)).isEmpty()) return;
                                if (System.currentTimeMillis() > deadline) throw new org.apache.kafka.common.errors.TimeoutException("no records");
                            }
                        }
                    });
                }
                // Groups.
                Set<String> listedGroups = new HashSet<>();
                String lg = outcome(() -> a.listConsumerGroups().all().get().forEach(g -> listedGroups.add(g.groupId())));
                cell(who, "ListGroups", "-", lg);
                for (String g : groups) {
                    String r = "group:" + g;
                    cell(who, "ListGroups", r, lg.equals("OK") ? (listedGroups.contains(g) ? "LISTED" : "HIDDEN") : lg);
                    cell(who, "DescribeGroups", r, () -> {
                        ConsumerGroupDescription d = a.describeConsumerGroups(List.of(g)).all().get().get(g);
                        if (d.groupState() == GroupState.DEAD) throw new org.apache.kafka.common.errors.GroupIdNotFoundException(g);
                    });
                    cell(who, "OffsetFetch", r, () -> a.listConsumerGroupOffsets(g).partitionsToOffsetAndMetadata().get());
                    cell(who, "OffsetCommit", r, () -> {
                        try (KafkaConsumer<String, String> c = consumer(base, g)) {
                            TopicPartition tp = new TopicPartition(openTopic, 0);
                            c.assign(List.of(tp));
                            c.commitSync(Map.of(tp, new OffsetAndMetadata(1)), Duration.ofMillis(TIMEOUT_MS));
                        }
                    });
                    cell(who, "OffsetFetchConsumer", r, () -> {
                        try (KafkaConsumer<String, String> c = consumer(base, g)) {
                            c.committed(Set.of(new TopicPartition(openTopic, 0)), Duration.ofMillis(TIMEOUT_MS));
                        }
                    });
                    // JoinGroup, SyncGroup (classic protocol), then LeaveGroup on close.
                    cell(who, "JoinGroup", r, () -> {
                        try (KafkaConsumer<String, String> c = consumer(base, g)) {
                            c.subscribe(List.of(openTopic));
                            long deadline = System.currentTimeMillis() + TIMEOUT_MS;
                            while (c.assignment().isEmpty()) {
                                c.poll(Duration.ofMillis(100));
                                if (System.currentTimeMillis() > deadline) throw new org.apache.kafka.common.errors.TimeoutException("no assignment");
                            }
                        }
                    });
                }
                transactions(who, base, a);
                // Cluster.
                String r = "cluster";
                String[] node = new String[1];
                cell(who, "DescribeCluster", r, () -> node[0] = a.describeCluster().nodes().get().iterator().next().idString());
                if (node[0] == null) node[0] = "1";
                ConfigResource broker = new ConfigResource(ConfigResource.Type.BROKER, node[0]);
                cell(who, "DescribeConfigs", "broker", () -> a.describeConfigs(List.of(broker)).all().get());
                cell(who, "DescribeLogDirs", r, () -> a.describeLogDirs(List.of(Integer.parseInt(node[0]))).allDescriptions().get());
                cell(who, "ListPartitionReassignments", r, () -> a.listPartitionReassignments().reassignments().get());
                TopicPartition first = new TopicPartition(topics.get(0), 0);
                cell(who, "AlterPartitionReassignments", r, () -> a.alterPartitionReassignments(
                        Map.of(first, Optional.empty())).all().get());
                cell(who, "ElectLeaders", r, () -> a.electLeaders(ElectionType.PREFERRED, Set.of(first)).all().get());
                cell(who, "DescribeUserScramCredentials", r, () -> a.describeUserScramCredentials().all().get());
                cell(who, "AlterUserScramCredentials", r, () -> a.alterUserScramCredentials(List.of(
                        new UserScramCredentialUpsertion("zed-" + who, new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096), "zed-pw")))
                        .all().get());
                cell(who, "DescribeClientQuotas", r, () -> a.describeClientQuotas(
                        org.apache.kafka.common.quota.ClientQuotaFilter.all()).entities().get());
                cell(who, "ListConfigResources", r, () -> a.listConfigResources(
                        Set.of(ConfigResource.Type.GROUP, ConfigResource.Type.TOPIC),
                        new ListConfigResourcesOptions()).all().get());
                cell(who, "DescribeAcls", r, () -> a.describeAcls(AclBindingFilter.ANY).values().get());
                AclBinding mine = new AclBinding(new ResourcePattern(ResourceType.TOPIC, "zz-" + who, PatternType.LITERAL),
                        new AccessControlEntry("User:zed", "*", AclOperation.READ, AclPermissionType.ALLOW));
                cell(who, "CreateAcls", r, () -> a.createAcls(List.of(mine)).all().get());
                cell(who, "DeleteAcls", r, () -> a.deleteAcls(List.of(mine.toFilter())).all().get());
            }
            System.err.printf("probe: %s done in %.1f s%n", who, (System.nanoTime() - started) / 1e9);
        }
        // The transactions again under transaction.version 1: AddPartitionsToTxn for a send,
        // AddOffsetsToTxn then TxnOffsetCommit v4 for sendOffsetsToTransaction, EndTxn v4.
        if (admin != null && !txnFlow.isEmpty()) {
            downgradeTransactionVersion(admin);
            for (String[] pr : principals)
                flow(pr[0], sasl(bootstrap, pr[0], pr[1]), "InitProducerIdV1", "AddPartitionsToTxn", "AddOffsetsToTxn", "EndTxnV1");
        }
        // Destructive cells last, principal after principal.
        for (String[] pr : principals) {
            String who = pr[0];
            Properties base = sasl(bootstrap, pr[0], pr[1]);
            try (Admin a = Admin.create(base)) {
                for (String g : groups) {
                    String r = "group:" + g;
                    cell(who, "OffsetDelete", r, () -> a.deleteConsumerGroupOffsets(g, Set.of(new TopicPartition(openTopic, 0))).all().get());
                    cell(who, "DeleteGroups", r, () -> a.deleteConsumerGroups(List.of(g)).all().get());
                }
                for (String t : allTopics) {
                    if (t.equals(openTopic)) continue;
                    cell(who, "DeleteTopics", "topic:" + t, () -> a.deleteTopics(List.of(t)).all().get());
                }
            }
        }
        out.close();
    }
}
