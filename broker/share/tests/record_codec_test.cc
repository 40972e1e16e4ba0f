// __share_group_state records against the bytes Kafka 4.4.0's own classes write
// (MessageUtil.toCoordinatorTypePrefixedBytes / toVersionPrefixedBytes over share-coordinator's
// generated ShareSnapshotKey/Value and ShareUpdateKey/Value, run once with the 4.4.0 jars).

#include "broker/coordinator/group_hash.h"
#include "broker/share/errc.h"
#include "broker/share/record_codec.h"
#include "broker/share/share_hash.h"

#include <gtest/gtest.h>

#include <string>

namespace spool::broker::share {
namespace {

bytes unhex(std::string_view h) {
    bytes out;
    for (size_t i = 0; i + 1 < h.size(); i += 2) {
        out.push_back(static_cast<uint8_t>(std::stoi(std::string(h.substr(i, 2)), nullptr, 16)));
    }
    return out;
}

share_key test_key() {
    protocol::uuid id;
    for (uint8_t i = 0; i < 16; ++i) {
        id.bytes[i] = static_cast<uint8_t>(i + 1);
    }
    return share_key{"g1", id, 3};
}

constexpr std::string_view kafka_key = "0000000267310102030405060708090a0b0c0d0e0f1000000003";
constexpr std::string_view kafka_update_key =
    "0001000267310102030405060708090a0b0c0d0e0f1000000003";
constexpr std::string_view kafka_snapshot =
    "0000000000010000000200000005000000000000006400000000000003e800000000000007d0030000000000"
    "000064000000000000006802000100000000000000006900000000000000690000030001000400000007";
constexpr std::string_view kafka_update =
    "00000000000100000006ffffffffffffffff02000000000000006900000000000000690400040000";

share_state test_state() {
    share_state s;
    s.snapshot_epoch = 1;
    s.state_epoch = 2;
    s.leader_epoch = 5;
    s.start_offset = 100;
    s.delivery_complete_count = 7;
    s.create_timestamp = 1000;
    s.write_timestamp = 2000;
    s.batches = {{100, 104, 2, 1}, {105, 105, 0, 3}};
    return s;
}

TEST(share_record_codec, test_key_matches_kafka_bytes) {
    EXPECT_EQ(encode_key(test_key()), unhex(kafka_key));
    EXPECT_EQ(encode_key(test_key(), record_type::update), unhex(kafka_update_key));
    auto k = decode_key(unhex(kafka_update_key));
    ASSERT_TRUE(k);
    EXPECT_EQ(k.value().type, record_type::update);
    EXPECT_EQ(k.value().key, test_key());
}

TEST(share_record_codec, test_snapshot_matches_kafka_bytes_and_round_trips) {
    EXPECT_EQ(encode_snapshot(test_state()), unhex(kafka_snapshot));
    auto s = decode_snapshot(unhex(kafka_snapshot));
    ASSERT_TRUE(s);
    EXPECT_EQ(s.value(), test_state());
}

TEST(share_record_codec, test_update_merges_over_the_snapshot) {
    auto s = test_state();
    ASSERT_FALSE(apply_update(s, unhex(kafka_update)));
    EXPECT_EQ(s.leader_epoch, 6);
    EXPECT_EQ(s.start_offset, 100);  // -1: not updated
    ASSERT_EQ(s.batches.size(), 2u);
    EXPECT_EQ(s.batches[1], (state_batch{105, 105, 4, 4}));
}

TEST(share_record_codec, test_garbage_is_refused) {
    EXPECT_EQ(decode_key(unhex("0003")).error(), make_error_code(errc::invalid_request));
    EXPECT_FALSE(decode_snapshot(unhex("0001")));
}

TEST(share_record_codec, test_key_hashes_as_kafka_coordinator_key) {
    EXPECT_EQ(test_key().coordinator_key(), "g1:AQIDBAUGBwgJCgsMDQ4PEA:3");
    EXPECT_EQ(share_partition_for(test_key(), 50),
              coordinator::offsets_partition_for("g1:AQIDBAUGBwgJCgsMDQ4PEA:3", 50));
}

}  // namespace
}  // namespace spool::broker::share
