package dev.spool.compat;

import static dev.spool.compat.CheckRunner.expect;
import static dev.spool.compat.CheckRunner.expectEquals;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The keyed messages every client in the suite produces, and the checks on what comes back.
 *
 * <p>Message i has key "key-(i % 7)" (so each key's messages must keep their order within one
 * partition), a value that grows with i so compressed batches hold more than a few bytes, a
 * "seq" header, and every 50th value is null (a tombstone). The producer records where each message
 * landed; {@link #verifyAcks} checks that the broker assigned dense offsets from 0 in send order per
 * partition, and {@link #verifyConsumed} that a consumer reads back exactly those messages at those
 * offsets. Acknowledgements arrive on the producer's I/O thread, hence the synchronized methods;
 * everything else runs on the checker's thread.
 */
final class Workload {
    /** One message as produced and as expected back. */
    record Message(int seq, String key, String value) {}

    /** One consumed record. */
    record Consumed(int partition, long offset, String key, String value, String seqHeader) {}

    final String label;
    final List<Message> messages = new ArrayList<>();
    /** seq -> (partition, offset) from the producer acknowledgement. */
    private final Map<Integer, long[]> acks = new HashMap<>();

    Workload(String label, int count) {
        this.label = label;
        for (int i = 0; i < count; i++) {
            String value = i % 50 == 49 ? null : label + "-" + i + "-" + "v".repeat((i % 5) * 150);
            messages.add(new Message(i, "key-" + (i % 7), value));
        }
    }

    static byte[] bytes(String s) {
        return s == null ? null : s.getBytes(StandardCharsets.UTF_8);
    }

    static String string(byte[] b) {
        return b == null ? null : new String(b, StandardCharsets.UTF_8);
    }

    synchronized void recordAck(int seq, int partition, long offset) {
        acks.put(seq, new long[] {partition, offset});
    }

    /** Per partition, the messages in offset order, as the acknowledgements placed them. */
    synchronized Map<Integer, List<Message>> byPartition() {
        Map<Integer, List<Message>> result = new TreeMap<>();
        for (Message m : messages) {
            long[] ack = acks.get(m.seq());
            result.computeIfAbsent((int) ack[0], p -> new ArrayList<>()).add(m);
        }
        return result;
    }

    /** Every message acknowledged; offsets dense from 0 in send order per partition; a key never spans partitions. */
    synchronized void verifyAcks() {
        expectEquals(messages.size(), acks.size(), label + ": acknowledged messages");
        Map<String, Integer> partitionOfKey = new HashMap<>();
        Map<Integer, Long> nextOffset = new HashMap<>();
        for (Message m : messages) {
            long[] ack = acks.get(m.seq());
            int partition = (int) ack[0];
            Integer previous = partitionOfKey.putIfAbsent(m.key(), partition);
            expect(previous == null || previous == partition,
                    "%s: key %s went to partitions %d and %d", label, m.key(), previous, partition);
            long expected = nextOffset.getOrDefault(partition, 0L);
            expect(ack[1] == expected, "%s: message %d acknowledged at %d-%d, expected offset %d "
                    + "(offsets must be dense and in send order)", label, m.seq(), partition, ack[1],
                    expected);
            nextOffset.put(partition, expected + 1);
        }
    }

    /** The consumed records are exactly the acknowledged messages, at their offsets, in order. */
    void verifyConsumed(List<Consumed> consumed) {
        Map<Integer, List<Message>> expected = byPartition();
        Map<Integer, List<Consumed>> got = new TreeMap<>();
        for (Consumed c : consumed) {
            got.computeIfAbsent(c.partition(), p -> new ArrayList<>()).add(c);
        }
        expectEquals(expected.keySet(), got.keySet(), label + ": partitions with data");
        for (var entry : expected.entrySet()) {
            List<Message> want = entry.getValue();
            List<Consumed> have = got.get(entry.getKey());
            expectEquals(want.size(), have.size(), label + ": records in partition " + entry.getKey());
            for (int i = 0; i < want.size(); i++) {
                Message w = want.get(i);
                Consumed h = have.get(i);
                String where = label + " partition " + h.partition() + " offset " + h.offset();
                expectEquals((long) i, h.offset(), label + ": offset of record " + i + " in partition "
                        + entry.getKey());
                expectEquals(w.key(), h.key(), where + " key");
                expectEquals(w.value(), h.value(), where + " value");
                if (h.seqHeader() != null) {
                    expectEquals(Integer.toString(w.seq()), h.seqHeader(), where + " seq header");
                }
            }
        }
    }

    /** Expected end offset (= record count) per partition. */
    Map<Integer, Long> endOffsets() {
        Map<Integer, Long> result = new TreeMap<>();
        byPartition().forEach((p, list) -> result.put(p, (long) list.size()));
        return result;
    }
}
