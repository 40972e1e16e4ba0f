// TxnOffsetCommit in the group coordinator: pending offsets per producer, completed by the
// transaction's marker, UNSTABLE_OFFSET_COMMIT for require_stable fetches, replay with markers,
// the KIP-447 member checks, and retention that keeps a group a transaction still writes to.

#include "broker/coordinator/tests/coordinator_fixture.h"

namespace spool::broker::coordinator::testing {
namespace {

std::error_code E(errc e) {
    return make_error_code(e);
}

model::topic_partition tp(std::string t, int32_t p) {
    return {std::move(t), model::partition_id{p}};
}

constexpr int64_t pid = 1000;
constexpr int16_t epoch = 3;

class txn_offsets_test : public coordinator_test {
protected:
    offset_commit_result txn_commit(int64_t producer, std::vector<offset_commit_entry> entries,
                                    int32_t generation = -1, const std::string& member = "",
                                    std::optional<std::string> instance = std::nullopt) {
        offset_commit_request req;
        req.group_id = group_id;
        req.generation_id = generation;
        req.member_id = member;
        req.group_instance_id = std::move(instance);
        req.offsets = std::move(entries);
        req.producer_id = producer;
        req.producer_epoch = epoch;
        pending<offset_commit_result> p;
        coord->commit_offsets(std::move(req), p.callback());
        EXPECT_TRUE(p.done());
        return p.done() ? p.get() : offset_commit_result{};
    }

    fetched_offset fetch(const std::string& topic, int32_t partition, bool require_stable) {
        offset_fetch_request req;
        req.group_id = group_id;
        req.topics = std::vector<offset_fetch_topic>{{topic, {partition}}};
        req.require_stable = require_stable;
        auto r = coord->fetch_offsets(req);
        EXPECT_FALSE(r.error);
        return r.offsets.at(0);
    }

