// Round trips through a real storage partition_log in a temporary directory: what a broker
// restart does to __consumer_offsets.

#include "broker/coordinator/partition_group_log.h"
#include "broker/coordinator/tests/coordinator_fixture.h"
#include "common/testing/temp_dir.h"

#include <cstdlib>
#include <filesystem>

namespace spool::broker::coordinator::testing {
namespace {

model::topic_partition tp(std::string t, int32_t p) {
    return {std::move(t), model::partition_id{p}};
}

class temp_dir : public spool::testing::temp_dir {
public:
    temp_dir() : spool::testing::temp_dir("spool-coordinator-tests") {}
};

class persistence_test : public ::testing::Test {
protected:
    void SetUp() override { open(); }
    void TearDown() override { close(); }

    void open() {
        storage::log_config lc;
        lc.cleanup = storage::cleanup_policy::compact;
        lc.segment_bytes = segment_bytes;
        auto l = storage::partition_log::open(dir.path() / "__consumer_offsets-7",
                                              tp("__consumer_offsets", 7), lc);
        ASSERT_TRUE(l) << l.error().message();
        // The only replica, leading: a write is committed as soon as it is in the log.
        replication::partition_options po;
        po.self = 0;
        part =
            std::make_unique<replication::partition>(std::move(l.value()), io.get_executor(), po);
        part->apply({0, 1, 0, {0}, {0}, 0});
        glog = std::make_unique<partition_group_log>([this] { return part.get(); }, clk,
                                                     partition_group_log::commit_options{});
        cfg.initial_rebalance_delay_ms = 0;
        coord = std::make_unique<group_coordinator>(7, cfg, clk, *glog);
        ASSERT_FALSE(coord->load());
    }

    void close() {
        coord.reset();
        glog.reset();
        if (part) {
            ASSERT_TRUE(part->log().close());
            part.reset();
        }
    }

    void restart() {
        close();
        open();
    }

    void commit(const std::string& group, int32_t gen, const std::string& member,
                std::vector<offset_commit_entry> entries) {
        pending<offset_commit_result> p;
        coord->commit_offsets({group, gen, member, std::nullopt, std::move(entries)}, p.callback());
        ASSERT_TRUE(p.done());
        for (auto& e : p.get().errors) {
            ASSERT_FALSE(e) << e.message();
        }
    }

    int64_t fetched(const std::string& group, const model::topic_partition& t) {
        auto r = coord->fetch_offsets(
            {group, std::vector<offset_fetch_topic>{{t.topic, {t.partition.value()}}}});
        EXPECT_FALSE(r.error);
        return r.offsets.at(0).offset;
    }

    // One member joined (KIP-394 two-step) and synced; returns its id.
    std::string stable_member(const std::string& group) {
        join_request req;
        req.group_id = group;
        req.require_known_member_id = true;
        req.client_id = "c";
        req.session_timeout_ms = 10000;
        req.rebalance_timeout_ms = 10000;
        req.protocol_type = "consumer";
        req.protocols = {{"range", subscription({"orders"})}};
        pending<join_result> first;
        coord->join_group(req, first.callback());
        req.member_id = first.get().member_id;
        pending<join_result> second;
        coord->join_group(req, second.callback());
        EXPECT_FALSE(second.get().error);
        pending<sync_result> s;
        coord->sync_group({group, 1, req.member_id, std::nullopt, {}, {}, {{req.member_id, {7}}}},
                          s.callback());
        EXPECT_FALSE(s.get().error);
        return req.member_id;
    }

