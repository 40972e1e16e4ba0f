#include "broker/coordinator/record_codec.h"

#include <gtest/gtest.h>

namespace spool::broker::coordinator {
namespace {

TEST(record_codec, test_offset_key_has_kafka_layout) {
    auto k = encode_offset_key("g", {"t", model::partition_id{3}});
    // version 1 | "g" | "t" | partition 3
    EXPECT_EQ(k, (bytes{0, 1, 0, 1, 'g', 0, 1, 't', 0, 0, 0, 3}));
    auto d = decode_key(k);
    ASSERT_TRUE(d);
    auto& ok = std::get<offset_key>(d.value());
    EXPECT_EQ(ok.group, "g");
    EXPECT_EQ(ok.tp.topic, "t");
    EXPECT_EQ(ok.tp.partition.value(), 3);
}

TEST(record_codec, test_offset_value_v3_layout_and_round_trip) {
    committed_offset o{0x0102, 7, "md", 0x10, -1};
    auto v = encode_offset_value(o);
    EXPECT_EQ(v, (bytes{0, 3, 0, 0,   0,   0, 0, 0, 1, 2, 0, 0, 0,
                        7, 0, 2, 'm', 'd', 0, 0, 0, 0, 0, 0, 0, 0x10}));
    auto d = decode_offset_value(v);
    ASSERT_TRUE(d);
    EXPECT_EQ(d.value().offset, 0x0102);
    EXPECT_EQ(d.value().leader_epoch, 7);
    EXPECT_EQ(d.value().metadata, "md");
    EXPECT_EQ(d.value().commit_timestamp_ms, 0x10);
}

TEST(record_codec, test_offset_value_v1_keeps_expire_timestamp) {
    committed_offset o{5, -1, "", 100, 200};
    auto d = decode_offset_value(encode_offset_value(o));
    ASSERT_TRUE(d);
    EXPECT_EQ(d.value().expire_timestamp_ms, 200);
    EXPECT_EQ(d.value().offset, 5);
}

TEST(record_codec, test_group_value_round_trip) {
    stored_group g;
    g.protocol_type = "consumer";
    g.generation = 4;
    g.protocol_name = "range";
    g.leader = "m1";
    g.current_state_timestamp_ms = 1234;
    g.members.push_back({"m1", std::string("i1"), "c", "/h", 30000, 10000, {1, 2}, {3}});
    g.members.push_back({"m2", std::nullopt, "c2", "/h2", 1, 2, {}, {}});
    auto d = decode_group_value(encode_group_value(g));
    ASSERT_TRUE(d);
    const auto& r = d.value();
    EXPECT_EQ(r.protocol_type, "consumer");
    EXPECT_EQ(r.generation, 4);
    EXPECT_EQ(r.protocol_name, "range");
    EXPECT_EQ(r.leader, "m1");
    EXPECT_EQ(r.current_state_timestamp_ms, 1234);
    ASSERT_EQ(r.members.size(), 2u);
    EXPECT_EQ(r.members[0].group_instance_id, "i1");
    EXPECT_EQ(r.members[0].subscription, (bytes{1, 2}));
    EXPECT_EQ(r.members[0].assignment, bytes{3});
    EXPECT_EQ(r.members[0].rebalance_timeout_ms, 30000);
    EXPECT_FALSE(r.members[1].group_instance_id);
}

TEST(record_codec, test_empty_group_value_with_null_protocol) {
    stored_group g;
    g.generation = 2;
    auto v = encode_group_value(g);
    // version 3 | "" | generation 2 | null | null | timestamp -1 | 0 members
    EXPECT_EQ(v, (bytes{0,    3,    0,    0,    0,    0,    0,    2,    0xff, 0xff, 0xff, 0xff,
                        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0,    0,    0,    0}));
    auto d = decode_group_value(v);
    ASSERT_TRUE(d);
    EXPECT_FALSE(d.value().protocol_name);
    EXPECT_TRUE(d.value().members.empty());
}

TEST(record_codec, test_truncated_and_foreign_records_are_rejected) {
    auto k = encode_group_key("group");
    EXPECT_TRUE(decode_key(k));
    k.pop_back();
    EXPECT_FALSE(decode_key(k));
    EXPECT_FALSE(decode_key(bytes{0, 5, 0, 0}));  // a newer coordinator's record type
    EXPECT_FALSE(decode_offset_value(bytes{0, 9}));
    EXPECT_FALSE(decode_group_value(bytes{0, 3, 0}));
}

}  // namespace
}  // namespace spool::broker::coordinator