    // The marker as WriteTxnMarkers delivers it: written to the log, then the coordinator told.
    void marker(int64_t producer, bool commit) {
        log.write_marker(producer, commit);
        coord->complete_txn(producer, commit);
    }
};

TEST_F(txn_offsets_test, test_pending_offsets_become_visible_on_commit) {
    auto r = txn_commit(pid, {{tp("orders", 0), 42, 1, std::string("m")}});
    ASSERT_EQ(r.errors.size(), 1u);
    EXPECT_FALSE(r.errors[0]);
    ASSERT_EQ(log.txn.size(), 1u);  // written as the producer's transactional batch
    EXPECT_EQ(log.txn[0].pid, pid);
    EXPECT_TRUE(log.records.empty());
    EXPECT_EQ(fetch("orders", 0, false).offset, -1);
    EXPECT_TRUE(coord->has_pending_txn(group_id));

    marker(pid, true);
    auto f = fetch("orders", 0, true);
    EXPECT_FALSE(f.error);
    EXPECT_EQ(f.offset, 42);
    EXPECT_EQ(f.leader_epoch, 1);
    EXPECT_EQ(f.metadata, "m");
    EXPECT_FALSE(coord->has_pending_txn(group_id));
}

TEST_F(txn_offsets_test, test_abort_drops_pending_offsets) {
    EXPECT_FALSE(txn_commit(-1, {{tp("orders", 0), 5, -1, std::nullopt}})
                     .errors.at(0));  // a plain commit first: 5
    EXPECT_FALSE(txn_commit(pid, {{tp("orders", 0), 42, -1, std::nullopt}}).errors.at(0));
    marker(pid, false);
    EXPECT_EQ(fetch("orders", 0, true).offset, 5);
    EXPECT_FALSE(coord->has_pending_txn(group_id));
}

TEST_F(txn_offsets_test, test_marker_of_other_producer_leaves_pending) {
    EXPECT_FALSE(txn_commit(pid, {{tp("orders", 0), 42, -1, std::nullopt}}).errors.at(0));
    marker(pid + 1, true);
    EXPECT_EQ(fetch("orders", 0, false).offset, -1);
    EXPECT_TRUE(coord->has_pending_txn(group_id));
}

TEST_F(txn_offsets_test, test_require_stable_answers_unstable_offset_commit) {
    EXPECT_FALSE(txn_commit(-1, {{tp("orders", 0), 5, -1, std::nullopt}}).errors.at(0));
    EXPECT_FALSE(txn_commit(pid, {{tp("orders", 0), 9, -1, std::nullopt}}).errors.at(0));
    EXPECT_EQ(fetch("orders", 0, true).error, E(errc::unstable_offset_commit));
    EXPECT_FALSE(fetch("orders", 1, true).error);  // another partition is stable
    auto plain = fetch("orders", 0, false);
    EXPECT_FALSE(plain.error);
    EXPECT_EQ(plain.offset, 5);  // the last committed value
    offset_fetch_request all;
    all.group_id = group_id;
    all.require_stable = true;
    auto r = coord->fetch_offsets(all);
    ASSERT_EQ(r.offsets.size(), 1u);
    EXPECT_EQ(r.offsets[0].error, E(errc::unstable_offset_commit));
    marker(pid, true);
    EXPECT_EQ(fetch("orders", 0, true).offset, 9);
}

TEST_F(txn_offsets_test, test_replay_with_markers_rebuilds_the_same_state) {
    EXPECT_FALSE(txn_commit(-1, {{tp("orders", 0), 1, -1, std::nullopt}}).errors.at(0));
    EXPECT_FALSE(txn_commit(pid, {{tp("orders", 0), 10, -1, std::nullopt}}).errors.at(0));
    EXPECT_FALSE(txn_commit(pid + 1, {{tp("orders", 1), 20, -1, std::nullopt}}).errors.at(0));
    EXPECT_FALSE(txn_commit(pid + 2, {{tp("orders", 2), 30, -1, std::nullopt}}).errors.at(0));
    marker(pid, true);
    marker(pid + 1, false);
    // A plain commit after the transaction's commit wins over it.
    EXPECT_FALSE(txn_commit(-1, {{tp("orders", 3), 4, -1, std::nullopt}}).errors.at(0));

    make();  // the partition loads again from its log
    EXPECT_EQ(fetch("orders", 0, true).offset, 10);
    EXPECT_EQ(fetch("orders", 1, true).offset, -1);
    EXPECT_FALSE(fetch("orders", 1, true).error);
    EXPECT_EQ(fetch("orders", 2, true).error, E(errc::unstable_offset_commit));  // no marker yet
    EXPECT_EQ(fetch("orders", 3, true).offset, 4);
    coord->complete_txn(pid + 2, true);  // its marker arrives after the load
    EXPECT_EQ(fetch("orders", 2, true).offset, 30);
}

TEST_F(txn_offsets_test, test_plain_commit_written_after_pending_offset_wins) {
    EXPECT_FALSE(txn_commit(pid, {{tp("orders", 0), 10, -1, std::nullopt}}).errors.at(0));
    EXPECT_FALSE(txn_commit(-1, {{tp("orders", 0), 3, -1, std::nullopt}}).errors.at(0));
    EXPECT_FALSE(txn_commit(pid, {{tp("orders", 1), 11, -1, std::nullopt}}).errors.at(0));
    marker(pid, true);
    EXPECT_EQ(fetch("orders", 0, true).offset, 3);
    EXPECT_EQ(fetch("orders", 1, true).offset, 11);
    make();
    EXPECT_EQ(fetch("orders", 0, true).offset, 3);
    EXPECT_EQ(fetch("orders", 1, true).offset, 11);
}

TEST_F(txn_offsets_test, test_generation_checks_for_named_member) {
    const std::string member = stable_single_member();
    const int32_t gen = generation();
    EXPECT_FALSE(txn_commit(pid, {{tp("orders", 0), 1, -1, std::nullopt}}, gen, member).errors[0]);
    EXPECT_EQ(txn_commit(pid, {{tp("orders", 0), 1, -1, std::nullopt}}, gen + 1, member).errors[0],
              E(errc::illegal_generation));
    EXPECT_EQ(txn_commit(pid, {{tp("orders", 0), 1, -1, std::nullopt}}, gen, "nobody").errors[0],
              E(errc::unknown_member_id));
    // Generation -1 and no member: the checks are skipped even though the group has members.
    EXPECT_FALSE(txn_commit(pid, {{tp("orders", 0), 1, -1, std::nullopt}}).errors[0]);
}

TEST_F(txn_offsets_test, test_fenced_instance_id) {
    auto j = join(join_req("", std::string("inst-1")));
    ASSERT_TRUE(j.done());
    ASSERT_FALSE(j.get().error);
    const std::string member = j.get().member_id;
    auto s = sync(member, j.get().generation_id, {{member, bytes{1}}});
    ASSERT_TRUE(s.done());
    EXPECT_EQ(txn_commit(pid, {{tp("orders", 0), 1, -1, std::nullopt}}, generation(), "other",
                         std::string("inst-1"))
                  .errors[0],
              E(errc::fenced_instance_id));
}

TEST_F(txn_offsets_test, test_group_with_pending_offsets_is_not_expired) {
    cfg.offsets_retention_ms = 1000;
    cfg.retention_check_interval_ms = 500;
    make();
    EXPECT_FALSE(txn_commit(pid, {{tp("orders", 0), 1, -1, std::nullopt}}).errors.at(0));
    marker(pid, true);
    EXPECT_FALSE(txn_commit(pid, {{tp("orders", 0), 2, -1, std::nullopt}}).errors.at(0));
    tick(5000);
    ASSERT_NE(coord->find_group(group_id), nullptr);
    EXPECT_EQ(fetch("orders", 0, false).offset, 1);
    marker(pid, true);
    EXPECT_EQ(fetch("orders", 0, false).offset, 2);
}

}  // namespace
}  // namespace spool::broker::coordinator::testing
