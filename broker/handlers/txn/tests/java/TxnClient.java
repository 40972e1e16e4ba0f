// The Java client (Kafka 4.x) against a Spool broker's transactions, run by txn_java_test.cc:
// a transactional producer commits to two topics and aborts a second transaction, a second
// producer with the same transactional.id fences the first, and read_committed consumers see
// only the committed records while read_uncommitted ones see the aborted ones too.
// Prints "ok <check>" per check, "FAIL <check>: <why>" otherwise; exits 1 on any failure.

import java.time.Duration;
import java.util.*;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.*;
import org.apache.kafka.common.serialization.*;

public class TxnClient {
    static int failures = 0;

    static void check(String name, boolean ok, String why) {
        System.out.println((ok ? "ok " : "FAIL ") + name + (ok ? "" : ": " + why));
        if (!ok) failures++;
    }

    static KafkaProducer<String, String> producer(String bootstrap, String txnId) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("transactional.id", txnId);
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        p.put("max.block.ms", "30000");
        return new KafkaProducer<>(p);
    }

    static List<String> consume(String bootstrap, String topic, String isolation, int partitions) {
        Properties c = new Properties();
        c.put("bootstrap.servers", bootstrap);
        c.put("isolation.level", isolation);
        c.put("key.deserializer", StringDeserializer.class.getName());
        c.put("value.deserializer", StringDeserializer.class.getName());
        List<String> out = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(c)) {
            List<TopicPartition> tps = new ArrayList<>();
            for (int i = 0; i < partitions; i++) tps.add(new TopicPartition(topic, i));
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            long deadline = System.currentTimeMillis() + 8000;
            int empty = 0;
            while (System.currentTimeMillis() < deadline && empty < 6) {
                ConsumerRecords<String, String> rs = consumer.poll(Duration.ofMillis(500));
                if (rs.isEmpty()) empty++;
                for (ConsumerRecord<String, String> r : rs) out.add(r.value());
            }
        }
        Collections.sort(out);
        return out;
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            admin.createTopics(List.of(new NewTopic("out-a", 2, (short) 1),
                                       new NewTopic("out-b", 1, (short) 1))).all().get();
        }
        KafkaProducer<String, String> first = producer(bootstrap, "tx-1");
        first.initTransactions();
        first.beginTransaction();
        for (int i = 0; i < 5; i++) {
            first.send(new ProducerRecord<>("out-a", i % 2, null, "committed-a-" + i));
            first.send(new ProducerRecord<>("out-b", 0, null, "committed-b-" + i));
        }
        first.commitTransaction();
        check("commit to two topics", true, "");
        first.beginTransaction();
        for (int i = 0; i < 3; i++) {
            first.send(new ProducerRecord<>("out-a", i % 2, null, "aborted-a-" + i));
        }
        first.flush();
        first.abortTransaction();
        check("abort", true, "");

        KafkaProducer<String, String> second = producer(bootstrap, "tx-1");
        second.initTransactions();
        String fenced = "no error";
        try {
            first.beginTransaction();
            first.send(new ProducerRecord<>("out-a", 0, null, "zombie")).get();
            first.commitTransaction();
        } catch (Exception e) {
            Throwable t = e instanceof java.util.concurrent.ExecutionException ? e.getCause() : e;
            fenced = t.getClass().getSimpleName();
        }
        check("second producer fences the first",
              fenced.equals("ProducerFencedException") || fenced.equals("InvalidProducerEpochException"),
              fenced);
        first.close(Duration.ofSeconds(5));
        second.beginTransaction();
        second.send(new ProducerRecord<>("out-b", 0, null, "committed-b-second"));
        second.commitTransaction();
        check("the new producer commits", true, "");
        second.close();

        List<String> a = consume(bootstrap, "out-a", "read_committed", 2);
        List<String> b = consume(bootstrap, "out-b", "read_committed", 1);
        List<String> wantA = new ArrayList<>();
        for (int i = 0; i < 5; i++) wantA.add("committed-a-" + i);
        Collections.sort(wantA);
        List<String> wantB = new ArrayList<>();
        for (int i = 0; i < 5; i++) wantB.add("committed-b-" + i);
        wantB.add("committed-b-second");
        Collections.sort(wantB);
        check("read_committed sees only committed records in out-a", a.equals(wantA), a.toString());
        check("read_committed sees only committed records in out-b", b.equals(wantB), b.toString());
        List<String> all = consume(bootstrap, "out-a", "read_uncommitted", 2);
        check("read_uncommitted sees the aborted records too",
              all.size() == 8 && all.containsAll(wantA), all.toString());
        System.exit(failures == 0 ? 0 : 1);
    }
}
