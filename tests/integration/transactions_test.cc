// The log side of transactions against the real spool-broker: transactional batches produced with
// a raw client, WriteTxnMarkers sent as the transaction coordinator sends them (commit one
// transaction, abort another), then read_committed and read_uncommitted reads by a raw Fetch,
// ListOffsets, kcat (librdkafka) and Kafka's console consumer; a kill -9 in the middle of an
// open transaction keeps the last stable offset and the aborted-transaction index; Kafka's own
// DumpLogSegments reads the .txnindex Spool wrote.

#include "protocol/messages/fetch.h"
#include "protocol/messages/list_offsets.h"
#include "protocol/messages/produce.h"
#include "protocol/messages/write_txn_markers.h"
#include "protocol/records/batch_builder.h"
#include "protocol/records/batch_parser.h"
#include "protocol/records/record_reader.h"
#include "tests/integration/broker_process.h"
#include "tests/integration/kafka_client.h"
#include "tests/integration/test_pki.h"
#include "tests/integration/test_support.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <chrono>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace spool::tests {
namespace {

namespace pr = spool::protocol;
namespace rec = spool::protocol::records;

constexpr int16_t invalid_producer_epoch = 47;
constexpr int16_t coordinator_fenced = 52;
constexpr int16_t unknown_topic_or_partition = 3;
constexpr int8_t read_committed = 1;

struct fetched {
    int16_t error = -1;
    int64_t high_watermark = -1;
    int64_t last_stable_offset = -1;
    std::vector<std::pair<int64_t, int64_t>> aborted;  // producer id, first offset
    std::vector<std::string> values;                   // data records, in offset order
    int markers = 0;                                   // control batches returned
};

class transactions_test : public running_broker_test {
protected:
    void SetUp() override {
        running_broker_test::SetUp();
        if (HasFatalFailure()) {
            return;
        }
        kafka_client c(broker->port());
        ASSERT_EQ(create_topic(c, topic, 1), 0);
    }

    // One batch of `values` from producer (pid, epoch) at `seq`, transactional or not; returns
    // the partition's error code and base offset.
    std::pair<int16_t, int64_t> produce(kafka_client& c, int64_t pid, int16_t epoch, int32_t seq,
                                        const std::vector<std::string>& values,
                                        bool transactional = true) {
        rec::batch_options o;
        o.producer_id = pid;
        o.producer_epoch = epoch;
        o.base_sequence = seq;
        o.transactional = transactional;
        rec::batch_builder b(o);
        // Wall-clock timestamps, as the markers carry: a gap past segment.ms would roll.
        const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                                std::chrono::system_clock::now().time_since_epoch())
                                .count();
        for (const auto& v : values) {
            b.add(now, rec::nullable_bytes::null(), rec::nullable_bytes::of(v));
        }
        auto batch = b.build();
        auto req = produce_req(topic, 0, batch, -1);
        if (transactional) {
            req.transactional_id = "txn-" + std::to_string(pid);
        }
        auto resp = c.call<pr::produce_request, pr::produce_response>(9, req);
        if (!resp) {
            return {-999, -1};
        }
        const auto& p = resp->responses.at(0).partition_responses.at(0);
        return {p.error_code, p.base_offset};
    }

    // WriteTxnMarkers for one producer on the given partitions of `to`; the error code of each.
    std::vector<int16_t> end_txn(kafka_client& c, int64_t pid, int16_t epoch, bool commit,
                                 int32_t coordinator_epoch, const std::string& to,
                                 std::vector<int32_t> partitions = {0}) {
        pr::write_txn_markers_request req;
        auto& m = req.markers.emplace_back();
        m.producer_id = pid;
        m.producer_epoch = epoch;
        m.transaction_result = commit;
        m.coordinator_epoch = coordinator_epoch;
        auto& t = m.topics.emplace_back();
        t.name = to;
        t.partition_indexes = std::move(partitions);
        auto resp = c.call<pr::write_txn_markers_request, pr::write_txn_markers_response>(1, req);
        std::vector<int16_t> out;
        if (!resp) {
            return {-999};
        }
        EXPECT_EQ(resp->markers.at(0).producer_id, pid);
        for (const auto& p : resp->markers.at(0).topics.at(0).partitions) {
            out.push_back(p.error_code);
        }
        return out;
    }

