// OffsetCommit/Fetch/Delete, ListGroups, DescribeGroups, DeleteGroups and retention.

#include "broker/coordinator/record_codec.h"
#include "broker/coordinator/tests/coordinator_fixture.h"

namespace spool::broker::coordinator::testing {
namespace {

std::error_code E(errc e) {
    return make_error_code(e);
}

model::topic_partition tp(std::string t, int32_t p) {
    return {std::move(t), model::partition_id{p}};
}

class offsets_test : public coordinator_test {
protected:
    offset_commit_result commit(int32_t generation, const std::string& member,
                                std::vector<offset_commit_entry> entries) {
        pending<offset_commit_result> p;
        coord->commit_offsets({group_id, generation, member, std::nullopt, std::move(entries)},
                              p.callback());
        EXPECT_TRUE(p.done());
        return p.done() ? p.get() : offset_commit_result{};
    }

    int64_t fetched(const std::string& topic, int32_t partition) {
        auto r =
            coord->fetch_offsets({group_id, std::vector<offset_fetch_topic>{{topic, {partition}}}});
        EXPECT_FALSE(r.error);
        return r.offsets.at(0).offset;
    }
};

TEST_F(offsets_test, test_simple_commit_without_group_creates_empty_group) {
    auto r = commit(
        -1, "",
        {{tp("orders", 0), 42, 5, std::string("meta")}, {tp("orders", 1), 7, -1, std::nullopt}});
    ASSERT_EQ(r.errors.size(), 2u);
    EXPECT_FALSE(r.errors[0]);
    EXPECT_FALSE(r.errors[1]);
    EXPECT_EQ(state(), group_state::empty);
    auto f =
        coord->fetch_offsets({group_id, std::vector<offset_fetch_topic>{{"orders", {0, 1, 2}}}});
    ASSERT_EQ(f.offsets.size(), 3u);
    EXPECT_EQ(f.offsets[0].offset, 42);
    EXPECT_EQ(f.offsets[0].leader_epoch, 5);
    EXPECT_EQ(f.offsets[0].metadata, "meta");
    EXPECT_EQ(f.offsets[1].offset, 7);
    EXPECT_EQ(f.offsets[2].offset, -1);  // never committed

    auto all = coord->fetch_offsets({group_id, std::nullopt});
    EXPECT_EQ(all.offsets.size(), 2u);
}

TEST_F(offsets_test, test_fetch_for_unknown_group_returns_no_offsets) {
    EXPECT_EQ(fetched("orders", 0), -1);
    EXPECT_TRUE(coord->fetch_offsets({"other", std::nullopt}).offsets.empty());
}

TEST_F(offsets_test, test_member_commit_checks_generation_and_membership) {
    std::string a = stable_single_member();
    EXPECT_FALSE(commit(1, a, {{tp("orders", 0), 10, -1, {}}}).errors[0]);
    EXPECT_EQ(fetched("orders", 0), 10);
    EXPECT_EQ(commit(0, a, {{tp("orders", 0), 11, -1, {}}}).errors[0], E(errc::illegal_generation));
    EXPECT_EQ(commit(1, "stranger", {{tp("orders", 0), 11, -1, {}}}).errors[0],
              E(errc::unknown_member_id));
    // A simple commit into a group that has members is not allowed either.
    EXPECT_EQ(commit(-1, "", {{tp("orders", 0), 11, -1, {}}}).errors[0],
              E(errc::unknown_member_id));
    EXPECT_EQ(fetched("orders", 0), 10);

    group_id = "unknown";
    EXPECT_EQ(commit(3, "m", {{tp("orders", 0), 1, -1, {}}}).errors[0],
              E(errc::illegal_generation));
}

TEST_F(offsets_test, test_commit_during_completing_rebalance_is_rejected) {
    auto j = join_new();
    ASSERT_EQ(state(), group_state::completing_rebalance);
    EXPECT_EQ(commit(1, j.get().member_id, {{tp("orders", 0), 1, -1, {}}}).errors[0],
              E(errc::rebalance_in_progress));
}

TEST_F(offsets_test, test_commit_is_visible_only_once_durable) {
    log.hold_appends = true;
    pending<offset_commit_result> p;
    coord->commit_offsets({group_id, -1, "", std::nullopt, {{tp("orders", 0), 5, -1, {}}}},
                          p.callback());
    EXPECT_FALSE(p.done());
    EXPECT_EQ(fetched("orders", 0), -1);
    log.release();
    ASSERT_TRUE(p.done());
    EXPECT_EQ(fetched("orders", 0), 5);
}

TEST_F(offsets_test, test_failed_append_reports_error_and_keeps_old_offset) {
    (void)commit(-1, "", {{tp("orders", 0), 5, -1, {}}});
    log.fail_appends = true;
    auto r = commit(-1, "", {{tp("orders", 0), 6, -1, {}}});
    EXPECT_EQ(r.errors[0], E(errc::storage_error));
    EXPECT_EQ(fetched("orders", 0), 5);
}

TEST_F(offsets_test, test_oversized_metadata_is_rejected_per_partition) {
    auto r = commit(-1, "",
                    {{tp("orders", 0), 1, -1, std::string(cfg.max_metadata_bytes + 1, 'x')},
                     {tp("orders", 1), 2, -1, {}}});
    EXPECT_EQ(r.errors[0], E(errc::offset_metadata_too_large));
    EXPECT_FALSE(r.errors[1]);
}

TEST_F(offsets_test, test_offset_delete_refuses_subscribed_topics) {
    std::string a = stable_single_member();  // subscribed to "orders"
    (void)commit(1, a, {{tp("orders", 0), 1, -1, {}}, {tp("old", 0), 2, -1, {}}});
    pending<offset_delete_result> p;
    coord->delete_offsets(group_id, {tp("orders", 0), tp("old", 0)}, p.callback());
    ASSERT_TRUE(p.done());
    EXPECT_FALSE(p.get().error);
    EXPECT_EQ(p.get().partition_errors[0], E(errc::group_subscribed_to_topic));
    EXPECT_FALSE(p.get().partition_errors[1]);
    EXPECT_EQ(fetched("orders", 0), 1);
    EXPECT_EQ(fetched("old", 0), -1);
    ASSERT_FALSE(log.records.back().value.has_value());  // a tombstone

    pending<offset_delete_result> missing;
    coord->delete_offsets("nope", {tp("orders", 0)}, missing.callback());
    EXPECT_EQ(missing.get().error, E(errc::group_id_not_found));
}

TEST_F(offsets_test, test_delete_groups_requires_empty_group_and_writes_tombstones) {
    std::string a = stable_single_member();
    (void)commit(1, a, {{tp("orders", 0), 1, -1, {}}});
    pending<std::error_code> busy;
    coord->delete_group(group_id, busy.callback());
    EXPECT_EQ(busy.get(), E(errc::non_empty_group));

    (void)coord->leave_group(group_id, {{a, std::nullopt}});
    ASSERT_EQ(state(), group_state::empty);
    size_t before = log.records.size();
    pending<std::error_code> del;
    coord->delete_group(group_id, del.callback());
    EXPECT_FALSE(del.get());
    EXPECT_EQ(coord->find_group(group_id), nullptr);
    ASSERT_EQ(log.records.size(), before + 2);  // offset tombstone + group tombstone
    EXPECT_FALSE(log.records[before].value);
    EXPECT_FALSE(log.records[before + 1].value);

    pending<std::error_code> again;
    coord->delete_group(group_id, again.callback());
    EXPECT_EQ(again.get(), E(errc::group_id_not_found));
}

TEST_F(offsets_test, test_delete_group_keeps_the_group_when_its_tombstones_fail) {
    group_id = "simple";
    (void)commit(-1, "", {{tp("t", 0), 3, -1, {}}});
    size_t before = log.records.size();
    log.fail_appends = true;
    pending<std::error_code> del;
    coord->delete_group(group_id, del.callback());
    EXPECT_EQ(del.get(), E(errc::storage_error));
    // Nothing reached the log, so nothing may change in memory either.
    EXPECT_EQ(log.records.size(), before);
    ASSERT_EQ(state(), group_state::empty);
    EXPECT_EQ(fetched("t", 0), 3);

    log.fail_appends = false;
    pending<std::error_code> retry;
    coord->delete_group(group_id, retry.callback());
    EXPECT_FALSE(retry.get());
    EXPECT_EQ(coord->find_group(group_id), nullptr);
}

TEST_F(offsets_test, test_group_being_deleted_refuses_commits_until_its_tombstones_land) {
    group_id = "simple";
    (void)commit(-1, "", {{tp("t", 0), 3, -1, {}}});
    log.hold_appends = true;
    pending<std::error_code> del;
    coord->delete_group(group_id, del.callback());
    ASSERT_FALSE(del.done());
    EXPECT_EQ(state(), group_state::dead);
    auto racing = commit(-1, "", {{tp("t", 0), 4, -1, {}}});
    EXPECT_EQ(racing.errors.at(0), E(errc::coordinator_not_available));
    log.hold_appends = false;
    log.release();
    EXPECT_FALSE(del.get());
    EXPECT_EQ(coord->find_group(group_id), nullptr);
}

TEST_F(offsets_test, test_list_and_describe_groups) {
    std::string a = stable_single_member();
    group_id = "simple";
    (void)commit(-1, "", {{tp("t", 0), 1, -1, {}}});
    std::error_code err;
    auto groups = coord->list_groups(&err);
    ASSERT_EQ(groups.size(), 2u);
    EXPECT_EQ(groups[0].group_id, "g1");
    EXPECT_EQ(groups[0].protocol_type, "consumer");
    EXPECT_EQ(groups[0].state, group_state::stable);
    EXPECT_EQ(groups[1].group_id, "simple");
    EXPECT_EQ(groups[1].protocol_type, "");
    EXPECT_EQ(groups[1].state, group_state::empty);

    auto d = coord->describe_group("g1");
    EXPECT_TRUE(d.found);
    EXPECT_EQ(d.state, group_state::stable);
    EXPECT_EQ(d.protocol_name, "range");
    ASSERT_EQ(d.members.size(), 1u);
    EXPECT_EQ(d.members[0].member_id, a);
    EXPECT_EQ(d.members[0].assignment, (bytes{1, 2, 3}));
    EXPECT_EQ(d.members[0].metadata, subscription({"orders"}));
    auto missing = coord->describe_group("missing");
    EXPECT_FALSE(missing.found);
    EXPECT_EQ(missing.state, group_state::dead);
}

TEST_F(offsets_test, test_offsets_of_empty_group_expire_after_retention) {
    cfg.offsets_retention_ms = 60'000;
    cfg.retention_check_interval_ms = 1'000;
    make();
    std::string a = stable_single_member();
    (void)commit(1, a, {{tp("orders", 0), 1, -1, {}}});
    // While the group has members its offsets never expire (KIP-211).
    for (int i = 0; i < 10; ++i) {
        tick(session_ms / 2);
        ASSERT_FALSE(heartbeat(a, 1));
    }
    EXPECT_EQ(fetched("orders", 0), 1);
    (void)coord->leave_group(group_id, {{a, std::nullopt}});
    tick(59'000);
    EXPECT_EQ(fetched("orders", 0), 1);
    tick(2'000);
    EXPECT_EQ(fetched("orders", 0), -1);
    EXPECT_EQ(coord->find_group(group_id), nullptr);  // empty and offset-less: removed
    ASSERT_GE(log.records.size(), 2u);
    EXPECT_FALSE(log.records.back().value);  // group tombstone
}

TEST_F(offsets_test, test_simple_group_offsets_expire_by_commit_time) {
    cfg.offsets_retention_ms = 60'000;
    cfg.retention_check_interval_ms = 1'000;
    make();
    (void)commit(-1, "", {{tp("t", 0), 1, -1, {}}});
    tick(30'000);
    (void)commit(-1, "", {{tp("t", 1), 2, -1, {}}});
    tick(31'000);
    EXPECT_EQ(fetched("t", 0), -1);
    EXPECT_EQ(fetched("t", 1), 2);
}

TEST_F(offsets_test, test_restart_replays_offsets_and_groups_from_log) {
    std::string a = stable_single_member();
    (void)commit(1, a, {{tp("orders", 0), 100, 3, std::string("m")}});
    group_id = "simple";
    (void)commit(-1, "", {{tp("t", 0), 5, -1, {}}, {tp("t", 1), 6, -1, {}}});
    pending<offset_delete_result> del;
    coord->delete_offsets("simple", {tp("t", 1)}, del.callback());

    make();  // a new coordinator over the same log: what a broker restart does
    group_id = "g1";
    EXPECT_EQ(state(), group_state::stable);
    EXPECT_EQ(generation(), 1);
    EXPECT_TRUE(coord->find_group("g1")->is_leader(a));
    EXPECT_EQ(fetched("orders", 0), 100);
    EXPECT_FALSE(heartbeat(a, 1));  // the member carries on in the same generation
    group_id = "simple";
    EXPECT_EQ(fetched("t", 0), 5);
    EXPECT_EQ(fetched("t", 1), -1);

    auto snapshot = coord->snapshot();
    EXPECT_EQ(snapshot->offsets.size(), 2u);
    EXPECT_EQ(snapshot->groups.size(), 2u);
}

TEST_F(offsets_test, test_committed_snapshot_is_republished_after_changes) {
    (void)commit(-1, "", {{tp("t", 0), 5, -1, {}}});
    EXPECT_TRUE(coord->snapshot()->offsets.empty());  // not yet: bounded staleness
    tick(cfg.lag_publish_interval_ms);
    auto snap = coord->snapshot();
    ASSERT_EQ(snap->offsets.size(), 1u);
    EXPECT_EQ(snap->offsets[0].group, "g1");
    EXPECT_EQ(snap->offsets[0].offset, 5);
    ASSERT_EQ(snap->groups.size(), 1u);
    EXPECT_EQ(snap->groups[0].state, group_state::empty);
}

// Records the coordinator's group events in order, as "rebalance:<group>" / "removed:<group>".
class recording_listener final : public group_listener {
public:
    void rebalance_completed(std::string_view group) override {
        events.push_back("rebalance:" + std::string(group));
    }
    void group_removed(std::string_view group) override {
        events.push_back("removed:" + std::string(group));
    }
    std::vector<std::string> events;
};

TEST_F(offsets_test, test_listener_hears_completed_generations_and_removed_groups) {
    recording_listener heard;
    listener = &heard;
    cfg.offsets_retention_ms = 60'000;
    cfg.retention_check_interval_ms = 1'000;
    make();
    std::string a = stable_single_member();
    EXPECT_EQ(heard.events, (std::vector<std::string>{"rebalance:g1"}));
    // A parked join is not a completed generation; only the stored assignment is.
    auto j = join(join_req(a));
    ASSERT_TRUE(j.done());
    EXPECT_EQ(heard.events.size(), 1u);
    ASSERT_FALSE(sync(a, j.get().generation_id, {{a, bytes{4}}}).get().error);
    EXPECT_EQ(heard.events, (std::vector<std::string>{"rebalance:g1", "rebalance:g1"}));

    (void)commit(j.get().generation_id, a, {{tp("orders", 0), 1, -1, {}}});
    (void)coord->leave_group(group_id, {{a, std::nullopt}});
    ASSERT_EQ(state(), group_state::empty);
    pending<std::error_code> del;
    coord->delete_group(group_id, del.callback());
    EXPECT_FALSE(del.get());
    EXPECT_EQ(heard.events.back(), "removed:g1");

    group_id = "simple";
    (void)commit(-1, "", {{tp("t", 0), 1, -1, {}}});
    tick(61'000);
    EXPECT_EQ(coord->find_group("simple"), nullptr);
    EXPECT_EQ(heard.events.back(), "removed:simple");
    EXPECT_EQ(heard.events.size(), 4u);
}

}  // namespace
}  // namespace spool::broker::coordinator::testing
