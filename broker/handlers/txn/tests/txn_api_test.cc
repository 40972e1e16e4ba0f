// The transaction coordinator through the real spool-broker process, over raw Kafka requests:
// FindCoordinator, InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn, TxnOffsetCommit and
// EndTxn with Kafka's error codes, the state surviving a restart, and Kafka's own DumpLogSegments
// --transaction-log-decoder reading the __transaction_state segment Spool wrote.
//
// Markers: EndTxn answers once PrepareCommit/PrepareAbort is durable and the markers go out
// after, so a retried EndTxn may see CONCURRENT_TRANSACTIONS (markers pending) or NONE
// (completed); both are Kafka's answers, and the assertions accept exactly those.

#include "protocol/messages/add_offsets_to_txn.h"
#include "protocol/messages/add_partitions_to_txn.h"
#include "protocol/messages/create_topics.h"
#include "protocol/messages/end_txn.h"
#include "protocol/messages/find_coordinator.h"
#include "protocol/messages/init_producer_id.h"
#include "protocol/messages/offset_fetch.h"
#include "protocol/messages/produce.h"
#include "protocol/messages/txn_offset_commit.h"
#include "tests/integration/broker_process.h"
#include "tests/integration/kafka_client.h"
#include "tests/integration/test_pki.h"
#include "tests/integration/test_support.h"
#include "tests/integration/txn_batch.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <thread>

namespace spool::tests {
namespace {

namespace pr = spool::protocol;

constexpr int16_t none = 0;
constexpr int16_t unknown_topic_or_partition = 3;
constexpr int16_t invalid_producer_epoch = 47;
constexpr int16_t invalid_txn_state = 48;
constexpr int16_t invalid_producer_id_mapping = 49;
constexpr int16_t invalid_transaction_timeout = 50;
constexpr int16_t concurrent_transactions = 51;
constexpr int16_t operation_not_attempted = 55;
constexpr int16_t producer_fenced = 90;
constexpr int16_t not_enough_replicas = 19;

class txn_api_test : public ::testing::Test {
protected:
    void SetUp() override {
        broker = std::make_unique<broker_process>();
        broker->add_override("transaction.state.log.num.partitions=4");
        broker->add_override("offsets.topic.num.partitions=3");
        broker->add_override("transaction.max.timeout.ms=100000");
        ASSERT_TRUE(broker->start()) << broker->log_text();
        kafka_client c(broker->port());
        pr::create_topics_request req;
        auto& t = req.topics.emplace_back();
        t.name = "orders";
        t.num_partitions = 2;
        t.replication_factor = 1;
        auto resp = c.call<pr::create_topics_request, pr::create_topics_response>(5, req);
        ASSERT_TRUE(resp);
        ASSERT_EQ(resp->topics.at(0).error_code, 0);
        // The first FindCoordinator(TRANSACTION) creates __transaction_state, as in Kafka:
        // COORDINATOR_NOT_AVAILABLE until its partitions are led.
        int16_t error = -1;
        for (int i = 0; i < 100 && error != 0; ++i) {
            pr::find_coordinator_request find;
            find.key_type = 1;
            find.coordinator_keys = {"app"};
            auto found =
                c.call<pr::find_coordinator_request, pr::find_coordinator_response>(4, find);
            ASSERT_TRUE(found);
            error = found->coordinators.at(0).error_code;
            if (error != 0) {
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
            }
        }
        ASSERT_EQ(error, 0) << broker->log_text();
    }
    void TearDown() override {
        auto info = broker->stop();
        EXPECT_TRUE(info.exited) << broker->log_text();
        EXPECT_EQ(info.status, 0) << broker->log_text();
    }