    fetched fetch(kafka_client& c, int8_t isolation, int64_t offset = 0) {
        auto req = fetch_partition_0(topic, offset);
        req.isolation_level = isolation;
        req.max_wait_ms = 0;
        req.min_bytes = 0;
        fetched out;
        auto resp = c.call<pr::fetch_request, pr::fetch_response>(11, req);
        if (!resp) {
            return out;
        }
        const auto& pd = resp->responses.at(0).partitions.at(0);
        out.error = pd.error_code;
        out.high_watermark = pd.high_watermark;
        out.last_stable_offset = pd.last_stable_offset;
        if (pd.aborted_transactions) {
            for (const auto& a : *pd.aborted_transactions) {
                out.aborted.emplace_back(a.producer_id, a.first_offset);
            }
        }
        auto bytes = pd.records.bytes();
        rec::decompress_buffer scratch;
        rec::validate_options vo;
        vo.origin = rec::batch_origin::log;
        rec::batch_walker walker(bytes, vo, scratch);
        while (!walker.done()) {
            auto info = walker.next();
            if (!info) {
                ADD_FAILURE() << info.error().message();
                break;
            }
            if (info.value().is_control()) {
                ++out.markers;
                continue;
            }
            rec::record_reader reader(rec::records_section(bytes, info.value()),
                                      info.value().record_count);
            rec::record_view r;
            while (reader.next(r)) {
                out.values.emplace_back(r.value.as_string());
            }
        }
        return out;
    }

    int64_t list_latest(kafka_client& c, int8_t isolation) {
        pr::list_offsets_request req;
        req.replica_id = -1;
        req.isolation_level = isolation;
        auto& t = req.topics.emplace_back();
        t.name = topic;
        auto& p = t.partitions.emplace_back();
        p.partition_index = 0;
        p.timestamp = -1;
        auto resp = c.call<pr::list_offsets_request, pr::list_offsets_response>(5, req);
        if (!resp || resp->topics.at(0).partitions.at(0).error_code != 0) {
            return -999;
        }
        return resp->topics.at(0).partitions.at(0).offset;
    }

