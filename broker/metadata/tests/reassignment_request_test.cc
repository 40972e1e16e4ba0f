#include "broker/metadata/reassignment_request.h"

#include "broker/metadata/errc.h"
#include "broker/metadata/tests/reassign_test_support.h"

#include <gtest/gtest.h>

namespace spool::broker::metadata {
namespace {

using testing::add_broker;
using testing::add_placed_topic;
using ids = std::vector<int32_t>;

cluster_state cluster() {
    cluster_state s;
    for (int32_t id : {0, 1, 2}) {
        add_broker(s, id);
    }
    add_placed_topic(s, "t", {{0, 1}, {1, 2}});
    return s;
}

reassignment_request ask(std::string topic, int32_t p, std::optional<ids> target,
                         bool allow_rf = true) {
    return {std::move(topic), p, std::move(target), allow_rf};
}

std::error_code error_of(const cluster_state& s, const reassignment_request& r) {
    auto out = apply_reassignment_request(s, r);
    return out ? std::error_code() : out.error();
}

TEST(reassignment_request_test, test_a_valid_target_is_written_as_the_request) {
    auto s = cluster();
    auto r = apply_reassignment_request(s, ask("t", 0, ids{1, 2}));
    ASSERT_TRUE(r);
    EXPECT_FALSE(r.value().unchanged);
    EXPECT_EQ(r.value().next.target_replicas, (ids{1, 2}));
    EXPECT_EQ(r.value().next.replicas, (ids{0, 1})) << "only the controller moves replicas";
    EXPECT_EQ(r.value().next.record_revision, 11) << "the compare expects the record read";
}

TEST(reassignment_request_test, test_unknown_topics_and_partitions) {
    auto s = cluster();
    EXPECT_EQ(error_of(s, ask("nope", 0, ids{1})), make_error_code(errc::unknown_topic));
    EXPECT_EQ(error_of(s, ask("t", 2, ids{1})), make_error_code(errc::unknown_topic));
    EXPECT_EQ(error_of(s, ask("t", -1, ids{1})), make_error_code(errc::unknown_topic));
}

TEST(reassignment_request_test, test_invalid_targets_are_invalid_replica_assignment) {
    auto s = cluster();
    const auto invalid = make_error_code(errc::invalid_replica_assignment);
    EXPECT_EQ(error_of(s, ask("t", 0, ids{})), invalid) << "empty";
    EXPECT_EQ(error_of(s, ask("t", 0, ids{1, 1})), invalid) << "duplicate";
    EXPECT_EQ(error_of(s, ask("t", 0, ids{1, 7})), invalid) << "unregistered broker";
    EXPECT_EQ(error_of(s, ask("t", 0, ids{1, -1})), invalid) << "negative id";
}

TEST(reassignment_request_test, test_replication_factor_change_only_when_allowed) {
    auto s = cluster();
    EXPECT_EQ(error_of(s, ask("t", 0, ids{0, 1, 2}, false)),
              make_error_code(errc::invalid_replication_factor));
    EXPECT_TRUE(apply_reassignment_request(s, ask("t", 0, ids{0, 1, 2}, true)));
    EXPECT_TRUE(apply_reassignment_request(s, ask("t", 0, ids{2, 1}, false)));
}

TEST(reassignment_request_test, test_cancel_without_a_reassignment_is_refused) {
    auto s = cluster();
    EXPECT_EQ(error_of(s, ask("t", 0, std::nullopt)),
              make_error_code(errc::no_reassignment_in_progress));
}

TEST(reassignment_request_test, test_cancel_clears_the_target) {
    auto s = cluster();
    auto& p = s.topics["t"].partitions[0];
    p.target_replicas = {1, 2};
    p.replicas = {1, 2, 0};
    p.adding_replicas = {2};
    p.removing_replicas = {0};
    auto r = apply_reassignment_request(s, ask("t", 0, std::nullopt));
    ASSERT_TRUE(r);
    EXPECT_FALSE(r.value().unchanged);
    EXPECT_TRUE(r.value().next.target_replicas.empty());
    EXPECT_EQ(r.value().next.adding_replicas, ids{2}) << "the controller reverts the move";
}

TEST(reassignment_request_test, test_the_replicas_it_has_change_nothing) {
    auto s = cluster();
    auto r = apply_reassignment_request(s, ask("t", 1, ids{1, 2}));
    ASSERT_TRUE(r);
    EXPECT_TRUE(r.value().unchanged);
}

TEST(reassignment_request_test, test_list_view_of_a_request_not_started_and_one_under_way) {
    auto s = cluster();
    auto& p = s.topics["t"].partitions[0];
    EXPECT_FALSE(view_of(p));
    p.target_replicas = {1, 2};
    auto v = view_of(p);
    ASSERT_TRUE(v);
    EXPECT_EQ(v->replicas, (ids{1, 2, 0}));
    EXPECT_EQ(v->adding, ids{2});
    EXPECT_EQ(v->removing, ids{0});
    p.replicas = {1, 2, 0};
    p.adding_replicas = {2};
    p.removing_replicas = {0};
    v = view_of(p);
    ASSERT_TRUE(v);
    EXPECT_EQ(v->replicas, (ids{1, 2, 0}));
    EXPECT_EQ(v->adding, ids{2});
}

}  // namespace
}  // namespace spool::broker::metadata
