#include "protocol/records/batch_parser.h"
#include "protocol/records/tests/rdkafka_capture.h"
#include "protocol/records/tests/sample_records.h"

#include <gtest/gtest.h>

namespace spool::protocol::records {
namespace {

class librdkafka_live : public ::testing::TestWithParam<std::string> {};

// Produces through the installed librdkafka right now, so a client upgrade that changes its
// encoding shows up here even before the checked-in captures are refreshed.
TEST_P(librdkafka_live, test_batches_produced_now_decode_to_the_original_records) {
    std::string error;
    auto bytes = testing::capture_librdkafka_batches(GetParam(), error);
    ASSERT_FALSE(bytes.empty()) << error;
    validate_options log;
    log.origin = batch_origin::log;
    decompress_buffer scratch;
    auto summary = validate_batches(bytes, log, scratch);
    ASSERT_TRUE(summary) << summary.error().message();
    EXPECT_EQ(to_string(summary.value().first.codec()), GetParam());
    EXPECT_GE(summary.value().first.producer_id, 0) << "idempotent producer fields expected";
    EXPECT_EQ(testing::decode_all(bytes, log), testing::sample_records());
}

INSTANTIATE_TEST_SUITE_P(codecs, librdkafka_live, ::testing::ValuesIn(testing::capture_codecs()),
                         [](const auto& info) { return info.param; });

struct encode_case {
    compression codec;
    bool xerial;
    std::string name;
};

class librdkafka_reads_our_batches : public ::testing::TestWithParam<encode_case> {};

// The other direction: batches from our builder, several concatenated, read back by the
// client's own decoder with CRC checking on.
TEST_P(librdkafka_reads_our_batches, test_client_decodes_builder_batches_to_the_records) {
    auto records = testing::sample_records();
    std::vector<uint8_t> batches;
    for (size_t i = 0; i < records.size(); i += 40) {
        std::vector<testing::sample_record> part(records.begin() + i, records.begin() + i + 40);
        batch_options o;
        o.codec = GetParam().codec;
        o.codec_options.snappy_xerial = GetParam().xerial;
        auto batch = testing::build_batch(part, o);
        batches.insert(batches.end(), batch.begin(), batch.end());
    }
    std::string error;
    auto consumed = testing::consume_with_librdkafka(batches, records.size(), error);
    ASSERT_TRUE(consumed) << error;
    EXPECT_EQ(*consumed, records);
}

// Shows the cross-check has teeth: the same path refuses a batch whose CRC is wrong (the mock
// broker or the consumer's check.crcs catches it), so equal records above mean a real decode.
TEST(librdkafka_reads_our_batches, test_batch_with_a_broken_crc_does_not_come_back) {
    auto records = testing::sample_records(10);
    auto batch = testing::build_batch(records);
    batch.back() ^= 0x01;
    std::string error;
    auto consumed = testing::consume_with_librdkafka(batch, records.size(), error);
    EXPECT_TRUE(!consumed || consumed->empty());
}

INSTANTIATE_TEST_SUITE_P(codecs, librdkafka_reads_our_batches,
                         ::testing::Values(encode_case{compression::none, false, "none"},
                                           encode_case{compression::gzip, false, "gzip"},
                                           encode_case{compression::snappy, false, "snappy"},
                                           encode_case{compression::snappy, true, "snappy_xerial"},
                                           encode_case{compression::lz4, false, "lz4"},
                                           encode_case{compression::zstd, false, "zstd"}),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace spool::protocol::records