    // The values kcat prints for the partition with the given isolation level, one per line.
    std::multiset<std::string> kcat(const std::string& isolation) {
        auto out = run("timeout 60 kcat -b 127.0.0.1:" + std::to_string(broker->port()) +
                       " -C -t " + topic + " -p 0 -o beginning -e -q -f '%s\\n' -X isolation.level=" +
                       isolation + " 2>/dev/null");
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
    ASSERT_EQ(produce(c, a, 0, 0, {"a1", "a2"}), std::make_pair(int16_t(0), int64_t(0)));
    ASSERT_EQ(produce(c, plain, 0, 0, {"p1"}, false).first, 0);          // 2
    ASSERT_EQ(produce(c, b, 0, 0, {"b1"}), std::make_pair(int16_t(0), int64_t(3)));
    ASSERT_EQ(produce(c, a, 0, 2, {"a3"}).first, 0);                      // 4

    // Both open: read_committed stops at A's first offset, read_uncommitted sees everything.
    auto open = fetch(c, read_committed);
    EXPECT_EQ(open.error, 0);
    EXPECT_EQ(open.high_watermark, 5);
    EXPECT_EQ(open.last_stable_offset, 0);
    EXPECT_TRUE(open.values.empty());
    EXPECT_EQ(list_latest(c, read_committed), 0);
    EXPECT_EQ(list_latest(c, 0), 5);
    auto dirty = fetch(c, 0);
    EXPECT_EQ(dirty.last_stable_offset, 0);
    EXPECT_EQ(dirty.values, (std::vector<std::string>{"a1", "a2", "p1", "b1", "a3"}));

    // kafka-transactions describe-producers (DescribeProducers): each open transaction's start.
    auto kafka = kafka_dir();
    ASSERT_FALSE(kafka.empty()) << "scripts/peers/fetch-kafka.sh failed";
    auto java = "timeout 120 java -Xshare:auto -XX:TieredStopAtLevel=1 -cp '" + kafka + "/libs/*' ";
    auto producers = sh(java + "org.apache.kafka.tools.TransactionsCommand --bootstrap-server "
                               "127.0.0.1:" + std::to_string(broker->port()) +
                        " describe-producers --topic " + topic + " --partition 0");
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
    EXPECT_EQ(produce(c, a, 0, 3, {"x"}, false).first, 48);

    ASSERT_EQ(end_txn(c, a, 0, true, 0, topic), std::vector<int16_t>{0});   // marker at 5
    // B still open: the LSO is B's first offset.
    EXPECT_EQ(fetch(c, read_committed).last_stable_offset, 3);
    ASSERT_EQ(end_txn(c, b, 0, false, 0, topic), std::vector<int16_t>{0});  // marker at 6

    auto done = fetch(c, read_committed);
    EXPECT_EQ(done.error, 0);
    EXPECT_EQ(done.high_watermark, 7);
    EXPECT_EQ(done.last_stable_offset, 7);
    EXPECT_EQ(done.aborted, (std::vector<std::pair<int64_t, int64_t>>{{b, 3}}));
    EXPECT_EQ(done.markers, 2);
    // A range after B's marker has no aborted transaction to report.
    EXPECT_TRUE(fetch(c, read_committed, 7).aborted.empty());
    EXPECT_TRUE(fetch(c, 0).aborted.empty());
    EXPECT_EQ(list_latest(c, read_committed), 7);

    // Stale markers: an older producer epoch, an older coordinator epoch, unknown partitions.
    const int64_t z = 5004;
    ASSERT_EQ(produce(c, z, 5, 0, {"z1"}).first, 0);  // 7
    EXPECT_EQ(end_txn(c, z, 4, true, 3, topic), std::vector<int16_t>{invalid_producer_epoch});
    EXPECT_EQ(end_txn(c, z, 5, true, 3, topic), std::vector<int16_t>{0});
    ASSERT_EQ(produce(c, z, 5, 1, {"z2"}).first, 0);
    EXPECT_EQ(end_txn(c, z, 5, false, 2, topic), std::vector<int16_t>{coordinator_fenced});
    EXPECT_EQ(end_txn(c, z, 5, false, 3, topic, {0, 7}),
              (std::vector<int16_t>{0, unknown_topic_or_partition}));
    EXPECT_EQ(end_txn(c, z, 5, true, 3, "no-such-topic"),
              std::vector<int16_t>{unknown_topic_or_partition});
    // A producer fenced by a newer epoch gets INVALID_PRODUCER_EPOCH on Produce.
    EXPECT_EQ(produce(c, z, 4, 0, {"zombie"}).first, invalid_producer_epoch);

    // What each reader sees: committed A and the plain record, z1; never b1 or z2.
    const std::multiset<std::string> committed = {"a1", "a2", "p1", "a3", "z1"};
    const std::multiset<std::string> everything = {"a1", "a2", "p1", "b1", "a3", "z1", "z2"};
    auto all = fetch(c, read_committed);
    std::set<int64_t> aborted_pids;
    for (const auto& [pid, first] : all.aborted) {
        aborted_pids.insert(pid);
    }
    EXPECT_EQ(aborted_pids, (std::set<int64_t>{b, z}));
    EXPECT_EQ(kcat("read_committed"), committed);
    EXPECT_EQ(kcat("read_uncommitted"), everything);

    auto consume = [&](const std::string& isolation) {
        auto out = sh(java + "org.apache.kafka.tools.consumer.ConsoleConsumer --bootstrap-server 127.0.0.1:" +
                      std::to_string(broker->port()) + " --topic " + topic +
                      " --from-beginning --timeout-ms 8000 --isolation-level " + isolation +
                      " 2>/dev/null");
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
        ASSERT_EQ(produce(c, a, 0, 0, {"a1"}).first, 0);      // 0
        ASSERT_EQ(end_txn(c, a, 0, false, 0, topic), std::vector<int16_t>{0});  // 1
        ASSERT_EQ(produce(c, b, 0, 0, {"b1", "b2"}).first, 0);  // 2-3, open at the kill
        ASSERT_EQ(fetch(c, read_committed).last_stable_offset, 2);
    }
    broker->kill_hard();
    ASSERT_TRUE(broker->start()) << broker->log_text();
    kafka_client c(broker->port());
    fetched after;
    // The partition reopens with the log; retry until it serves.
    for (int i = 0; i < 100; ++i) {
        after = fetch(c, read_committed);
        if (after.error == 0) {
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ASSERT_EQ(after.error, 0) << broker->log_text();
    EXPECT_EQ(after.high_watermark, 4);
    EXPECT_EQ(after.last_stable_offset, 2);
    EXPECT_EQ(after.aborted, (std::vector<std::pair<int64_t, int64_t>>{{a, 0}}));
    // Below the LSO: a1 is returned with A listed as aborted (the client drops it); b is open.
    EXPECT_EQ(after.values, std::vector<std::string>{"a1"});
    ASSERT_EQ(end_txn(c, b, 0, false, 0, topic), std::vector<int16_t>{0});  // 4
    auto closed = fetch(c, read_committed);
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
