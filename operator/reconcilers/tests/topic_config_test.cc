#include "operator/reconcilers/topic_reconciler.h"

#include <gtest/gtest.h>

namespace spool::op::reconcilers {
namespace {

api::topic make_topic(std::map<std::string, std::optional<std::string>> spec_config,
                      std::vector<std::string> managed) {
    api::topic t;
    t.meta.name = "orders";
    t.spec.topic_name = "orders";
    t.spec.config = std::move(spec_config);
    t.status.managed_config = std::move(managed);
    return t;
}

TEST(topic_config, test_keys_with_values_are_set) {
    auto changes = topic_reconciler::config_changes(
        make_topic({{"retention.ms", "1000"}, {"cleanup.policy", "compact"}}, {}), {});
    ASSERT_EQ(changes.size(), 2u);
    EXPECT_EQ(changes[0].key, "cleanup.policy");
    EXPECT_EQ(changes[0].operation, config_change::op::set);
    EXPECT_EQ(changes[0].value, "compact");
    EXPECT_EQ(changes[1].key, "retention.ms");
}

TEST(topic_config, test_a_removed_managed_key_returns_to_the_default) {
    auto t = make_topic({{"retention.ms", "1000"}}, {"retention.ms", "segment.bytes"});
    auto changes = topic_reconciler::config_changes(t, {});
    ASSERT_EQ(changes.size(), 2u);
    EXPECT_EQ(changes[1].key, "segment.bytes");
    EXPECT_EQ(changes[1].operation, config_change::op::remove);
    EXPECT_EQ(topic_reconciler::managed_keys(t), std::vector<std::string>{"retention.ms"});
}

TEST(topic_config, test_a_null_key_is_left_alone_and_no_longer_managed) {
    auto t = make_topic({{"retention.ms", std::nullopt}}, {"retention.ms"});
    EXPECT_TRUE(topic_reconciler::config_changes(t, {{"retention.ms", {"5", true}}}).empty());
    EXPECT_TRUE(topic_reconciler::managed_keys(t).empty());
}

TEST(topic_config, test_unmanaged_keys_absent_from_spec_are_not_touched) {
    auto t = make_topic({}, {});
    EXPECT_TRUE(topic_reconciler::config_changes(t, {{"retention.ms", {"5", true}}}).empty());
}

TEST(topic_config, test_a_key_already_at_its_value_on_the_topic_is_not_sent) {
    auto t = make_topic({{"retention.ms", "1000"}, {"segment.ms", "60000"}}, {"retention.ms"});
    topic_configs current{{"retention.ms", {"1000", true}}, {"segment.ms", {"60000", false}}};
    auto changes = topic_reconciler::config_changes(t, current);
    // segment.ms has that value only as a default: it is set on the topic, so that a later
    // change of the broker default does not move it.
    ASSERT_EQ(changes.size(), 1u);
    EXPECT_EQ(changes[0].key, "segment.ms");
}

TEST(topic_config, test_a_removed_key_already_back_at_the_default_is_not_sent) {
    auto t = make_topic({}, {"retention.ms", "segment.bytes"});
    topic_configs current{{"retention.ms", {"604800000", false}}};
    auto changes = topic_reconciler::config_changes(t, current);
    ASSERT_EQ(changes.size(), 1u);  // segment.bytes is not reported at all: DELETE it
    EXPECT_EQ(changes[0].key, "segment.bytes");
    EXPECT_EQ(changes[0].operation, config_change::op::remove);
}

}  // namespace
}  // namespace spool::op::reconcilers
