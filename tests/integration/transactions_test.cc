// The log side of transactions against the real spool-broker: transactional batches produced with
// a raw client, WriteTxnMarkers sent as the transaction coordinator sends them (commit one
// transaction, abort another), then read_committed and read_uncommitted reads by a raw Fetch,
// ListOffsets, kcat (librdkafka) and Kafka's console consumer; a kill -9 in the middle of an
// open transaction keeps the last stable offset and the aborted-transaction index; Kafka's own
// DumpLogSegments reads the .txnindex Spool wrote.

#include "protocol/messages/list_offsets.h"
#include "tests/integration/broker_process.h"
#include "tests/integration/kafka_client.h"
#include "tests/integration/test_pki.h"
#include "tests/integration/test_support.h"
#include "tests/integration/txn_client.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace spool::tests {
namespace {

using txn::read_committed;
using txn::read_uncommitted;

constexpr int16_t invalid_producer_epoch = 47;
constexpr int16_t coordinator_fenced = 52;
constexpr int16_t unknown_topic_or_partition = 3;

class transactions_test : public running_broker_test {
protected:
    // These tests play the transaction coordinator themselves (their producer ids are not any
    // coordinator's), so the partition leaders must not ask one (KIP-890 part 1 verification is
    // tested in handlers/txn/tests/txn_verification_api_test.cc).
    std::vector<std::string> overrides() const override {
        return {"transaction.partition.verification.enable=false"};
    }
    void SetUp() override {
        running_broker_test::SetUp();
        if (HasFatalFailure()) {
            return;
        }
        kafka_client c(broker->port());
        ASSERT_EQ(create_topic(c, topic, 1), 0);
    }

    // The values kcat prints for the partition with the given isolation level, one per line.
    std::multiset<std::string> kcat(const std::string& isolation) {
        auto out = run(
            "timeout 60 kcat -b 127.0.0.1:" + std::to_string(broker->port()) + " -C -t " + topic +
            " -p 0 -o beginning -e -q -f '%s\\n' -X isolation.level=" + isolation + " 2>/dev/null");
        std::multiset<std::string> values;
        std::istringstream in(out);
        for (std::string line; std::getline(in, line);) {
            values.insert(line);
        }
        return values;
    }

    std::filesystem::path partition_dir() const { return broker->data_dir() / "data" / "txn-0"; }

