// __transaction_state records against bytes from Kafka 4.4's own serializers
// (MessageUtil.toVersionPrefixedBytes over the generated TransactionLogKey/TransactionLogValue
// classes of kafka-transaction-coordinator-4.4.0.jar; the generating program is in the comment
// of each case).

#include "broker/txn/record_codec.h"

#include <gtest/gtest.h>

#include <string>

namespace spool::broker::txn {
namespace {

bytes unhex(std::string_view h) {
    bytes out;
    for (size_t i = 0; i + 1 < h.size(); i += 2) {
        out.push_back(static_cast<uint8_t>(std::stoi(std::string(h.substr(i, 2)), nullptr, 16)));
    }
    return out;
}

// new TransactionLogKey().setTransactionalId("txn-app-1"), version 0.
TEST(txn_record_codec, test_key_matches_kafka) {
    auto kafka = unhex("0000000974786e2d6170702d31");
    EXPECT_EQ(encode_key("txn-app-1"), kafka);
    auto id = decode_key(kafka);
    ASSERT_TRUE(id);
    EXPECT_EQ(id.value(), "txn-app-1");
}

// Ongoing (status 1), pid 4000 epoch 3, timeout 60000, orders [0,2] and payments [1],
// lastUpdate 1700000001000, start 1700000000000, version 1.
TEST(txn_record_codec, test_ongoing_value_matches_kafka) {
    auto kafka = unhex(
        "00010000000000000fa000030000ea600103076f726465727303000000000000000200097061796d656e7473"
        "0200000001000000018bcfe56be80000018bcfe5680000");
    txn_metadata m;
    m.transactional_id = "t";
    m.producer_id = 4000;
    m.producer_epoch = 3;
    m.timeout_ms = 60000;
    m.state = txn_state::ongoing;
    m.partitions = {{"orders", 0}, {"orders", 2}, {"payments", 1}};
    m.last_update_ms = 1700000001000;
    m.start_ms = 1700000000000;
    EXPECT_EQ(encode_value(m), kafka);
    auto back = decode_value("t", kafka);
    ASSERT_TRUE(back);
    EXPECT_EQ(back.value(), m);
}

// Empty (null partitions), pid 4001 epoch 0, PreviousProducerId 4000 (tag 0), start -1.
TEST(txn_record_codec, test_empty_value_with_previous_producer_matches_kafka) {
    auto kafka = unhex(
        "00010000000000000fa100000000ea6000000000018bcfe56fd0ffffffffffffffff0100080000000000000f"
        "a0");
    txn_metadata m;
    m.transactional_id = "t";
    m.producer_id = 4001;
    m.previous_producer_id = 4000;
    m.producer_epoch = 0;
    m.timeout_ms = 60000;
    m.state = txn_state::empty;
    m.last_update_ms = 1700000002000;
    m.start_ms = -1;
    EXPECT_EQ(encode_value(m), kafka);
    auto back = decode_value("t", kafka);
    ASSERT_TRUE(back);
    EXPECT_EQ(back.value(), m);
}

// CompleteCommit with an empty (not null) partition array and ClientTransactionVersion 1 (tag 2).
TEST(txn_record_codec, test_complete_value_with_client_version_matches_kafka) {
    auto kafka = unhex(
        "00010000000000000fa000030000ea6004010000018bcfe573b80000018bcfe568000102020001");
    txn_metadata m;
    m.transactional_id = "t";
    m.producer_id = 4000;
    m.producer_epoch = 3;
    m.timeout_ms = 60000;
    m.state = txn_state::complete_commit;
    m.last_update_ms = 1700000003000;
    m.start_ms = 1700000000000;
    m.client_txn_version = 1;
    EXPECT_EQ(encode_value(m), kafka);
    auto back = decode_value("t", kafka);
    ASSERT_TRUE(back);
    EXPECT_EQ(back.value(), m);
}

TEST(txn_record_codec, test_truncated_or_unknown_versions_are_refused) {
    auto kafka = unhex("00010000000000000fa000030000ea6004010000018bcfe573b8");
    EXPECT_FALSE(decode_value("t", kafka));
    EXPECT_FALSE(decode_value("t", unhex("0002")));
    EXPECT_FALSE(decode_key(unhex("0001000174")));
    // An offsets-topic key (version 1) is not a transaction key.
    EXPECT_FALSE(decode_key(unhex("000100016700017400000000")));
}

}  // namespace
}  // namespace spool::broker::txn
