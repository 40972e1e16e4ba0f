// The transaction coordinator in a three-broker cluster whose coordinator broker is killed
// with -9: __transaction_state has 3 replicas (the default), so the id's partition gets a new
// leader, whose coordinator replays the partition and serves the transaction that was decided
// (PrepareCommit durable, acks=all) before the kill: DescribeTransactions on the new
// coordinator shows it with the same producer id and epoch, committed or still committing, and
// it ends CompleteCommit (the new coordinator resends the markers of a PrepareCommit it loads).

#include "protocol/messages/add_partitions_to_txn.h"
#include "protocol/messages/describe_transactions.h"
#include "protocol/messages/end_txn.h"
#include "protocol/messages/find_coordinator.h"
#include "protocol/messages/init_producer_id.h"
#include "protocol/messages/produce.h"
#include "tests/cluster/cluster_harness.h"
#include "tests/integration/kafka_client.h"
#include "tests/integration/txn_batch.h"

#include <gtest/gtest.h>

#include <thread>

namespace spool::tests::cluster {
namespace {

using namespace std::chrono_literals;
namespace pr = spool::protocol;

// (error, node) of FindCoordinator(TRANSACTION) asked of the broker on `port`.
std::pair<int16_t, int32_t> find_txn_coordinator(uint16_t port, const std::string& id) {
    kafka_client c(port);
    pr::find_coordinator_request req;
    req.key_type = 1;
    req.coordinator_keys = {id};
    auto resp = c.call<pr::find_coordinator_request, pr::find_coordinator_response>(4, req);
    if (!resp || resp->coordinators.empty()) {
        return {-1, -1};
    }
    return {resp->coordinators[0].error_code, resp->coordinators[0].node_id};
}

// One transactional batch of (id, pid, epoch, seq 0) to orders-<partition> on the broker on
// `port`, acks=all: the partition's error code (-999: no answer).
int16_t produce_txn(uint16_t port, const std::string& id, int64_t pid, int16_t epoch,
                    int32_t partition) {
    auto batch = producer_batch(pid, epoch, 0, {"v"});
    pr::produce_request req;
    req.transactional_id = id;
    req.acks = -1;
    req.timeout_ms = 10000;
    auto& t = req.topic_data.emplace_back();
    t.name = "orders";
    auto& pd = t.partition_data.emplace_back();
    pd.index = partition;
    pd.records = pr::records_field::view(batch);
    kafka_client c(port);
    auto resp = c.call<pr::produce_request, pr::produce_response>(9, req);
    return resp ? resp->responses.at(0).partition_responses.at(0).error_code : int16_t{-999};
}

TEST(cluster_txn, decided_commit_is_served_by_the_new_coordinator_after_kill9) {
    cluster_harness cluster(cluster_options{});
    auto err = cluster.start();
    ASSERT_TRUE(err.empty()) << err;
    // Replicated too, so the markers' partitions fail over as well (an RF=1 partition on the
    // killed broker would hold its marker, rightly, until that broker is back).
    ASSERT_EQ(create_topic_via(cluster.port(0), "orders", 3, 30000, nullptr, 3), 0);
    const std::string id = "failover-app";

    std::pair<int16_t, int32_t> found{-1, -1};
    auto deadline = std::chrono::steady_clock::now() + 30s;
    while (std::chrono::steady_clock::now() < deadline &&
           (found = find_txn_coordinator(cluster.port(0), id)).first != 0) {
        std::this_thread::sleep_for(200ms);
    }
    ASSERT_EQ(found.first, 0) << "no transaction coordinator: " << cluster.log_tails();
    const int32_t first = found.second;
    const uint16_t at = cluster.port(static_cast<size_t>(first));

    kafka_client c(at);
    pr::init_producer_id_request init;
    init.transactional_id = id;
    init.transaction_timeout_ms = 60000;
    // FindCoordinator names the state partition's leader as soon as the snapshot does; until
    // that broker has loaded the partition it answers NOT_COORDINATOR (16),
    // COORDINATOR_LOAD_IN_PROGRESS (14) or COORDINATOR_NOT_AVAILABLE (15), and a client retries,
    // as this does.
    auto p = c.call<pr::init_producer_id_request, pr::init_producer_id_response>(4, init);
    for (deadline = std::chrono::steady_clock::now() + 30s;
         p && (p->error_code == 14 || p->error_code == 15 || p->error_code == 16) &&
         std::chrono::steady_clock::now() < deadline;) {
        std::this_thread::sleep_for(200ms);
        p = c.call<pr::init_producer_id_request, pr::init_producer_id_response>(4, init);
    }
    ASSERT_TRUE(p);
    ASSERT_EQ(p->error_code, 0) << cluster.log_tails();
    pr::add_partitions_to_txn_request add;
    add.v3_and_below_transactional_id = id;
    add.v3_and_below_producer_id = p->producer_id;
    add.v3_and_below_producer_epoch = p->producer_epoch;
    auto& t = add.v3_and_below_topics.emplace_back();
    t.name = "orders";
    t.partitions = {0, 1};
    auto added =
        c.call<pr::add_partitions_to_txn_request, pr::add_partitions_to_txn_response>(3, add);
    ASSERT_TRUE(added);
    for (const auto& r : added->results_by_topic_v3_and_below.at(0).results_by_partition) {
        ASSERT_EQ(r.partition_error_code, 0);
    }
    // KIP-890 part 1 between brokers: each partition's leader asks the coordinator (over the
    // inter-broker listener when that is another broker) before the first write; orders-2 is
    // not in the transaction: INVALID_TXN_STATE (48).
    auto md = cluster.metadata(0, {"orders"});
    ASSERT_TRUE(md && md->all_led("orders", 3)) << (md ? md->describe() : "no metadata");
    for (const auto& part : md->topic("orders")->partitions) {
        const int32_t i = part.index;
        const int32_t leader = part.leader;
        EXPECT_EQ(produce_txn(cluster.port(static_cast<size_t>(leader)), id, p->producer_id,
                              p->producer_epoch, i),
                  i < 2 ? 0 : 48)
            << "orders-" << i << " led by " << leader << ", coordinator " << first;
    }
    pr::end_txn_request end;
    end.transactional_id = id;
    end.producer_id = p->producer_id;
    end.producer_epoch = p->producer_epoch;
    end.committed = true;
    auto ended = c.call<pr::end_txn_request, pr::end_txn_response>(3, end);
    ASSERT_TRUE(ended);
    ASSERT_EQ(ended->error_code, 0);

    cluster.kill9(static_cast<size_t>(first));
    const size_t other = first == 0 ? 1 : 0;
    deadline = std::chrono::steady_clock::now() +
               std::chrono::milliseconds(cluster.options().session_timeout_ms) * 5;
    while (std::chrono::steady_clock::now() < deadline) {
        found = find_txn_coordinator(cluster.port(other), id);
        if (found.first == 0 && found.second != first) {
            break;
        }
        std::this_thread::sleep_for(200ms);
    }
    ASSERT_EQ(found.first, 0) << cluster.log_tails();
    ASSERT_NE(found.second, first) << "the coordinator did not move";

    kafka_client d(cluster.port(static_cast<size_t>(found.second)));
    pr::describe_transactions_request describe;
    describe.transactional_ids = {id};
    std::string state;
    deadline = std::chrono::steady_clock::now() + 10s;
    while (std::chrono::steady_clock::now() < deadline) {
        auto r = d.call<pr::describe_transactions_request, pr::describe_transactions_response>(
            0, describe);
        ASSERT_TRUE(r);
        const auto& s = r->transaction_states.at(0);
        if (s.error_code == 0) {
            state = s.transaction_state;
            EXPECT_EQ(s.producer_id, p->producer_id);
            EXPECT_EQ(s.producer_epoch, p->producer_epoch);
            break;
        }
        std::this_thread::sleep_for(200ms);  // NOT_COORDINATOR until the load finished
    }
    EXPECT_TRUE(state == "PrepareCommit" || state == "CompleteCommit") << "'" << state << "'";
    // The new coordinator finishes it: markers to the partitions' leaders, then CompleteCommit.
    deadline = std::chrono::steady_clock::now() + 20s;
    while (state != "CompleteCommit" && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(200ms);
        auto r = d.call<pr::describe_transactions_request, pr::describe_transactions_response>(
            0, describe);
        ASSERT_TRUE(r);
        state = r->transaction_states.at(0).transaction_state;
    }
    EXPECT_EQ(state, "CompleteCommit") << cluster.log_tails();
    // The producer carries on with the new coordinator: a retried commit is pending or done.
    kafka_client e(cluster.port(static_cast<size_t>(found.second)));
    auto again = e.call<pr::end_txn_request, pr::end_txn_response>(3, end);
    ASSERT_TRUE(again);
    EXPECT_TRUE(again->error_code == 0 || again->error_code == 51) << again->error_code;
}

}  // namespace
}  // namespace spool::tests::cluster
