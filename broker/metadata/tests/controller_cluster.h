#pragma once

// A cluster of in-process brokers for the controller's tests against a real etcd: each member is
// an etcd_store (with its broker session and a two-shard pool) plus the controller that the
// composition root would wire to it. freeze() stops a member's store thread (its keep-alives, its
// watch and its controller) as SIGSTOP or a crash would, while the others keep going; thaw()
// lets it resume where it stopped, with the stale view it had.
//
// Threading: the test thread drives everything; the stores run their own threads.

#include "broker/metadata/controller/controller.h"
#include "broker/metadata/etcd/etcd_store.h"
#include "broker/metadata/tests/etcd_test_support.h"
#include "tests/integration/etcd_process.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

namespace spool::broker::metadata::testing {

inline constexpr std::chrono::milliseconds test_session_timeout{3000};

struct member {
    int32_t node_id = -1;
    std::unique_ptr<etcd_store> store;
    std::unique_ptr<runtime::shard_pool> pool;
    std::shared_ptr<controller> ctl;
    std::shared_ptr<std::promise<void>> frozen;  // set while frozen

    etcd_store* operator->() const { return store.get(); }
    cluster_snapshot snapshot() const { return store->snapshot(); }
    // Read on the store's thread, where the controller lives.
    int64_t epoch() const;
    // Blocks the store's thread until thaw(): nothing of this member touches etcd meanwhile.
    void freeze();
    void thaw();
    // Controller first (resigns), then the store (revokes the session), then the shards.
    void stop();
    ~member() { stop(); }
};

class controller_cluster_test : public ::testing::Test {
protected:
    void SetUp() override;
    void TearDown() override;

    etcd_store_options options(const std::string& endpoint) const;
    // A registered broker with its controller started.
    std::unique_ptr<member> start_member(int32_t node_id,
                                         std::optional<std::string> rack = std::nullopt);
    // Node 0 first, elected before the others 1..count-1 start: the controller is known.
    std::vector<std::unique_ptr<member>> start_with_controller_first(int count);
    // The members' common controller id once every given member shows the same one and exactly
    // one of their controllers holds an epoch; -1 when that does not happen within timeout.
    int32_t agreed_controller(const std::vector<member*>& members,
                              std::chrono::milliseconds timeout = std::chrono::seconds(10));
    // Creates a topic on one of m's shards, waiting for placement.
    result<topic_metadata> create(member& m, const std::string& topic, int32_t partitions,
                                  int16_t replication_factor = 1);
    // The same without waiting: the creation's outcome (placed, or its error) comes later.
    std::future<std::error_code> create_async(member& m, const std::string& topic,
                                              int32_t partitions, size_t shard);
    // P/controller as etcd has it now: its create_revision (the epoch) and decoded value.
    std::optional<std::pair<int64_t, etcd_layout::controller_record>> controller_key();

    std::string name;
    std::filesystem::path dir;
    std::chrono::milliseconds change_timeout{10000};
    tests::etcd_process etcd;
    std::unique_ptr<raw_etcd> raw;
};

// Leaders per broker over every partition of s (-1: leaderless).
std::map<int32_t, int> leader_counts(const cluster_state& s);

}  // namespace spool::broker::metadata::testing
