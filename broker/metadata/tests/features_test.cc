// metadata.version and transaction.version updates (features.h) judged as Kafka 4.4's
// FeatureControlManager judges them: the messages are the ones kafka-features printed against a
// Kafka 4.4.0 broker (tests/compat/features/features_compat.py compares both live).

#include "broker/metadata/features.h"

#include <gtest/gtest.h>

namespace spool::broker::metadata {
namespace {

using ut = upgrade_type;

std::vector<broker_support> three_current() {
    return {{0, supported_by_this_binary()},
            {1, supported_by_this_binary()},
            {2, supported_by_this_binary()}};
}

finalized_features at(int16_t mv, std::optional<int16_t> tv = std::nullopt, int64_t epoch = 1) {
    finalized_features f;
    f.metadata_version = mv;
    f.transaction_version = tv;
    f.epoch = epoch;
    return f;
}

std::string refusal(const update_outcome& o) {
    return o.refusal ? o.refusal->message : std::string("(accepted)");
}

TEST(features, levels_are_named_as_kafka_names_them) {
    EXPECT_EQ(metadata_version_name(32), "4.4-IV1");
    EXPECT_EQ(metadata_version_name(33), "4.4-IV2");
    EXPECT_EQ(metadata_version_name(34), "34");
    EXPECT_EQ(bootstrap_features().metadata_version, 33);
    EXPECT_TRUE(bootstrap_features().stored());
    EXPECT_FALSE(finalized_features{}.stored());
    EXPECT_EQ(finalized_features{}.metadata_version, 32);
}

TEST(features, upgrade_from_the_unversioned_layout) {
    finalized_features unversioned;  // a cluster Spool 0.3 made
    auto o = check_update(unversioned, 2, {{"metadata.version", 33, ut::upgrade}}, three_current());
    ASSERT_FALSE(o.refusal) << refusal(o);
    EXPECT_EQ(o.next.metadata_version, 33);
    EXPECT_EQ(o.next.epoch, 2);  // above the 1 ApiVersions showed without a record
    EXPECT_FALSE(o.next.transaction_version);
}

TEST(features, upgrade_refused_while_a_broker_runs_the_previous_release) {
    auto brokers = three_current();
    brokers[2].supported = supported_by_unversioned_binary();
    auto o =
        check_update(finalized_features{}, 2, {{"metadata.version", 33, ut::upgrade}}, brokers);
    EXPECT_EQ(refusal(o),
              "Invalid update version 33 for feature metadata.version. Broker 2 only supports "
              "versions 32-32");
}

TEST(features, level_beyond_every_binary) {
    auto o = check_update(at(33), 2, {{"metadata.version", 34, ut::upgrade}}, three_current());
    EXPECT_EQ(refusal(o),
              "Invalid update version 34 for feature metadata.version. Broker 0 only supports "
              "versions 32-33");
    o = check_update(at(33), 2, {{"metadata.version", 0, ut::unsafe_downgrade}}, three_current());
    EXPECT_EQ(refusal(o),
              "Invalid update version 0 for feature metadata.version. Broker 0 only supports "
              "versions 32-33");
}

TEST(features, downgrade_past_a_metadata_change_is_refused) {
    auto o =
        check_update(at(33), 2, {{"metadata.version", 32, ut::safe_downgrade}}, three_current());
    EXPECT_EQ(refusal(o),
              "Unsupported metadata.version downgrade from 33 to 32. Refusing to perform the "
              "requested downgrade because it might delete metadata information.");
    o = check_update(at(33), 2, {{"metadata.version", 32, ut::unsafe_downgrade}}, three_current());
    EXPECT_EQ(refusal(o),
              "Unsupported metadata.version downgrade from 33 to 32. Unsafe metadata downgrade "
              "is not supported in this version.");
    o = check_update(at(33), 2, {{"metadata.version", 32, ut::upgrade}}, three_current());
    EXPECT_EQ(refusal(o),
              "Invalid update version 32 for feature metadata.version. Can't downgrade the "
              "version of this feature without setting the upgrade type to either safe or "
              "unsafe downgrade.");
}

TEST(features, same_level_is_accepted) {
    auto o = check_update(at(33), 2, {{"metadata.version", 33, ut::upgrade}}, three_current());
    ASSERT_FALSE(o.refusal) << refusal(o);
    EXPECT_EQ(o.next.metadata_version, 33);
    o = check_update(at(33), 2, {{"metadata.version", 33, ut::safe_downgrade}}, three_current());
    EXPECT_FALSE(o.refusal) << refusal(o);
}

TEST(features, transaction_version_down_and_up_at_33) {
    auto o =
        check_update(at(33), 2, {{"transaction.version", 1, ut::safe_downgrade}}, three_current());
    ASSERT_FALSE(o.refusal) << refusal(o);
    EXPECT_EQ(o.next.transaction_version, int16_t{1});
    EXPECT_EQ(o.next.epoch, 2);
    o = check_update(o.next, 2, {{"transaction.version", 2, ut::upgrade}}, three_current());
    ASSERT_FALSE(o.refusal) << refusal(o);
    EXPECT_EQ(o.next.transaction_version, int16_t{2});
    // disable: level 0, which every broker supports
    o = check_update(o.next, 2, {{"transaction.version", 0, ut::safe_downgrade}}, three_current());
    ASSERT_FALSE(o.refusal) << refusal(o);
    EXPECT_EQ(o.next.transaction_version, int16_t{0});
    o = check_update(at(33), 2, {{"transaction.version", 3, ut::upgrade}}, three_current());
    EXPECT_EQ(refusal(o),
              "Invalid update version 3 for feature transaction.version. Broker 0 only supports "
              "versions 0-2");
    o = check_update(at(33), 2, {{"transaction.version", 1, ut::upgrade}}, three_current());
    EXPECT_EQ(refusal(o),
              "Invalid update version 1 for feature transaction.version. Can't downgrade the "
              "version of this feature without setting the upgrade type to either safe or "
              "unsafe downgrade.");
}

TEST(features, transaction_version_needs_the_stored_layout) {
    auto o = check_update(finalized_features{}, 2, {{"transaction.version", 1, ut::safe_downgrade}},
                          three_current());
    EXPECT_EQ(refusal(o),
              "Invalid update version 1 for feature transaction.version. Feature "
              "transaction.version can only be changed at metadata.version 33 (4.4-IV2) or "
              "above; the cluster is at 32 (4.4-IV1).");
    // In the same request as the metadata.version upgrade it is judged at the new level.
    o = check_update(
        finalized_features{}, 2,
        {{"transaction.version", 1, ut::safe_downgrade}, {"metadata.version", 33, ut::upgrade}},
        three_current());
    ASSERT_FALSE(o.refusal) << refusal(o);
    EXPECT_EQ(o.next.metadata_version, 33);
    EXPECT_EQ(o.next.transaction_version, int16_t{1});
}

TEST(features, unknown_feature) {
    auto o = check_update(at(33), 2, {{"foo.version", 1, ut::upgrade}}, three_current());
    EXPECT_EQ(refusal(o),
              "Invalid update version 1 for feature foo.version. Broker 0 does not support this "
              "feature.");
}

TEST(features, a_binary_refuses_levels_it_does_not_support) {
    EXPECT_EQ(unsupported_reason(at(32)), "");
    EXPECT_EQ(unsupported_reason(at(33, 2)), "");
    EXPECT_NE(unsupported_reason(at(34)).find("metadata.version is 34"), std::string::npos);
    EXPECT_NE(unsupported_reason(at(33, 3)).find("transaction.version is 3"), std::string::npos);
}

}  // namespace
}  // namespace spool::broker::metadata
