#include "broker/metadata/controller/plan/isr_update_check.h"

#include "broker/metadata/errc.h"

#include <gtest/gtest.h>

namespace spool::broker::metadata {
namespace {

cluster_state three_brokers() {
    cluster_state s;
    for (int32_t id : {0, 1, 2}) {
        s.brokers[id].node_id = id;
    }
    auto& t = s.topics["t"];
    t.name = "t";
    t.partitions.push_back({0, 0, 4, 9, {0, 1, 2}, {0, 1}, 77});
    return s;
}

isr_update update(std::vector<int32_t> isr) {
    return {"t", 0, 4, 9, 77, std::move(isr)};
}

TEST(isr_update_check_test, test_a_fitting_change_bumps_only_the_partition_epoch) {
    auto r = check_isr_update(three_brokers(), 0, update({0, 1, 2}));
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_FALSE(r.value().unchanged);
    EXPECT_EQ(r.value().joining, std::vector<int32_t>{2});
    EXPECT_EQ(r.value().next.isr, (std::vector<int32_t>{0, 1, 2}));
    EXPECT_EQ(r.value().next.partition_epoch, 10);
    EXPECT_EQ(r.value().next.leader_epoch, 4);
    EXPECT_EQ(r.value().next.leader, 0);
    auto same = check_isr_update(three_brokers(), 0, update({0, 1}));
    ASSERT_TRUE(same);
    EXPECT_TRUE(same.value().unchanged);
    EXPECT_EQ(same.value().next.partition_epoch, 9);
}

TEST(isr_update_check_test, test_a_change_against_another_record_is_stale) {
    for (auto u : {isr_update{"t", 0, 3, 9, 77, {0}}, isr_update{"t", 0, 4, 8, 77, {0}},
                   isr_update{"t", 0, 4, 9, 76, {0}}}) {
        auto r = check_isr_update(three_brokers(), 0, u);
        ASSERT_FALSE(r);
        EXPECT_EQ(r.error(), make_error_code(errc::stale_partition));
    }
    EXPECT_EQ(check_isr_update(three_brokers(), 0, {"nope", 0, 4, 9, 77, {0}}).error(),
              make_error_code(errc::unknown_topic));
    EXPECT_EQ(check_isr_update(three_brokers(), 0, {"t", 1, 4, 9, 77, {0}}).error(),
              make_error_code(errc::unknown_topic));
}

TEST(isr_update_check_test, test_an_isr_that_does_not_fit_the_record_is_invalid) {
    const auto invalid = make_error_code(errc::invalid_isr);
    EXPECT_EQ(check_isr_update(three_brokers(), 1, update({0, 1})).error(), invalid)
        << "broker 1 does not lead";
    EXPECT_EQ(check_isr_update(three_brokers(), 0, update({})).error(), invalid);
    EXPECT_EQ(check_isr_update(three_brokers(), 0, update({1})).error(), invalid)
        << "leaves the leader out";
    EXPECT_EQ(check_isr_update(three_brokers(), 0, update({0, 5})).error(), invalid);
    EXPECT_EQ(check_isr_update(three_brokers(), 0, update({0, 1, 1})).error(), invalid);
}

TEST(isr_update_check_test, test_a_dead_or_shutting_down_broker_never_joins) {
    auto s = three_brokers();
    s.shutting_down = {2};
    EXPECT_EQ(check_isr_update(s, 0, update({0, 1, 2})).error(),
              make_error_code(errc::ineligible_replica));
    s.shutting_down.clear();
    s.brokers.erase(2);
    EXPECT_EQ(check_isr_update(s, 0, update({0, 1, 2})).error(),
              make_error_code(errc::ineligible_replica));
    // Leaving the ISR is always allowed, live or not.
    s.brokers.erase(1);
    EXPECT_TRUE(check_isr_update(s, 0, update({0})));
}

}  // namespace
}  // namespace spool::broker::metadata
