// A power cut in the middle of an open transaction (log.dirs on unsynced_fs, see
// durability_test.cc): with log.flush.interval.messages=1 every acknowledged batch and marker was
// fsynced, so after the cut, kill -9 and restart the broker still knows the open transaction
// (the last stable offset waits for it) and the aborted one before it (the .txnindex, fsynced
// with its segment's .log or rebuilt by recovery).

#include "protocol/messages/create_topics.h"
#include "tests/durability/unsynced_mount.h"
#include "tests/integration/broker_process.h"
#include "tests/integration/kafka_client.h"
#include "tests/integration/txn_client.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <unistd.h>

namespace spool::tests {
namespace {

namespace fs = std::filesystem;
using txn::read_committed;

TEST(transaction_power_cut, test_open_transaction_and_aborted_index_survive_a_power_cut) {
    std::random_device rd;
    auto root = fs::temp_directory_path() /
                ("spool-txn-powercut-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
    fs::create_directories(root);
    unsynced_mount disk(root / "backing", root / "mnt", root / "unsynced_fs.log");
    ASSERT_TRUE(disk.mount()) << "FUSE mount failed:\n" << disk.log_text();
    auto broker = std::make_unique<broker_process>(root / "broker");
    broker->add_override("log.dirs=" + (disk.path() / "data").string());
    broker->add_override("log.flush.interval.messages=1");
    // The test plays the transaction coordinator: no coordinator knows its producers.
    broker->add_override("transaction.partition.verification.enable=false");
    ASSERT_TRUE(broker->start()) << broker->log_text();
    const std::string topic = "txn";
    const int64_t a = 7001, b = 7002;
    {
        kafka_client c(broker->port());
        // Not test_support.h's create_topic: durability_test.cc links admin_requests.h's, an
        // inline function of the same signature with another return type.
        protocol::create_topics_request req;
        auto& t = req.topics.emplace_back();
        t.name = topic;
        t.num_partitions = 1;
        t.replication_factor = 1;
        req.timeout_ms = 30000;
        auto created =
            c.call<protocol::create_topics_request, protocol::create_topics_response>(4, req);
        ASSERT_TRUE(created && created->topics.at(0).error_code == 0);
        txn::write_aborted_then_open(c, topic, a, b);
        ASSERT_FALSE(HasFatalFailure());
    }
    disk.power_cut();
    broker->kill_hard();
    disk.unmount();
    ASSERT_TRUE(disk.mount()) << disk.log_text();
    ASSERT_TRUE(broker->start()) << broker->log_text();
    kafka_client c(broker->port());
    auto after = txn::fetch_once_served(c, topic, read_committed);
    ASSERT_EQ(after.error, 0) << broker->log_text();
    txn::expect_aborted_then_open(after, a);
    // The coordinator completes the transaction after the restart.
    ASSERT_EQ(txn::end_txn(c, b, 0, true, 0, topic), std::vector<int16_t>{0});  // 4
    auto done = txn::fetch(c, topic, read_committed);
    EXPECT_EQ(done.last_stable_offset, 5);
    EXPECT_EQ(done.values, (std::vector<std::string>{"a1", "b1", "b2"}));  // a1: client drops it
    EXPECT_EQ(done.aborted, (std::vector<std::pair<int64_t, int64_t>>{{a, 0}}));
    auto stopped = broker->stop();
    EXPECT_TRUE(stopped.exited && stopped.status == 0) << broker->log_text();
    broker.reset();
    disk.unmount();
    EXPECT_NE(disk.log_text().find("power cut:"), std::string::npos) << disk.log_text();
    std::error_code ec;
    fs::remove_all(root, ec);
}

}  // namespace
}  // namespace spool::tests
