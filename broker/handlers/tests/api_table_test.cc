#include "broker/handlers/api_table.h"

#include "protocol/messages/api_table.h"

#include <gtest/gtest.h>

#include <set>
#include <string_view>

namespace spool::broker::handlers {
namespace {

using protocol::api_key;

TEST(api_table, test_every_row_is_within_the_codec_range) {
    std::set<int16_t> seen;
    for (const auto& e : supported_apis()) {
        EXPECT_TRUE(seen.insert(static_cast<int16_t>(e.key)).second) << "duplicate row";
        const auto* codec = protocol::find_api(e.key);
        ASSERT_NE(codec, nullptr) << protocol::api_name(e.key);
        EXPECT_GE(e.min_version, codec->min_version) << protocol::api_name(e.key);
        EXPECT_LE(e.max_version, codec->max_version) << protocol::api_name(e.key);
        EXPECT_LE(e.min_version, e.accept_min);
        EXPECT_LE(e.accept_min, e.max_version);
        EXPECT_NE(e.handler, nullptr);
    }
}

// client-compat.md 1.3: librdkafka enables compression only if Produce is advertised from v0,
// MsgVer2 needs Produce 3 and Fetch 4, zstd needs Produce 7 and Fetch 10; AK 4.0 rejects
// Produce v0-2 on the wire.
TEST(api_table, test_ranges_that_real_clients_depend_on) {
    const auto* produce = find_supported(int16_t(api_key::produce));
    ASSERT_NE(produce, nullptr);
    EXPECT_EQ(produce->min_version, 0);
    EXPECT_EQ(produce->accept_min, 3);
    EXPECT_GE(produce->max_version, 7);
    const auto* fetch = find_supported(int16_t(api_key::fetch));
    ASSERT_NE(fetch, nullptr);
    EXPECT_LE(fetch->min_version, 4);
    EXPECT_GE(fetch->max_version, 10);
    const auto* api_versions = find_supported(int16_t(api_key::api_versions));
    ASSERT_NE(api_versions, nullptr);
    EXPECT_EQ(api_versions->min_version, 0);
    EXPECT_GE(api_versions->max_version, 3);
    ASSERT_NE(find_supported(int16_t(api_key::init_producer_id)), nullptr);
    ASSERT_NE(find_supported(int16_t(api_key::metadata)), nullptr);
    ASSERT_NE(find_supported(int16_t(api_key::list_offsets)), nullptr);
}

TEST(api_table, test_unknown_key_is_not_served) {
    EXPECT_EQ(find_supported(999), nullptr);
    EXPECT_EQ(find_supported(-1), nullptr);
}

TEST(api_table, test_metric_labels_are_snake_case_and_one_per_row) {
    auto labels = api_labels();
    ASSERT_EQ(labels.size(), supported_apis().size());
    std::set<std::string_view> names;
    for (const auto& l : labels) {
        EXPECT_TRUE(names.insert(l.name).second) << l.name;
        EXPECT_FALSE(l.name.empty());
        for (char c : l.name)
            EXPECT_TRUE((c >= 'a' && c <= 'z') || c == '_') << l.name;
    }
    auto label_of = [&](api_key key) {
        for (const auto& l : labels)
            if (l.key == static_cast<int16_t>(key))
                return l.name;
        return std::string_view();
    };
    EXPECT_EQ(label_of(api_key::produce), "produce");
    EXPECT_EQ(label_of(api_key::api_versions), "api_versions");
    EXPECT_EQ(label_of(api_key::offset_for_leader_epoch), "offset_for_leader_epoch");
}

}  // namespace
}  // namespace spool::broker::handlers