    const std::string topic = "txn";
};

// Producers: A commits (with a plain idempotent record between its batches), B aborts, both open
// at once; then the reads.
TEST_F(transactions_test, test_committed_and_aborted_transactions_read_as_kafka_reads_them) {
    ASSERT_TRUE(have_kcat()) << "kcat is not installed (scripts/setup.sh --with-tests)";
    kafka_client c(broker->port());
    const int64_t a = 5001, b = 5002, plain = 5003;
    ASSERT_EQ(txn::produce(c, topic, a, 0, 0, {"a1", "a2"}),
              std::make_pair(int16_t(0), int64_t(0)));
    ASSERT_EQ(txn::produce(c, topic, plain, 0, 0, {"p1"}, false).first, 0);  // 2
    ASSERT_EQ(txn::produce(c, topic, b, 0, 0, {"b1"}), std::make_pair(int16_t(0), int64_t(3)));
    ASSERT_EQ(txn::produce(c, topic, a, 0, 2, {"a3"}).first, 0);  // 4

    // Both open: read_committed stops at A's first offset, read_uncommitted sees everything.
    auto open = txn::fetch(c, topic, read_committed);
    EXPECT_EQ(open.error, 0);
    EXPECT_EQ(open.high_watermark, 5);
    EXPECT_EQ(open.last_stable_offset, 0);
    EXPECT_TRUE(open.values.empty());
    EXPECT_EQ(latest_offset(c, topic, read_committed), 0);
    EXPECT_EQ(latest_offset(c, topic), 5);
    auto dirty = txn::fetch(c, topic, read_uncommitted);
    EXPECT_EQ(dirty.last_stable_offset, 0);
    EXPECT_EQ(dirty.values, (std::vector<std::string>{"a1", "a2", "p1", "b1", "a3"}));

    // kafka-transactions describe-producers (DescribeProducers): each open transaction's start.
    auto kafka = kafka_dir();
    ASSERT_FALSE(kafka.empty()) << "scripts/peers/fetch-kafka.sh failed";
    auto java = "timeout 120 java -Xshare:auto -XX:TieredStopAtLevel=1 -cp '" + kafka + "/libs/*' ";
    auto producers = sh(java +
                        "org.apache.kafka.tools.TransactionsCommand --bootstrap-server "
                        "127.0.0.1:" +
                        std::to_string(broker->port()) + " describe-producers --topic " + topic +
                        " --partition 0");
    ASSERT_TRUE(succeeded(producers)) << producers;
    // The row of a producer: its id first, its current transaction start offset last.
    auto row = [&](int64_t pid) {
        std::istringstream in(producers);
        for (std::string line; std::getline(in, line);) {
            std::istringstream cols(line);
            std::vector<std::string> c{std::istream_iterator<std::string>(cols), {}};
            if (!c.empty() && c.front() == std::to_string(pid)) {
                return c.back();
            }
        }
        return std::string("(no row)");
    };
    EXPECT_EQ(row(a), "0") << producers;
    EXPECT_EQ(row(b), "3") << producers;
    EXPECT_EQ(row(plain), "None") << producers;

    // A plain write from a producer in the middle of its transaction is INVALID_TXN_STATE (48).
    EXPECT_EQ(txn::produce(c, topic, a, 0, 3, {"x"}, false).first, 48);

    ASSERT_EQ(txn::end_txn(c, a, 0, true, 0, topic), std::vector<int16_t>{0});  // marker at 5
    // B still open: the LSO is B's first offset.
    EXPECT_EQ(txn::fetch(c, topic, read_committed).last_stable_offset, 3);
    ASSERT_EQ(txn::end_txn(c, b, 0, false, 0, topic), std::vector<int16_t>{0});  // marker at 6

    auto done = txn::fetch(c, topic, read_committed);
    EXPECT_EQ(done.error, 0);
    EXPECT_EQ(done.high_watermark, 7);
    EXPECT_EQ(done.last_stable_offset, 7);
    EXPECT_EQ(done.aborted, (std::vector<std::pair<int64_t, int64_t>>{{b, 3}}));
    EXPECT_EQ(done.markers, 2);
    // A range after B's marker has no aborted transaction to report.
    EXPECT_TRUE(txn::fetch(c, topic, read_committed, 7).aborted.empty());
    EXPECT_TRUE(txn::fetch(c, topic, read_uncommitted).aborted.empty());
    EXPECT_EQ(latest_offset(c, topic, read_committed), 7);

    // Stale markers: an older producer epoch, an older coordinator epoch, unknown partitions.
    const int64_t z = 5004;
    ASSERT_EQ(txn::produce(c, topic, z, 5, 0, {"z1"}).first, 0);  // 7
    EXPECT_EQ(txn::end_txn(c, z, 4, true, 3, topic), std::vector<int16_t>{invalid_producer_epoch});
    EXPECT_EQ(txn::end_txn(c, z, 5, true, 3, topic), std::vector<int16_t>{0});
    ASSERT_EQ(txn::produce(c, topic, z, 5, 1, {"z2"}).first, 0);
    EXPECT_EQ(txn::end_txn(c, z, 5, false, 2, topic), std::vector<int16_t>{coordinator_fenced});
    EXPECT_EQ(txn::end_txn(c, z, 5, false, 3, topic, {0, 7}),
              (std::vector<int16_t>{0, unknown_topic_or_partition}));
    EXPECT_EQ(txn::end_txn(c, z, 5, true, 3, "no-such-topic"),
              std::vector<int16_t>{unknown_topic_or_partition});
    // A producer fenced by a newer epoch gets INVALID_PRODUCER_EPOCH on Produce.
    EXPECT_EQ(txn::produce(c, topic, z, 4, 0, {"zombie"}).first, invalid_producer_epoch);

    // What each reader sees: committed A and the plain record, z1; never b1 or z2.
    const std::multiset<std::string> committed = {"a1", "a2", "p1", "a3", "z1"};
    const std::multiset<std::string> everything = {"a1", "a2", "p1", "b1", "a3", "z1", "z2"};
    auto all = txn::fetch(c, topic, read_committed);
    std::set<int64_t> aborted_pids;
    for (const auto& [pid, first] : all.aborted) {
        aborted_pids.insert(pid);
    }
    EXPECT_EQ(aborted_pids, (std::set<int64_t>{b, z}));
    EXPECT_EQ(kcat("read_committed"), committed);
    EXPECT_EQ(kcat("read_uncommitted"), everything);

    auto consume = [&](const std::string& isolation) {
        auto out = sh(
            java + "org.apache.kafka.tools.consumer.ConsoleConsumer --bootstrap-server 127.0.0.1:" +
            std::to_string(broker->port()) + " --topic " + topic +
            " --from-beginning --timeout-ms 8000 --isolation-level " + isolation + " 2>/dev/null");
        std::multiset<std::string> values;
        std::istringstream in(out);
        for (std::string line; std::getline(in, line);) {
            // The values have no spaces; the tool's log lines (its exit on the timeout) do.
            if (!line.starts_with("rc=") && line.find(' ') == std::string::npos) {
                values.insert(line);
            }
        }
        return values;
    };
    EXPECT_EQ(consume("read_committed"), committed);
    EXPECT_EQ(consume("read_uncommitted"), everything);
}

// kill -9 while a transaction is open: after recovery the LSO still waits for it, the aborted
// transaction before it is still reported, and its abort after the restart lands in the index;
// then Kafka's DumpLogSegments reads the .txnindex file Spool wrote.
TEST_F(transactions_test, test_kill_9_keeps_lso_and_txnindex_and_kafka_reads_the_index) {
    const int64_t a = 6001, b = 6002;
    {
        kafka_client c(broker->port());
        txn::write_aborted_then_open(c, topic, a, b);
        ASSERT_FALSE(HasFatalFailure());
    }
    broker->kill_hard();
    ASSERT_TRUE(broker->start()) << broker->log_text();
    kafka_client c(broker->port());
    auto after = txn::fetch_once_served(c, topic, read_committed);
    ASSERT_EQ(after.error, 0) << broker->log_text();
    txn::expect_aborted_then_open(after, a);
    ASSERT_EQ(txn::end_txn(c, b, 0, false, 0, topic), std::vector<int16_t>{0});  // 4
    auto closed = txn::fetch(c, topic, read_committed);
    EXPECT_EQ(closed.last_stable_offset, 5);
    EXPECT_EQ(closed.aborted, (std::vector<std::pair<int64_t, int64_t>>{{a, 0}, {b, 2}}));

    auto info = broker->stop();
    ASSERT_TRUE(info.exited);
    auto index = partition_dir() / "00000000000000000000.txnindex";
    ASSERT_TRUE(std::filesystem::exists(index)) << sh("ls -la " + partition_dir().string());
    auto kafka = sh("SPOOL_KAFKA_VERSION=4.4.0 bash " SPOOL_SOURCE_DIR
                    "/scripts/peers/fetch-kafka.sh --jars-only");
    ASSERT_TRUE(succeeded(kafka)) << kafka;
    auto dir = kafka.substr(0, kafka.find('\n'));
    auto dump = sh("timeout 120 java -Xshare:auto -XX:TieredStopAtLevel=1 -cp '" + dir +
                   "/libs/*' org.apache.kafka.tools.DumpLogSegments --files " + index.string());
    ASSERT_TRUE(succeeded(dump)) << dump;
    // DumpLogSegments' line for each entry, in Spool's order.
    EXPECT_NE(dump.find("version: 0 producerId: 6001 firstOffset: 0 lastOffset: 1 "
                        "lastStableOffset: 2\nversion: 0 producerId: 6002 firstOffset: 2 "
                        "lastOffset: 4 lastStableOffset: 5\n"),
              std::string::npos)
        << dump;
    ASSERT_TRUE(broker->start()) << broker->log_text();  // TearDown stops it
}

}  // namespace
}  // namespace spool::tests