    pr::init_producer_id_response init(const std::string& id, int32_t timeout = 60000,
                                       int64_t pid = -1, int16_t epoch = -1) {
        kafka_client c(broker->port());
        pr::init_producer_id_request req;
        req.transactional_id = id;
        req.transaction_timeout_ms = timeout;
        req.producer_id = pid;
        req.producer_epoch = epoch;
        // As a client does: COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE and
        // NOT_COORDINATOR are retried (the __transaction_state partition the first call creates
        // may not be loaded yet; a fresh-clone run met NOT_COORDINATOR here).
        auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
        while (true) {
            auto resp = c.call<pr::init_producer_id_request, pr::init_producer_id_response>(4, req);
            EXPECT_TRUE(resp);
            if (!resp) {
                return pr::init_producer_id_response{};
            }
            const int16_t e = resp.value().error_code;
            if ((e != 14 && e != 15 && e != 16) || std::chrono::steady_clock::now() > deadline) {
                return resp.value();
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
    }
    // Every partition's error of a v0-v3 AddPartitionsToTxn, "topic-p" -> code.
    std::map<std::string, int16_t> add(int16_t version, const std::string& id, int64_t pid,
                                       int16_t epoch,
                                       std::vector<std::pair<std::string, int32_t>> parts) {
        kafka_client c(broker->port());
        pr::add_partitions_to_txn_request req;
        req.v3_and_below_transactional_id = id;
        req.v3_and_below_producer_id = pid;
        req.v3_and_below_producer_epoch = epoch;
        for (auto& [topic, p] : parts) {
            auto it = std::find_if(req.v3_and_below_topics.begin(), req.v3_and_below_topics.end(),
                                   [&](const auto& t) { return t.name == topic; });
            if (it == req.v3_and_below_topics.end()) {
                req.v3_and_below_topics.emplace_back().name = topic;
                it = std::prev(req.v3_and_below_topics.end());
            }
            it->partitions.push_back(p);
        }
        auto resp = c.call<pr::add_partitions_to_txn_request, pr::add_partitions_to_txn_response>(
            version, req);
        EXPECT_TRUE(resp);
        std::map<std::string, int16_t> out;
        for (const auto& t :
             resp.value_or(pr::add_partitions_to_txn_response{}).results_by_topic_v3_and_below) {
            for (const auto& p : t.results_by_partition) {
                out[t.name + "-" + std::to_string(p.partition_index)] = p.partition_error_code;
            }
        }
        return out;
    }
    // EndTxn at `version` (v5: transaction.version 2, which answers the producer id and epoch
    // to go on with); error -1 when no answer came.
    pr::end_txn_response end_call(const std::string& id, int64_t pid, int16_t epoch, bool commit,
                                  int16_t version) {
        kafka_client c(broker->port());
        pr::end_txn_request req;
        req.transactional_id = id;
        req.producer_id = pid;
        req.producer_epoch = epoch;
        req.committed = commit;
        auto resp = c.call<pr::end_txn_request, pr::end_txn_response>(version, req);
        EXPECT_TRUE(resp);
        pr::end_txn_response none_came;
        none_came.error_code = -1;
        return resp.value_or(none_came);
    }
    int16_t end(const std::string& id, int64_t pid, int16_t epoch, bool commit,
                int16_t version = 3) {
        return end_call(id, pid, epoch, commit, version).error_code;
    }
    pr::end_txn_response end_v5(const std::string& id, int64_t pid, int16_t epoch, bool commit) {
        return end_call(id, pid, epoch, commit, 5);
    }

    int16_t add_offsets(const std::string& id, int64_t pid, int16_t epoch,
                        const std::string& group) {
        kafka_client c(broker->port());
        pr::add_offsets_to_txn_request req;
        req.transactional_id = id;
        req.producer_id = pid;
        req.producer_epoch = epoch;
        req.group_id = group;
        auto resp = c.call<pr::add_offsets_to_txn_request, pr::add_offsets_to_txn_response>(3, req);
        EXPECT_TRUE(resp);
        return resp ? resp->error_code : int16_t{-1};
    }

    // One transactional batch of transactional id `id` (producer pid/epoch, sequence seq) to
    // orders-<partition>, acks=all, Produce v9; the partition's error code and message.
    std::pair<int16_t, std::string> produce(const std::string& id, int64_t pid, int16_t epoch,
                                            int32_t seq, int32_t partition, int16_t version = 9) {
        auto batch = producer_batch(pid, epoch, seq, {"v"});
        auto req = produce_req("orders", partition, batch, -1);
        req.transactional_id = id;
        kafka_client c(broker->port());
        auto resp = c.call<pr::produce_request, pr::produce_response>(version, req);
        EXPECT_TRUE(resp);
        if (!resp) {
            return {-999, ""};
        }
        const auto& p = resp->responses.at(0).partition_responses.at(0);
        return {p.error_code, p.error_message.value_or("")};
    }

    std::unique_ptr<broker_process> broker;
};

// KIP-890 part 1: the partition leader asks the coordinator before a producer's first write of
// a transaction there, and refuses what the coordinator does not know of with Kafka's answers
// (ReplicaManager.postVerificationCallback; compared with Kafka by txn_compat.py's
// partition_verification check).
TEST_F(txn_api_test, test_produce_to_a_partition_outside_the_transaction_is_refused) {
    ASSERT_EQ(init("verified").error_code, none);
    auto p = init("verified");  // epoch 1: epoch 0 is a fenced one below
    ASSERT_EQ(p.error_code, none);
    const auto pid = p.producer_id;
    const auto epoch = p.producer_epoch;
    // Nothing added yet: no transaction at all.
    EXPECT_EQ(produce("verified", pid, epoch, 0, 0),
              std::pair(invalid_txn_state, std::string("Partition was not added to the transaction")));
    ASSERT_EQ(add(3, "verified", pid, epoch, {{"orders", 0}})["orders-0"], none);
    EXPECT_EQ(produce("verified", pid, epoch, 0, 0).first, none);
    EXPECT_EQ(produce("verified", pid, epoch, 1, 0).first, none);  // open here: no question asked
    // orders-1 is not in the transaction.
    EXPECT_EQ(produce("verified", pid, epoch, 0, 1).first, invalid_txn_state);
    // A fenced epoch: PRODUCER_FENCED from the coordinator reaches the producer as
    // INVALID_PRODUCER_EPOCH; another producer id is not this id's.
    EXPECT_EQ(produce("verified", pid, static_cast<int16_t>(epoch - 1), 0, 1).first,
              invalid_producer_epoch);
    EXPECT_EQ(produce("verified", pid + 1, 0, 0, 1).first, invalid_producer_id_mapping);
    EXPECT_EQ(produce("ghost", pid + 7, 0, 0, 1).first, invalid_producer_id_mapping);
    ASSERT_EQ(end("verified", pid, epoch, true), none);
    // Until the commit marker is in orders-0 the transaction is still open there (a write joins
    // it, in Kafka too); a retried EndTxn answers CONCURRENT_TRANSACTIONS until every marker is
    // out. Meanwhile a verification answers CONCURRENT_TRANSACTIONS, which reaches the producer
    // as the retriable NOT_ENOUGH_REPLICAS.
    auto during = produce("verified", pid, epoch, 0, 1);
    EXPECT_TRUE(during.first == not_enough_replicas || during.first == invalid_txn_state)
        << during.first;  // the latter once the markers are all written
    if (during.first == not_enough_replicas) {
        EXPECT_EQ(during.second,
                  "Unable to verify the partition has been added to the transaction. Underlying "
                  "error: CONCURRENT_TRANSACTIONS");
    }
    for (int i = 0; i < 100 && end("verified", pid, epoch, true) == concurrent_transactions; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    // Then the partition is verified again, and a write the coordinator has not heard of is
    // refused although the partition was in the previous transaction (the hanging transaction
    // KIP-890 prevents).
    auto late = produce("verified", pid, epoch, 2, 0);
    EXPECT_EQ(late.first, invalid_txn_state);
}

// KIP-890 part 2 (transaction.version 2, the broker's default): a Produce v12 adds its partition
// to the transaction through the leader (no AddPartitionsToTxn), TxnOffsetCommit v5 adds the
// group's offsets partition (no AddOffsetsToTxn), EndTxn v5 answers the bumped epoch, the old
// epoch is fenced, and the next transaction's first write waits for the previous markers.
TEST_F(txn_api_test, test_tv2_produce_v12_adds_partitions_and_end_txn_v5_bumps_the_epoch) {
    auto p = init("tv2");
    ASSERT_EQ(p.error_code, none);
    const auto pid = p.producer_id;
    const auto epoch = p.producer_epoch;
    // v9 still only verifies: nothing was added.
    EXPECT_EQ(produce("tv2", pid, epoch, 0, 0).first, invalid_txn_state);
    ASSERT_EQ(produce("tv2", pid, epoch, 0, 0, 12).first, none);
    ASSERT_EQ(produce("tv2", pid, epoch, 1, 0, 12).first, none);
    auto ended = end_v5("tv2", pid, epoch, true);
    ASSERT_EQ(ended.error_code, none);
    EXPECT_EQ(ended.producer_id, pid);
    EXPECT_EQ(ended.producer_epoch, epoch + 1);
    // The old epoch is done: its late write to a partition outside the ended transaction is
    // fenced by the coordinator.
    EXPECT_EQ(produce("tv2", pid, epoch, 0, 1, 12).first, invalid_producer_epoch);
    // The next transaction (sequences restart with the epoch) waits for the markers.
    const auto next = ended.producer_epoch;
    std::pair<int16_t, std::string> first;
    for (int i = 0; i < 100; ++i) {
        first = produce("tv2", pid, next, 0, 0, 12);
        if (first.first != not_enough_replicas) {
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ASSERT_EQ(first.first, none) << first.second;

    // The offsets of a consume-transform-produce, with no AddOffsetsToTxn.
    kafka_client c(broker->port());
    pr::txn_offset_commit_request oc;
    oc.transactional_id = "tv2";
    oc.group_id = "tv2-group";
    oc.producer_id = pid;
    oc.producer_epoch = next;
    auto& t = oc.topics.emplace_back();
    t.name = "orders";
    t.partitions.emplace_back().partition_index = 0;
    t.partitions.back().committed_offset = 7;
    auto committed = c.call<pr::txn_offset_commit_request, pr::txn_offset_commit_response>(5, oc);
    ASSERT_TRUE(committed);
    EXPECT_EQ(committed->topics.at(0).partitions.at(0).error_code, none);

    auto aborted = end_v5("tv2", pid, next, false);
    ASSERT_EQ(aborted.error_code, none);
    EXPECT_EQ(aborted.producer_epoch, next + 1);
    // A retry of the decided abort (the answer was lost): the same id and epoch again, once
    // the markers are out (CONCURRENT_TRANSACTIONS until then).
    pr::end_txn_response retried;
    for (int i = 0; i < 100; ++i) {
        retried = end_v5("tv2", pid, next, false);
        if (retried.error_code != concurrent_transactions) {
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_EQ(retried.error_code, none);
    EXPECT_EQ(retried.producer_id, pid);
    EXPECT_EQ(retried.producer_epoch, next + 1);
    EXPECT_EQ(end_v5("tv2", pid, next, true).error_code, invalid_txn_state);
    EXPECT_EQ(end_v5("tv2", pid, static_cast<int16_t>(next + 2), false).error_code,
              producer_fenced);
}

// transaction.partition.verification.enable=false: the leader takes what it is sent, as Kafka
// before KIP-890 did (and as a follower always does).
TEST(txn_verification_off, test_unverified_write_is_taken_when_disabled) {
    broker_process broker;
    broker.add_override("transaction.partition.verification.enable=false");
    ASSERT_TRUE(broker.start()) << broker.log_text();
    kafka_client c(broker.port());
    ASSERT_EQ(create_topic(c, "orders", 1), 0);
    auto batch = producer_batch(4242, 0, 0, {"v"});
    auto req = produce_req("orders", 0, batch, -1);
    req.transactional_id = "nobody";
    auto resp = c.call<pr::produce_request, pr::produce_response>(9, req);
    ASSERT_TRUE(resp);
    EXPECT_EQ(resp->responses.at(0).partition_responses.at(0).error_code, none);
    auto info = broker.stop();
    EXPECT_TRUE(info.exited && info.status == 0) << broker.log_text();
}

TEST_F(txn_api_test, test_transactional_lifecycle_with_kafkas_errors) {
    kafka_client c(broker->port());
    pr::find_coordinator_request find;
    find.key_type = 1;
    find.coordinator_keys = {"app"};
    auto found = c.call<pr::find_coordinator_request, pr::find_coordinator_response>(4, find);
    ASSERT_TRUE(found);
    EXPECT_EQ(found->coordinators.at(0).error_code, none);
    EXPECT_EQ(found->coordinators.at(0).port, broker->port());

    auto first = init("app");
    ASSERT_EQ(first.error_code, none);
    EXPECT_GE(first.producer_id, 0);
    EXPECT_EQ(first.producer_epoch, 0);
    auto p = init("app");
    ASSERT_EQ(p.error_code, none);
    EXPECT_EQ(p.producer_id, first.producer_id);
    EXPECT_EQ(p.producer_epoch, 1);
    EXPECT_EQ(init("app", 100001).error_code, invalid_transaction_timeout);

    // An unknown partition fails the request; the others are not attempted.
    auto refused = add(3, "app", p.producer_id, p.producer_epoch, {{"orders", 0}, {"nope", 0}});
    EXPECT_EQ(refused["orders-0"], operation_not_attempted);
    EXPECT_EQ(refused["nope-0"], unknown_topic_or_partition);
    auto added = add(3, "app", p.producer_id, p.producer_epoch, {{"orders", 0}, {"orders", 1}});
    EXPECT_EQ(added["orders-0"], none);
    EXPECT_EQ(added["orders-1"], none);
    // The epoch before the re-init is fenced: PRODUCER_FENCED from v2, INVALID_PRODUCER_EPOCH
    // before (KIP-588); another producer id is not this id's.
    EXPECT_EQ(add(3, "app", p.producer_id, 0, {{"orders", 0}})["orders-0"], producer_fenced);
    EXPECT_EQ(add(1, "app", p.producer_id, 0, {{"orders", 0}})["orders-0"], invalid_producer_epoch);
    EXPECT_EQ(add(3, "app", p.producer_id + 1, 1, {{"orders", 0}})["orders-0"],
              invalid_producer_id_mapping);

    EXPECT_EQ(add_offsets("app", p.producer_id, p.producer_epoch, "etl"), none);

    EXPECT_EQ(end("app", p.producer_id, p.producer_epoch, true), none);
    // Decided: an abort is CONCURRENT_TRANSACTIONS while the markers are written (Kafka's
    // pending transition to CompleteCommit), then invalid; a retried commit is pending or done.
    int16_t abort_after = concurrent_transactions;
    for (int i = 0; i < 100 && abort_after == concurrent_transactions; ++i) {
        abort_after = end("app", p.producer_id, p.producer_epoch, false);
        if (abort_after == concurrent_transactions) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
    }
    EXPECT_EQ(abort_after, invalid_txn_state);
    auto retried = end("app", p.producer_id, p.producer_epoch, true);
    EXPECT_TRUE(retried == none || retried == concurrent_transactions) << retried;

    // Ending a transaction that never started is invalid.
    auto idle = init("idle");
    EXPECT_EQ(end("idle", idle.producer_id, idle.producer_epoch, true), invalid_txn_state);
}

// TxnOffsetCommit: pending until the commit marker reaches __consumer_offsets, invisible to a
// require_stable OffsetFetch (UNSTABLE_OFFSET_COMMIT) meanwhile, Kafka's per-partition errors.
TEST_F(txn_api_test, test_txn_offset_commit_pending_until_commit_marker) {
    constexpr int16_t illegal_generation = 22;
    constexpr int16_t unstable_offset_commit = 88;
    auto p = init("etl-app");
    ASSERT_EQ(p.error_code, none);
    ASSERT_EQ(add_offsets("etl-app", p.producer_id, p.producer_epoch, "etl"), none);
    auto commit = [&](int32_t generation, const std::string& member, int64_t offset = 42) {
        kafka_client c(broker->port());
        pr::txn_offset_commit_request req;
        req.transactional_id = "etl-app";
        req.group_id = "etl";
        req.producer_id = p.producer_id;
        req.producer_epoch = p.producer_epoch;
        req.generation_id = generation;
        req.member_id = member;
        auto& t = req.topics.emplace_back();
        t.name = "orders";
        t.partitions.emplace_back().partition_index = 0;
        t.partitions.back().committed_offset = offset;
        req.topics.emplace_back().name = "nope";
        req.topics.back().partitions.emplace_back().partition_index = 0;
        auto resp = c.call<pr::txn_offset_commit_request, pr::txn_offset_commit_response>(3, req);
        EXPECT_TRUE(resp);
        std::map<std::string, int16_t> out;
        for (const auto& rt : resp.value_or(pr::txn_offset_commit_response{}).topics) {
            for (const auto& rp : rt.partitions) {
                out[rt.name + "-" + std::to_string(rp.partition_index)] = rp.error_code;
            }
        }
        return out;
    };
    // A named generation of a group the coordinator does not know: a stale member.
    EXPECT_EQ(commit(5, "m-1")["orders-0"], illegal_generation);
    auto r = commit(-1, "");
    EXPECT_EQ(r["orders-0"], none);
    EXPECT_EQ(r["nope-0"], unknown_topic_or_partition);

    auto fetch = [&](bool require_stable) {
        kafka_client c(broker->port());
        pr::offset_fetch_request req;
        req.group_id = "etl";
        req.require_stable = require_stable;
        auto& t = req.topics.emplace();
        t.emplace_back().name = "orders";
        t.back().partition_indexes = {0};
        auto resp = c.call<pr::offset_fetch_request, pr::offset_fetch_response>(7, req);
        EXPECT_TRUE(resp);
        if (!resp || resp->error_code != none || resp->topics.empty()) {
            return std::pair(resp ? resp->error_code : int16_t{-1}, int64_t{-1});
        }
        const auto& part = resp->topics.at(0).partitions.at(0);
        return std::pair(part.error_code, part.committed_offset);
    };
    EXPECT_EQ(fetch(true).first, unstable_offset_commit);
    EXPECT_EQ(fetch(false), std::pair(none, int64_t{-1}));

    EXPECT_EQ(end("etl-app", p.producer_id, p.producer_epoch, true), none);
    // The markers are written after EndTxn answers: the offset shows up once they land.
    std::pair<int16_t, int64_t> seen;
    for (int i = 0; i < 200; ++i) {
        seen = fetch(true);
        if (seen == std::pair(none, int64_t{42})) {
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_EQ(seen, std::pair(none, int64_t{42})) << broker->log_text();

    // A second transaction's offset, still open across a restart: the replay of the
    // transactional batches and markers keeps 42 committed and 43 pending.
    ASSERT_EQ(add_offsets("etl-app", p.producer_id, p.producer_epoch, "etl"), none);
    ASSERT_EQ(commit(-1, "", 43)["orders-0"], none);
    auto info = broker->stop();
    ASSERT_TRUE(info.exited) << broker->log_text();
    ASSERT_TRUE(broker->start()) << broker->log_text();
    for (int i = 0; i < 200; ++i) {
        seen = fetch(false);
        if (seen.first == none) {
            break;  // the partition is loaded (COORDINATOR_LOAD_IN_PROGRESS / NOT_COORDINATOR)
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_EQ(seen, std::pair(none, int64_t{42}));
    EXPECT_EQ(fetch(true).first, unstable_offset_commit);
}

TEST_F(txn_api_test, test_second_producer_fences_the_first) {
    auto zombie = init("shared");
    ASSERT_EQ(zombie.error_code, none);
    EXPECT_EQ(
        add(3, "shared", zombie.producer_id, zombie.producer_epoch, {{"orders", 0}})["orders-0"],
        none);
    // The new instance waits while the zombie's transaction is aborted under a bumped epoch.
    EXPECT_EQ(init("shared").error_code, concurrent_transactions);
    EXPECT_EQ(end("shared", zombie.producer_id, zombie.producer_epoch, true), producer_fenced);
    EXPECT_EQ(end("shared", zombie.producer_id, zombie.producer_epoch, true, 1),
              invalid_producer_epoch);
}

TEST_F(txn_api_test, test_state_survives_restart_and_kafka_decodes_the_segment) {
    auto p = init("durable");
    ASSERT_EQ(p.error_code, none);
    ASSERT_EQ(add(3, "durable", p.producer_id, p.producer_epoch, {{"orders", 1}})["orders-1"],
              none);
    auto info = broker->stop();
    ASSERT_TRUE(info.exited);
    ASSERT_TRUE(broker->start()) << broker->log_text();
    // The reloaded coordinator knows the open transaction and its producer.
    EXPECT_EQ(add(3, "durable", p.producer_id + 5, 0, {{"orders", 0}})["orders-0"],
              invalid_producer_id_mapping);
    EXPECT_EQ(add(3, "durable", p.producer_id, p.producer_epoch, {{"orders", 0}})["orders-0"],
              none);
    EXPECT_EQ(end("durable", p.producer_id, p.producer_epoch, false), none);

    // Kafka's DumpLogSegments reads the records Spool wrote (after a clean stop, which trims
    // the active segment's preallocated tail as Kafka's own close does).
    ASSERT_TRUE(broker->stop().exited);
    const std::string kafka = kafka_dir();
    ASSERT_FALSE(kafka.empty()) << "no Kafka jars (scripts/peers/fetch-kafka.sh)";
    std::string segments;
    for (const auto& e : std::filesystem::recursive_directory_iterator(broker->data_dir())) {
        const auto path = e.path().string();
        if (path.find("__transaction_state-") != std::string::npos &&
            e.path().extension() == ".log" && std::filesystem::file_size(e.path()) > 0) {
            segments += (segments.empty() ? "" : ",") + path;
        }
    }
    ASSERT_FALSE(segments.empty());
    auto out = sh("java -cp '" + kafka +
                  "/libs/*' kafka.tools.DumpLogSegments "
                  "--transaction-log-decoder --deep-iteration --files " +
                  segments);
    ASSERT_TRUE(succeeded(out)) << out;
    EXPECT_NE(out.find("\"transactionalId\":\"durable\""), std::string::npos) << out;
    EXPECT_NE(out.find("\"producerId\":" + std::to_string(p.producer_id)), std::string::npos)
        << out;
    // Ongoing (1) with orders-1, then with both partitions, then PrepareAbort (3).
    EXPECT_NE(out.find("\"transactionStatus\":1"), std::string::npos) << out;
    EXPECT_NE(out.find("\"transactionStatus\":3"), std::string::npos) << out;
    EXPECT_NE(out.find("\"topic\":\"orders\",\"partitionIds\":[0,1]"), std::string::npos) << out;
    ASSERT_TRUE(broker->start()) << broker->log_text();
}

}  // namespace
}  // namespace spool::tests