    uint32_t segment_bytes = 1024 * 1024;
    temp_dir dir;
    manual_clock clk;
    coordinator_config cfg;
    boost::asio::io_context io;  // the partition's owner (nothing runs on it here)
    std::unique_ptr<replication::partition> part;
    std::unique_ptr<partition_group_log> glog;
    std::unique_ptr<group_coordinator> coord;
};

TEST_F(persistence_test, test_restart_recovers_committed_offsets_and_groups) {
    std::string m = stable_member("app");
    commit("app", 1, m,
           {{tp("orders", 0), 100, 2, std::string("meta")}, {tp("orders", 1), 5, -1, {}}});
    commit("app", 1, m, {{tp("orders", 0), 150, 2, {}}});
    commit("tool", -1, "", {{tp("logs", 3), 9, -1, {}}});
    EXPECT_GT(part->log().log_end_offset().value(), 0);

    restart();

    EXPECT_EQ(fetched("app", tp("orders", 0)), 150);  // the latest commit wins
    EXPECT_EQ(fetched("app", tp("orders", 1)), 5);
    EXPECT_EQ(fetched("tool", tp("logs", 3)), 9);
    const group* g = coord->find_group("app");
    ASSERT_NE(g, nullptr);
    EXPECT_EQ(g->state(), group_state::stable);
    EXPECT_EQ(g->generation(), 1);
    EXPECT_TRUE(g->is_leader(m));
    EXPECT_EQ(coord->heartbeat({"app", 1, m, std::nullopt}), std::error_code{});
    auto d = coord->describe_group("app");
    ASSERT_EQ(d.members.size(), 1u);
    EXPECT_EQ(d.members[0].assignment, bytes{7});
}

TEST_F(persistence_test, test_deletions_survive_restart) {
    std::string m = stable_member("app");
    commit("app", 1, m, {{tp("orders", 0), 1, -1, {}}, {tp("gone", 0), 2, -1, {}}});
    pending<offset_delete_result> del;
    coord->delete_offsets("app", {tp("gone", 0)}, del.callback());
    ASSERT_FALSE(del.get().error);

    commit("temp", -1, "", {{tp("t", 0), 1, -1, {}}});
    pending<std::error_code> gdel;
    coord->delete_group("temp", gdel.callback());
    ASSERT_FALSE(gdel.get());

    restart();

    EXPECT_EQ(fetched("app", tp("orders", 0)), 1);
    EXPECT_EQ(fetched("app", tp("gone", 0)), -1);
    EXPECT_EQ(coord->find_group("temp"), nullptr);
}

// What partition_manager does when the partition is deleted or the broker closes its logs: the
// log goes while the coordinator still runs. Its writes must find that out, not use the log.
void drop_log(std::unique_ptr<replication::partition>& part) {
    ASSERT_TRUE(part->log().close());
    part.reset();
}

TEST_F(persistence_test, test_commit_after_its_log_is_gone_answers_not_coordinator) {
    commit("app", -1, "", {{tp("orders", 0), 5, -1, {}}});
    drop_log(part);
    pending<offset_commit_result> p;
    coord->commit_offsets({"app", -1, "", std::nullopt, {{tp("orders", 0), 6, -1, {}}}},
                          p.callback());
    ASSERT_TRUE(p.done());
    EXPECT_EQ(p.get().errors.at(0), make_error_code(errc::not_coordinator));
    EXPECT_EQ(fetched("app", tp("orders", 0)), 5);
}

TEST_F(persistence_test, test_delete_group_without_its_log_keeps_the_group_on_disk_too) {
    commit("temp", -1, "", {{tp("t", 0), 1, -1, {}}});
    drop_log(part);
    pending<std::error_code> gdel;
    coord->delete_group("temp", gdel.callback());
    EXPECT_EQ(gdel.get(), make_error_code(errc::not_coordinator));
    const group* g = coord->find_group("temp");
    ASSERT_NE(g, nullptr);
    EXPECT_EQ(g->state(), group_state::empty);

    restart();
    EXPECT_EQ(fetched("temp", tp("t", 0)), 1);
    EXPECT_NE(coord->find_group("temp"), nullptr);
}

TEST_F(persistence_test, test_state_is_the_same_after_compaction) {
    segment_bytes = 4096;  // many small segments so that compaction has closed ones to clean
    restart();
    for (int i = 0; i < 200; ++i) {
        commit("busy", -1, "", {{tp("t", i % 4), i, -1, {}}});
    }
    commit("dropped", -1, "", {{tp("t", 0), 1, -1, {}}});
    pending<std::error_code> gdel;
    coord->delete_group("dropped", gdel.callback());
    ASSERT_FALSE(gdel.get());
    ASSERT_GT(part->log().segment_count(), 2u);

    auto compacted = part->log().compact();
    ASSERT_TRUE(compacted) << compacted.error().message();
    EXPECT_GT(compacted.value().records_removed, 0u);

    restart();
    for (int p = 0; p < 4; ++p) {
        EXPECT_EQ(fetched("busy", tp("t", p)), 196 + p);
    }
    EXPECT_EQ(coord->find_group("dropped"), nullptr);
}

}  // namespace
}  // namespace spool::broker::coordinator::testing
